"""Phrasing families the blind set (tests/curator/blind/) showed the curator missing.

Each test is a kind of statement, not a sentence: the sentences here are new, made up for the
test, and neither from the corpus nor from the blind set (which stays a measurement). Kinds:
preferences said in passing, project conventions stated as facts, the remember/from-now-on
wrapper kept out of the record text, a rule next to a pasted credential, a closing sign-off
(no record; the turn before it stays the open work), and a finding the user acknowledges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import FORMATS, curate_session
from wardian.curator.rules import match_rules, rewrite
from wardian.curator.signals import is_sign_off


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> str:
    return "\n".join(op["text"] for op in _saved(ops)).lower()


# --- preferences said in passing ------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "oh and I really like early returns over nested ifs",
        "I hate it when log lines have no request id",
        "I'd rather you kept the migrations reversible",
        "fwiw I'm not a fan of one-letter variable names",
        "I love docstrings that show an example call",
    ],
)
def test_preference_said_in_passing_is_a_rule(sentence: str) -> None:
    assert [r.category for r in match_rules(sentence)][:1] == ["convention"], sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "I like it",
        "I like that, thanks",
        "I like this version better",
        "I'd rather not say",
        "I love how fast that was",
        "I hate to ask, but can you rerun it",
    ],
)
def test_reaction_to_the_work_is_no_preference(sentence: str) -> None:
    assert not [r for r in match_rules(sentence) if r.name == "stated-preference"], sentence


@pytest.mark.parametrize("fmt", FORMATS)
def test_passing_preference_is_saved_in_third_person(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Can you tidy up the retry helper? I'd prefer you keep public names stable "
                 "so downstream code does not break."),
        ("assistant", "Tidied it without renaming anything public."),
    ], tmp_path)
    texts = _texts(ops)
    assert "public names" in texts
    assert "i'd" not in texts and "the user would" in texts


# --- project conventions stated as facts ----------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "in this codebase, feature flags live in flags.yaml",
        "For our service the ports are always configured through env vars",
        "here we squash every PR into one commit",
        "our convention is one migration per pull request",
        "the house style is British spelling in docs",
    ],
)
def test_project_convention_stated_as_fact_is_a_rule(sentence: str) -> None:
    assert "convention" in [r.category for r in match_rules(sentence)], sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "fix the typo in this repo's readme",
        "in this project there is a bug in the parser",
        "is it slow in this app",
    ],
)
def test_task_or_report_about_the_project_is_no_convention(sentence: str) -> None:
    assert not [r for r in match_rules(sentence) if r.name == "project-convention"], sentence


@pytest.mark.parametrize("fmt", FORMATS)
def test_rule_after_a_task_lead_in_is_saved_without_it(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Rename that column: in this repo table names are singular and snake_case."),
        ("assistant", "Renamed it to order_line."),
    ], tmp_path)
    texts = _texts(ops)
    assert "singular" in texts and not texts.startswith("rename that column")


# --- the request to remember is not the record ----------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "start"),
    [
        ("Please remember that staging resets every night at 2am.", "Staging resets"),
        ("From now on, tag releases with a leading v.", "Tag releases"),
        ("going forward run the slow suite only on CI", "Run the slow suite"),
        ("remember to regenerate the client after changing the schema", "Regenerate the client"),
    ],
)
def test_remember_wrapper_is_dropped_from_the_text(sentence: str, start: str) -> None:
    assert rewrite(sentence, "explicit").startswith(start), rewrite(sentence, "explicit")


# --- a rule said next to a credential -------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_rule_beside_a_pasted_token_is_kept_without_the_token(fmt: str, tmp_path: Path) -> None:
    token = "tok_prod_Q7mV2xL9pR4sT8wZ1bN6"
    ops = curate_session(fmt, [
        ("user", f"The deploy token is {token}. From now on always deploy from the release "
                 "branch, never from a laptop."),
        ("assistant", "Deployed from the release branch."),
    ], tmp_path)
    saved = _saved(ops)
    assert any("release branch" in op["text"].lower() for op in saved)
    assert not any(token in op["text"] or token in op["evidence"] for op in saved)


# --- signing off ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "ok I have to run, let's pick this up on Monday",
        "calling it a day, we'll resume tomorrow",
        "let's stop here for now",
        "I gotta head out",
    ],
)
def test_sign_off_is_recognised(text: str) -> None:
    assert is_sign_off(text)


@pytest.mark.parametrize(
    "text",
    ["stop here and add a test first", "can we continue tomorrow?",
     "we will finish the parser later this sprint and then ship the new lexer with it, "
     "which needs the grammar tests to pass on every platform first"],
)
def test_work_request_is_no_sign_off(text: str) -> None:
    assert not is_sign_off(text)


@pytest.mark.parametrize("fmt", ("claude", "codex"))
def test_sign_off_leaves_the_task_list_as_the_checkpoint(fmt: str, tmp_path: Path) -> None:
    name, key, item = (("TodoWrite", "todos", "content") if fmt == "claude"
                       else ("update_plan", "plan", "step"))
    ops = curate_session(fmt, [
        ("user", "convert the settings loader from JSON to TOML"),
        ("tool", name, {key: [{item: "Parse TOML settings", "status": "completed"},
                              {item: "Migrate existing JSON files", "status": "pending"}]}),
        ("assistant", "The loader reads TOML now; migrating the old files is next."),
        ("user", "calling it a day, we'll resume tomorrow"),
    ], tmp_path)
    current = [op for op in _saved(ops) if op["kind"] == "current"]
    assert len(current) == 1 and "migrate existing json files" in current[0]["text"].lower()
    assert "resume tomorrow" not in _texts(ops) and "calling it a day" not in _texts(ops)


# --- a finding the user acknowledges --------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_acknowledged_finding_is_a_lesson(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "why do the cron jobs run an hour late in summer?"),
        ("assistant", "The scheduler ignores the server time zone unless TZ is set in the "
                      "unit file, so it runs on UTC all year. I set TZ in the unit file."),
        ("user", "nice find, bear that in mind for the other timers too"),
    ], tmp_path)
    assert "unless tz is set" in _texts(ops)


@pytest.mark.parametrize("fmt", FORMATS)
def test_finding_nobody_acknowledges_is_not_saved(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "why do the cron jobs run an hour late in summer?"),
        ("assistant", "The scheduler ignores the server time zone unless TZ is set in the "
                      "unit file, so it runs on UTC all year."),
        ("user", "hmm, let me check the unit files on the other host first"),
    ], tmp_path)
    assert "unless tz is set" not in _texts(ops)


# --- second blind set: more families (fresh sentences again) --------------------------------


@pytest.mark.parametrize(
    ("sentence", "category"),
    [
        ("Add this to AGENTS.md: regenerate the lockfile after touching dependencies", "explicit"),
        ("rebase onto main before each push", "convention"),
        ("so nothing in the handlers should block the event loop", "convention"),
        ("no migration may drop a column in the same release", "convention"),
        ("heads up, the exporter requires libvips 8.14 or newer", "lesson"),
        ("the docs build only works with sphinx 7+", "lesson"),
        ("across my repos I keep a CHANGELOG at the root", "convention"),
        ("we are a Go shop, so write the tool in Go", "convention"),
        ("secrets come from the vault agent, never from env files", "correction"),
    ],
)
def test_more_rule_families(sentence: str, category: str) -> None:
    assert category in [r.category for r in match_rules(sentence)], sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "this needs a second look",
        "no, the other file",
        "the page loads in 3 seconds, not 5",
        "nothing happened when I clicked it",
        "it needs 2 more tests",
    ],
)
def test_near_misses_of_those_families_are_no_rules(sentence: str) -> None:
    names = {r.name for r in match_rules(sentence)}
    assert not names & {"version-requirement", "cross-project", "contrast", "prohibition",
                        "explicit-memory"}, (sentence, names)


@pytest.mark.parametrize("fmt", FORMATS)
def test_instruction_file_request_saves_the_rule_not_the_request(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "Write this into AGENTS.md: feature branches are named after the ticket id."),
        ("assistant", "Added it to AGENTS.md."),
    ], tmp_path)
    texts = _texts(ops)
    assert texts.startswith("feature branches are named after the ticket id")


@pytest.mark.parametrize("fmt", FORMATS)
def test_request_the_agent_reports_half_done_is_a_checkpoint(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Add CSV and XLSX export to the reports page."),
        ("assistant", "I've added the CSV export button. XLSX export is still missing; it needs "
                      "a spreadsheet library."),
    ], tmp_path)
    current = [op for op in _saved(ops) if op["kind"] == "current"]
    assert len(current) == 1 and "xlsx" in current[0]["text"].lower()


@pytest.mark.parametrize("fmt", FORMATS)
def test_request_the_agent_reports_done_is_no_checkpoint(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Add CSV and XLSX export to the reports page."),
        ("assistant", "I've added both export buttons and a test for each."),
    ], tmp_path)
    assert [op for op in _saved(ops) if op["kind"] == "current"] == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_reply_naming_one_of_two_alternatives_is_a_decision(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "We need a job queue for the thumbnail worker."),
        ("assistant", "I can build it on the database we have or add a broker. Do you want "
                      "the queue on Postgres or RabbitMQ?"),
        ("user", "Postgres, we already run it and I don't want another service."),
    ], tmp_path)
    texts = _texts(ops)
    assert 'chose "postgres"' in texts and "rabbitmq?" in texts


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("Should I keep going or stop here?", "keep going"),
        ("Shall I open the PR now or later?", "later"),
        ("Do you want the queue on Postgres or RabbitMQ?", "hmm, not sure yet"),
        ("Do you want the queue on Postgres or RabbitMQ?", "ok"),
    ],
)
def test_reply_that_picks_no_named_alternative_is_no_decision(
    question: str, reply: str, tmp_path: Path
) -> None:
    ops = curate_session("claude", [
        ("user", "We need a job queue for the thumbnail worker."),
        ("assistant", question),
        ("user", reply),
    ], tmp_path)
    assert "chose" not in _texts(ops)
