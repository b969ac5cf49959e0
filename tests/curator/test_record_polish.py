"""How saved records read: kinds of badly-reading record text, each on made-up sessions.

Every session here is invented for the kind it tests (nothing comes from the corpus): a
long checkpoint is cut at a sentence or clause end, never mid-sentence; a checkpoint says a
state and never ends in a question mark; a second subject glued onto a dictated clause
starts a clause of its own; a short prohibition keeps the sentence saying what holds
instead; a cross-project statement names "all projects" once, without a second "the user";
a plan-part label reads as a phrase and a rewritten "before you X" agrees with its new
subject; a typo that is an English word is left as written. The evidence always stays the
user's words verbatim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import FORMATS, curate_session
from wardian.curator import curate
from wardian.curator.rules import MAX_MEMORY_TEXT_CHARS, rewrite


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> list[str]:
    return [op["text"] for op in _saved(ops)]


def _run(*items: tuple[str, str, str]) -> list[dict[str, Any]]:
    messages = [
        {"seq": seq, "role": role, "kind": kind, "text": text, "meta": {}}
        for seq, (role, kind, text) in enumerate(items)
    ]
    payload = {"messages": messages, "records": [], "max_changes": 10, "workspace": "/repo"}
    return list(curate(payload)["operations"])


_LONG_WORK = (
    'Working on **imp-7** - "Add the CSV importer and its retry queue to the billing '
    'module". Rewrote `importer.py` with a bounded queue and exponential backoff but ran '
    "into two failures: 1. **Type error** at line 88: `expected str, got bytes` in the "
    "header parser, which reads the first row as raw bytes when the file starts with a "
    "byte order mark 2. the queue test hangs on the second retry because the fake clock "
    "never advances past the first deadline and the worker keeps waiting for it"
)


def test_long_checkpoint_is_cut_at_a_sentence_or_clause_end() -> None:
    summary = (
        "<summary>\n1. Primary Request and Intent:\n   Import invoices.\n\n"
        f"8. Current Work:\n   {_LONG_WORK}\n\n9. Optional Next Step:\n   Fix both.\n</summary>"
    )
    ops = _run(
        ("user", "compaction", "Your task is to create a detailed summary of the conversation."),
        ("assistant", "text", summary),
    )
    [op] = _saved(ops)
    assert op["kind"] == "current" and op["evidence"] in summary
    text = op["text"]
    assert len(text) <= MAX_MEMORY_TEXT_CHARS and text.endswith("."), text
    assert "…" not in text, text  # a whole sentence, not a word cut
    assert text.endswith("ran into two failures."), text  # before the list, not inside it


def test_cap_falls_back_to_a_word_cut_only_without_a_boundary() -> None:
    words = " ".join(f"word{i}" for i in range(80))
    text = rewrite(words, "convention")
    assert len(text) <= MAX_MEMORY_TEXT_CHARS and text.endswith("…"), text
    # a boundary too early to keep half the cap is no boundary: the word cut keeps more
    early = rewrite("Short start. " + words, "convention")
    assert early.endswith("…") and len(early) > MAX_MEMORY_TEXT_CHARS // 2, early


@pytest.mark.parametrize("fmt", FORMATS)
def test_open_issue_guessing_its_cause_is_a_state_not_a_question(
    fmt: str, tmp_path: Path
) -> None:
    said = "the export button still does not work in Firefox (maybe the popup blocker eats it)?"
    ops = curate_session(fmt, [
        ("user", "add a CSV export to the orders page"),
        ("assistant", "Added the export button."),
        ("user", said),
        ("assistant", "Looking into it."),
    ], tmp_path)
    current = [op for op in _saved(ops) if op["kind"] == "current"]
    assert current, ops
    for op in current:
        assert not op["text"].rstrip().endswith("?"), op["text"]
    assert any(op["evidence"] == said and "popup blocker" in op["text"] for op in current), ops


def test_open_issue_asked_as_a_question_is_recorded_as_the_open_question() -> None:
    ops = _run(
        ("user", "text", "add a CSV export to the orders page"),
        ("assistant", "text", "Added the export button."),
        ("user", "text", "why does the export button still not work in Firefox?"),
        ("assistant", "text", "Looking into it."),
    )
    for op in _saved(ops):
        if op["kind"] == "current":
            assert not op["text"].endswith("?"), op["text"]
            assert op["evidence"] == "why does the export button still not work in Firefox?"


def test_offered_options_worded_as_questions_do_not_end_the_record_in_one() -> None:
    offer = (
        "Before I scaffold, two things:\n\n"
        "1. **Runtime**: Deno or Bun?\n"
        "2. **Layout**: one package or a workspace?\n\n"
        "Which do you prefer?"
    )
    ops = _run(
        ("user", "text", "scaffold the new service"),
        ("assistant", "text", offer),
    )
    [op] = [op for op in _saved(ops) if op["kind"] == "current"]
    assert "?)" not in op["text"] and "Deno or Bun" in op["text"], op["text"]


_DICTATED = (
    "ok so the plan is we will put the new pricing page on staging to review others will "
    "review it and the payment provider will be stripe so that is how we will launch it "
    "then we will add the coupon codes which the sales team keeps asking about and we will "
    "also move invoices to a separate job later"
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_second_subject_in_dictation_starts_its_own_clause(
    fmt: str, tmp_path: Path
) -> None:
    from wardian.curator.segments import split_segments

    clauses = [seg.text for seg in split_segments(1, _DICTATED)]
    assert "we will put the new pricing page on staging to review" in clauses, clauses
    assert "others will review it" in clauses, clauses  # one idea per clause
    # a dictated plan for later is not a decision: nothing stable comes of it
    ops = curate_session(fmt, [("user", _DICTATED), ("assistant", "Got it.")], tmp_path)
    assert not [op for op in _saved(ops) if op["kind"] == "stable"], _texts(ops)
    for op in _saved(ops):
        assert op["evidence"] in _DICTATED


def test_a_subject_after_a_joining_word_stays_in_its_clause() -> None:
    said = (
        "we will put the pricing page on staging where i hope others will review it before "
        "the launch and the payment provider will be stripe then we will add the coupon codes "
        "which the sales team keeps asking about and we will move invoices to a separate job "
        "later this quarter"
    )
    from wardian.curator.rules import rewrite
    from wardian.curator.segments import split_segments

    first = split_segments(1, said)[0].text
    assert first.endswith("i hope others will review it before the launch"), first
    assert "the user hopes others will review it" in rewrite(first, "convention")


@pytest.mark.parametrize("fmt", FORMATS)
def test_short_prohibition_keeps_what_holds_instead(fmt: str, tmp_path: Path) -> None:
    said = (
        "No, don't round the totals. Amounts in the ledger stay exact to the cent, the "
        "auditors reconcile them by hand."
    )
    ops = curate_session(fmt, [
        ("user", "the totals in the report look off"),
        ("assistant", "I rounded the totals to whole euros."),
        ("user", said),
        ("assistant", "Reverted."),
    ], tmp_path)
    [op] = [op for op in _saved(ops) if "round" in op["text"]]
    assert op["text"].startswith("Do not round the totals; amounts in the ledger stay exact")
    assert op["evidence"] == said


def test_prohibition_with_a_pronoun_sentence_after_it() -> None:
    said = "Never cache the session token. It expires after ten minutes on the gateway."
    [text] = _texts(_run(("user", "text", said), ("assistant", "text", "Ok.")))
    assert text == "Never cache the session token; it expires after ten minutes on the gateway."


@pytest.mark.parametrize(
    "after",
    [
        "Now add the endpoint for refunds.",  # the next task, not what holds
        "This is the last thing for today.",  # talk about the session
        "Is the schema file generated?",  # a question
    ],
)
def test_prohibition_is_not_joined_to_an_unrelated_sentence(after: str) -> None:
    said = f"Don't touch the migrations. {after}"
    texts = _texts(_run(("user", "text", said), ("assistant", "text", "Ok.")))
    assert "Do not touch the migrations." in texts, texts


@pytest.mark.parametrize("fmt", FORMATS)
def test_cross_project_statement_names_the_projects_once(fmt: str, tmp_path: Path) -> None:
    said = "In all my repos I want tabs for indentation, never spaces."
    ops = curate_session(fmt, [("user", said), ("assistant", "Noted.")], tmp_path)
    [op] = _saved(ops)
    assert op["scope"] == "agent" and op["evidence"] == said
    assert op["text"] == "In all repos, the user wants tabs for indentation, never spaces."


@pytest.mark.parametrize(
    ("said", "text"),
    [
        ("phase 2 - ask me to confirm before you delete anything",
         "In phase 2, ask the user to confirm before the agent deletes anything."),
        ("tell me before you push to the release branch",
         "Tell the user before the agent pushes to the release branch."),
        ("always ask me before you try a new library",
         "Always ask the user before the agent tries a new library."),
        ("ask me before you commit anything", "Ask the user before the agent commits anything."),
    ],
)
def test_plan_part_label_and_verb_agreement(said: str, text: str) -> None:
    assert _texts(_run(("user", "text", said), ("assistant", "text", "Ok."))) == [text]


def test_a_typo_that_is_an_english_word_is_left_as_written() -> None:
    # rare words with a far more common neighbour one edit away: correcting by frequency
    # would turn "newer" into "never" and "prose" into "prove" (see `spelling`)
    said = "always write the changelog in plain prose, the build needs node 22 or newer"
    [op] = _saved(_run(("user", "text", said), ("assistant", "text", "Ok.")))
    assert "plain prose" in op["text"] and "or newer" in op["text"], op["text"]


_READY = (
    "The export fix is ready. Changes made to `export.py`:\n\n"
    "1. **Header row**: written once instead of once per chunk\n"
    "2. **Encoding**: files are written as UTF-8 with a BOM so spreadsheets open them\n\n"
    "Should I commit these changes?"
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_go_ahead_checkpoint_names_what_waits_to_ship(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "the CSV export writes the header twice, fix it"),
        ("assistant", _READY),
    ], tmp_path)
    [op] = [op for op in _saved(ops) if op["kind"] == "current"]
    assert op["evidence"] == "Should I commit these changes?"
    assert op["text"] == (
        'Awaiting the user\'s answer to "Should I commit these changes?" (the export fix is '
        "ready; changed: header row, encoding)."
    )


def test_go_ahead_checkpoint_without_a_list_names_only_the_status() -> None:
    ops = _run(
        ("user", "text", "the CSV export writes the header twice, fix it"),
        ("assistant", "text", "The export fix is ready and the tests pass. Want me to push it?"),
    )
    [op] = [op for op in _saved(ops) if op["kind"] == "current"]
    assert op["text"].endswith("(the export fix is ready and the tests pass).")
    assert "changed:" not in op["text"]


def test_a_long_list_of_changes_is_named_by_its_first_items() -> None:
    items = "\n".join(f"- Renamed the `step{i}` helper to `stage{i}`" for i in range(1, 7))
    ops = _run(
        ("user", "text", "rename the step helpers to stage"),
        ("assistant", "text", f"Done with the rename.\n\n{items}\n\nShall I commit the renames?"),
    )
    [op] = [op for op in _saved(ops) if op["kind"] == "current"]
    assert "changed: renamed the step1 helper to stage1," in op["text"], op["text"]
    assert "and 2 more)" in op["text"] and "stage5" not in op["text"], op["text"]
