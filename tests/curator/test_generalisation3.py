"""Phrasing families the third blind set (tests/curator/blind3/) showed the curator missing.

As in test_generalisation.py, each test is a kind of statement with sentences made up for the
test, neither from the corpus nor from the blind sets (which stay measurements).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import FORMATS, curate_session
from wardian.curator.rules import agent_scoped, match_rules, rewrite
from wardian.curator.signals import is_sign_off


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> str:
    return "\n".join(op["text"] for op in _saved(ops)).lower()


# --- a password stated in words -------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_password_the_user_asks_to_remember_is_never_saved(fmt: str, tmp_path: Path) -> None:
    value = "Heron" + "-Basin-" + "5531"
    ops = curate_session(fmt, [
        ("user", f"please remember that the root password of the lab router is {value}. "
                 "now reboot the lab router"),
        ("assistant", "Rebooted the lab router."),
    ], tmp_path)
    assert not any(value in op["text"] or value in op["evidence"] for op in _saved(ops))


# --- "no, not X - Y": a correction naming what was wrong and what holds ---------------------


@pytest.mark.parametrize(
    ("sentence", "start", "replaced"),
    [
        ("no, not moment.js - we format dates with Luxon in this app",
         "We format dates with Luxon", "(not moment.js)"),
        ("nope, not the staging bucket, test uploads go to the scratch bucket",
         "Test uploads go to the scratch bucket", "(not the staging bucket)"),
        ("no not tabs; the style guide here wants four spaces",
         "The style guide here wants four spaces", "(not tabs)"),
    ],
)
def test_no_not_x_then_y_is_a_correction_saying_what_holds(
    sentence: str, start: str, replaced: str
) -> None:
    assert "correction" in [r.category for r in match_rules(sentence)], sentence
    text = rewrite(sentence, "correction")
    assert text.startswith(start) and replaced in text, text


@pytest.mark.parametrize(
    "sentence",
    ["no, not yet, wait for the build", "no, not that one, the other file please",
     "nope, not now", "no, not really sure what you mean"],
)
def test_no_not_without_a_replacement_is_no_correction(sentence: str) -> None:
    assert not [r for r in match_rules(sentence) if r.name == "correction-marker"], sentence


@pytest.mark.parametrize("fmt", FORMATS)
def test_mid_task_no_not_x_is_saved_for_the_workspace(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Show the order dates in the customer's format."),
        ("assistant", "I added moment.js and formatted the dates with it."),
        ("user", "no, not moment.js - this app formats dates with Luxon everywhere, swap it"),
        ("assistant", "Swapped to Luxon."),
    ], tmp_path)
    saved = _saved(ops)
    assert len(saved) == 1 and "luxon" in saved[0]["text"].lower(), saved
    assert saved[0]["text"].startswith("This app formats dates with Luxon")
    assert saved[0]["scope"] == "workspace" or saved[0]["scope"].get("kind") == "workspace"


@pytest.mark.parametrize(
    ("sentence", "agent"),
    [
        ("this service talks HTTP through httpx everywhere", False),
        ("dates stay in UTC everywhere in the UI", False),
        ("I use British spelling everywhere", True),
        ("in all my projects commit messages are imperative", True),
    ],
)
def test_everywhere_bounded_by_the_project_is_workspace_scope(sentence: str, agent: bool) -> None:
    assert agent_scoped(sentence) is agent


# --- a choice by position: the record names what was chosen ---------------------------------

_INLINE_OFFER = (
    "There are three ways: 1) a cron job on the web host, cheap but tied to that box; "
    "2) a managed scheduler from the cloud provider; 3) a worker that sleeps between runs, "
    "which needs its own process."
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ordinal_pick_after_a_follow_up_question_names_the_option(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "The nightly digest mail needs a scheduler. What can we use?"),
        ("assistant", _INLINE_OFFER),
        ("user", "what does option 2 cost per month roughly?"),
        ("assistant", "A few cents: it bills per invocation and we would run it once a day."),
        ("user", "fine, cheap enough and we want off that box anyway. we'll go with the "
                 "second one."),
    ], tmp_path)
    texts = _texts(ops)
    assert "managed scheduler" in texts, texts
    assert "second one" not in texts.replace("chose option 2", "")


@pytest.mark.parametrize("fmt", FORMATS)
def test_reply_opening_on_a_letter_names_the_option(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "How should the importer report bad rows?"),
        ("assistant", "A) write them to a rejects.csv next to the input; B) stop at the first "
                      "bad row; C) log a warning and skip them."),
        ("user", "A. the data team fixes the rejects by hand afterwards."),
    ], tmp_path)
    texts = _texts(ops)
    assert "rejects.csv" in texts and "option a" in texts, texts


@pytest.mark.parametrize("fmt", FORMATS)
def test_go_with_a_letter_is_one_record_naming_the_option(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Where do we keep feature flags?"),
        ("assistant", "(A) a flags table in the main database, or (B) a flags.toml file "
                      "deployed with the app. A can change without a deploy."),
        ("user", "Changes go through review anyway. Let's go with B; a table is overkill."),
    ], tmp_path)
    saved = _saved(ops)
    assert len(saved) == 1 and "flags.toml" in saved[0]["text"], saved


@pytest.mark.parametrize(
    "reply",
    ["ok, take the first step and show me the diff",
     "good to know. I will pick the last file myself",
     "no idea, what would you do?"],
)
def test_position_words_that_pick_no_option_decide_nothing(reply: str, tmp_path: Path) -> None:
    ops = curate_session("claude", [
        ("user", "The nightly digest mail needs a scheduler. What can we use?"),
        ("assistant", _INLINE_OFFER),
        ("user", reply),
    ], tmp_path)
    assert "chose" not in _texts(ops)


def test_inline_labels_out_of_order_are_no_options(tmp_path: Path) -> None:
    ops = curate_session("claude", [
        ("user", "Why did the build fail?"),
        ("assistant", "Step 2) failed after step 1) passed; see the log for 3) the cleanup."),
        ("user", "ok go with 2 then"),
    ], tmp_path)
    assert "chose" not in _texts(ops)


def test_not_x_but_y_keeps_its_own_order() -> None:
    text = rewrite("no, not in the README, but in a docs/ page of its own", "correction")
    assert text.startswith("Not in the README, but in a docs/ page"), text


# --- a terse one-word answer to an either/or question ---------------------------------------


@pytest.mark.parametrize(
    ("question", "reply", "chosen"),
    [
        ("Should the JSON keys be snake_case (user_id) or camelCase (userId)?", "snake",
         "snake_case"),
        ("Do you want the timestamps as unix-seconds (1700000000) or ISO strings?", "iso",
         "iso strings"),
        ("Do you want the timestamps as unix-seconds (1700000000) or ISO strings?", "unix.",
         "unix-seconds"),
    ],
)
def test_one_word_answer_naming_part_of_an_alternative_is_a_decision(
    question: str, reply: str, chosen: str, tmp_path: Path
) -> None:
    ops = curate_session("codex", [
        ("user", "Add the export endpoint."),
        ("assistant", f"Before I start: {question}"),
        ("user", reply),
    ], tmp_path)
    assert f'chose "{chosen}"' in _texts(ops), _texts(ops)


@pytest.mark.parametrize("reply", ["yes", "no", "py", "either"])
def test_one_word_answer_naming_no_single_alternative_decides_nothing(
    reply: str, tmp_path: Path
) -> None:
    ops = curate_session("codex", [
        ("user", "Profile the importer."),
        ("assistant", "Should I use py-spy (sampling) or py-instrument (tracing)?"),
        ("user", reply),
    ], tmp_path)
    assert "chose" not in _texts(ops)


# --- an interrupted task: the checkpoint names what is left and what it stopped on ----------


@pytest.mark.parametrize(
    "text",
    ["have to jump into a call now, we finish tomorrow",
     "sorry, need to hop on a meeting - leave it like that for now",
     "ok gotta go"],
)
def test_more_sign_offs_are_recognised(text: str) -> None:
    assert is_sign_off(text), text


@pytest.mark.parametrize(
    "text",
    ["leave it as is and add a test", "I have to leave the fixtures as they are",
     "need to run the seed script first", "we finish the importer later and then the export"],
)
def test_work_requests_with_sign_off_words_are_no_sign_off(text: str) -> None:
    assert not is_sign_off(text), text


@pytest.mark.parametrize("fmt", ("claude", "codex"))
def test_checkpoint_of_an_interrupted_task_names_the_errors_it_stopped_on(
    fmt: str, tmp_path: Path
) -> None:
    name, key, item = (("TodoWrite", "todos", "content") if fmt == "claude"
                       else ("update_plan", "plan", "step"))
    ops = curate_session(fmt, [
        ("user", "Move the image resizing from Pillow to pyvips."),
        ("tool", name, {key: [{item: "Swap the resize calls", "status": "completed"},
                              {item: "Port the EXIF rotation", "status": "in_progress"}]}),
        ("tool", "Bash", {"command": "pytest -q"}),
        ("result", "FAILED tests/test_thumbs.py::test_rotated - AssertionError\n1 failed"),
        ("assistant", "Resizing runs on pyvips. test_rotated still fails: thumbnails of "
                      "portrait photos come out sideways because autorotate is not applied "
                      "yet."),
        ("user", "gotta run to a meeting, we finish tomorrow"),
    ], tmp_path)
    current = [op for op in _saved(ops) if op["kind"] == "current"]
    assert len(current) == 1, ops
    text = current[0]["text"]
    assert "Port the EXIF rotation" in text and "test_rotated still fails" in text, text
    assert "meeting" not in text


@pytest.mark.parametrize("fmt", ("claude", "codex"))
def test_agent_narrating_its_next_move_is_no_stopped_on_report(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "Build the release archive for the docs site."),
        ("assistant", "The zip step failed on this runner, so I'm switching to tar and "
                      "building the archive again."),
    ], tmp_path)
    assert "stopped on" not in _texts(ops)


def test_compaction_checkpoint_names_the_listed_errors(tmp_path: Path) -> None:
    summary = (
        "<summary>\n1. Primary Request and Intent:\n   Speed up the search page.\n\n"
        "8. Current Work:\n   Working on **srch-2**: added the trigram index to `search.sql` "
        "but the migration hit two problems:\n\n   1. **Lock timeout** on `documents`: "
        "`canceling statement due to lock timeout`\n   ```sql\n   CREATE INDEX ...\n   ```\n\n"
        "   2. **Test failure** in test_ranking: the expected order changed for ties.\n\n"
        "9. Optional Next Step:\n   Retry with CONCURRENTLY.\n</summary>"
    )
    ops = curate_session("claude", [
        ("user", "Your task is to create a detailed summary of the conversation so far."),
        ("assistant", summary),
    ], tmp_path)
    current = [op for op in _saved(ops) if op["kind"] == "current"]
    assert len(current) == 1 and current[0]["evidence"] in summary
    text = current[0]["text"]
    assert "Lock timeout" in text and "Test failure in test_ranking" in text, text
    assert "CREATE INDEX" not in text


# --- dictation: "then" for "than", fillers, two requests in one breath ---------------------

_DICTATED = (
    "ok so what I need is the report page to load faster and um when you cache the results "
    "cache them per tenant rather then per user because tenants share dashboards and also "
    "never log the raw query string those contain customer names and then can you look at "
    "why the export test is flaky on mondays"
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_dictated_run_on_keeps_each_rule_apart_and_says_than(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", _DICTATED),
        ("assistant", "Cached per tenant, removed the query logging; the export test fails "
                      "when the week starts on a holiday, fixed."),
    ], tmp_path)
    saved = _saved(ops)
    texts = [op["text"] for op in saved]
    assert any("per tenant rather than per user" in t for t in texts), texts
    assert any("never log the raw query string" in t.lower() for t in texts), texts
    assert not any("tenant" in t and "query string" in t for t in texts), texts
    assert not any(t.lower().startswith(("um", "and um")) or " um " in t for t in texts), texts


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("and for this repo always you write the changelog entry first",
         "always the agent writes the changelog entry first"),
        ("have you write the summary", "Have the agent write the summary"),
        ("um when you do the export do it per region", "When the agent does the export"),
    ],
)
def test_rewritten_subject_agrees_with_its_verb(sentence: str, expected: str) -> None:
    assert expected in rewrite(sentence, "convention"), rewrite(sentence, "convention")


# --- preferences said in passing inside a long request --------------------------------------

_LONG_REQUEST = (
    "Can you write the importer for the supplier price lists, it reads the CSV from the "
    "inbox folder, maps the columns to our product ids and writes one row per product into "
    "the prices table with the date it was valid from - also I much prefer small pure "
    "functions over one big class for this kind of thing, and send the amounts to the "
    "ledger as integer cents, the ledger accepts nothing else."
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_preferences_inside_a_long_request_are_each_saved(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", _LONG_REQUEST),
        ("assistant", "Wrote importer.py with four small functions and a test per function."),
    ], tmp_path)
    texts = [op["text"] for op in _saved(ops)]
    assert any(t.startswith("The user prefers small pure functions") for t in texts), texts
    assert any("integer cents" in t and "accepts nothing else" in t for t in texts), texts
    assert not any("supplier price lists" in t for t in texts), texts


@pytest.mark.parametrize(
    "sentence",
    [
        "write the ids as strings, the mobile client parses nothing else",
        "keep the export in UTF-8; the old mainframe only accepts that",
        "use port 8443 for it, our proxy only handles that one",
    ],
)
def test_instruction_with_the_constraint_that_forces_it_is_a_rule(sentence: str) -> None:
    assert "convention" in [r.category for r in match_rules(sentence)], sentence


@pytest.mark.parametrize(
    "sentence",
    ["the parser accepts only JSON right now?", "it reads only the first line",
     "the tool takes only a minute"],
)
def test_a_description_of_what_a_tool_does_is_no_constraint_rule(sentence: str) -> None:
    assert "consumer-constraint" not in [r.name for r in match_rules(sentence)], sentence


def test_over_long_sentence_is_cut_after_a_comma_not_mid_phrase() -> None:
    from wardian.curator.segments import split_segments

    words = ("the mapping table has one row per supplier with its name, its country, its "
             "currency, its payment terms, the contact person and the phone number, the "
             "email address, the date we signed the contract, the date it ends, the ")
    text = words * 2 + "rest of it."
    for seg in split_segments(0, text):
        assert seg.text.endswith((",", ".")), seg.text



# --- a finding the user acknowledges after a story, adding context --------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_finding_acknowledged_mid_message_keeps_the_users_remark(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "The nightly sync skipped half the customers again. Why?"),
        ("assistant", "The sync pages through the API with a cursor that expires after 60 "
                      "seconds, so the last pages are silently dropped on a slow night. I "
                      "made it refresh the cursor."),
        ("assistant", "All customers sync now."),
        ("user", "ugh, we lost a weekend to that once. good to know, the vendor never "
                 "documents those limits."),
    ], tmp_path)
    saved = _saved(ops)
    assert len(saved) == 1, saved
    text = saved[0]["text"].lower()
    assert "cursor that expires after 60 seconds" in text and "never documents" in text, text
    assert "weekend" not in text + saved[0]["evidence"].lower()


_REQUEST_WITH_ASIDE = (
    "Could you build the page that lists the open purchase orders for a warehouse, with the "
    "supplier, the order date, the expected delivery and the total, sorted by delivery date "
    "- oh and I strongly prefer server-rendered tables over client-side grids for pages "
    "like that, they stay fast on the old scanners."
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_rule_in_passing_quotes_its_clause_not_the_request(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", _REQUEST_WITH_ASIDE),
        ("assistant", "Built /warehouses/<id>/orders as a server-rendered table."),
    ], tmp_path)
    saved = _saved(ops)
    assert len(saved) == 1, saved
    assert "server-rendered tables" in saved[0]["text"]
    assert "purchase orders" not in saved[0]["evidence"], saved[0]["evidence"]
    assert "I strongly prefer server-rendered tables" in saved[0]["evidence"]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("the cache should hold more entries then the old one", "more entries than the old"),
        ("retries must wait longer intervals then 5 seconds", "longer intervals than 5"),
        ("add more tests then run them", "more tests then run them"),
        ("use fewer workers then, the box is small", "fewer workers, the box is small"),
    ],
)
def test_then_after_a_comparative_and_its_noun_is_than(sentence: str, expected: str) -> None:
    assert expected in rewrite(sentence, "convention"), rewrite(sentence, "convention")
