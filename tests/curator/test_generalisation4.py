"""Kinds of statement the fourth unseen set (tests/curator/unseen4/) showed the curator
getting wrong or missing.

As in test_generalisation3.py, each test is a kind of statement with sentences made up for
the test, neither from the corpus nor from any held-out set (which stay measurements).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.blind import build
from tests.curator.sessions import FORMATS, curate_session
from wardian.curator import curate, signals
from wardian.curator.rules import match_rules, rewrite
from wardian.curator.signals import is_sign_off
from wardian.curator.spelling import correct
from wardian.curator.values import retired_values
from wardian.transcripts import load_transcript


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> list[str]:
    return [op["text"] for op in _saved(ops)]


def _stable(ops: list[dict[str, Any]]) -> list[str]:
    return [op["text"] for op in _saved(ops) if op["kind"] == "stable"]


# --- an answer that only declines, now ------------------------------------------------------


def _asked(tmp_path: Path, question: str, answer: str) -> list[dict[str, Any]]:
    build.OUT = tmp_path
    build.claude_code(
        "asked",
        "/srv/geocoder",
        [("user", "bump the geocoder client to the new major version"),
         ("ask", (question, answer)),
         ("assistant", "Bumped the geocoder client.")],
    )
    conv = load_transcript(tmp_path / "claude-code" / "asked.jsonl")
    return list(curate({"messages": [m.to_json() for m in conv.messages]})["operations"])


@pytest.mark.parametrize("answer", ["nope, not yet", "no not now", "no thanks, later"])
def test_an_answer_that_declines_for_now_decides_nothing(answer: str, tmp_path: Path) -> None:
    ops = _asked(tmp_path, "Should I regenerate the API snapshots as well?", answer)
    assert not _texts(ops), _texts(ops)


def test_an_answer_that_declines_and_names_what_holds_is_kept(tmp_path: Path) -> None:
    ops = _asked(tmp_path, "Should I upload it to the public bucket?",
                 "no, always the audit bucket")
    assert any("audit bucket" in t for t in _texts(ops)), _texts(ops)


# --- a value the session retires -------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rule_naming_a_value_the_user_later_retires_is_not_saved(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "add the sitemap route and open the merge request against master like always"),
        ("assistant", "Added the sitemap route."),
        ("user", "ah, master doesnt exist anymore, we renamed it last month. "
                 "merge requests go to main now"),
        ("assistant", "Opened the merge request against main."),
    ], tmp_path)
    stable = _stable(ops)
    assert not any("master" in t and "main" not in t for t in stable), stable
    assert any("main" in t for t in stable), stable


@pytest.mark.parametrize("fmt", FORMATS)
def test_moving_from_one_tool_to_another_drops_the_old_tool_rule(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "we're a poetry project so always install with poetry install --sync"),
        ("assistant", "Understood."),
        ("user", "scratch that, we switched from poetry to uv last week. uv sync for "
                 "everything from now on"),
        ("assistant", "Using uv sync."),
    ], tmp_path)
    stable = _stable(ops)
    assert not any("poetry" in t.lower() and "uv" not in t.lower() for t in stable), stable
    assert any("uv sync" in t.lower() for t in stable), stable


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rule_rejecting_the_retired_value_still_holds(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "never use poetry lock --no-update here, it rewrites the hashes"),
        ("assistant", "Noted."),
        ("user", "also we moved from poetry to uv, so use uv lock from now on"),
        ("assistant", "Using uv lock."),
    ], tmp_path)
    assert any(t.startswith("Never use poetry") for t in _stable(ops)), _stable(ops)


def test_only_values_of_a_known_class_are_retired() -> None:
    assert retired_values("I moved the helper from utils.py to io.py") == []
    assert retired_values("the old staging box is gone") == []
    gone = retired_values("we migrated the monorepo from npm to bun in spring")
    assert [(r.word, r.replacement) for r in gone] == [("npm", "bun")]
    assert [r.word for r in retired_values("release was deleted after the freeze")] == [
        "release"
    ]
    assert [r.word for r in retired_values("we no longer use mocha")] == ["mocha"]


# --- two clauses of one message --------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_prohibition_and_its_alternative_in_one_message_keep_the_prohibition(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "tag the build"),
        ("tool", "Bash", {"command": "make release"}),
        ("interrupt",),
        ("user", "pls dont run make release, it tags and uploads to the registry. only make dist"),
        ("assistant", "Running make dist instead."),
    ], tmp_path)
    stable = _stable(ops)
    assert any("not run make release" in t for t in stable), stable


# --- reminders and the team's own prohibitions ----------------------------------------------


def test_dont_forget_it_is_a_reminder_not_a_rule() -> None:
    assert not match_rules("dont forget that")
    assert not match_rules("don't forget the invoice pdf")
    assert match_rules("don't forget to regenerate the client after changing the schema")


@pytest.mark.parametrize(
    ("sentence", "rule"),
    [
        ("we dont use lazy loading in this service, every query is explicit", True),
        ("here we never squash the release branches", True),
        ("we don't need a changelog entry for this one", False),
        ("we never tested that path", False),
        ("we didn't get to the docs", False),
    ],
)
def test_the_teams_own_prohibition_is_a_rule(sentence: str, rule: bool) -> None:
    assert any(r.name == "prohibition" for r in match_rules(sentence)) is rule, sentence


@pytest.mark.parametrize("fmt", FORMATS)
def test_please_not_is_a_prohibition_said_as_do_not(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "please not put the api keys in compose.yaml, they are going in the .env file"),
        ("assistant", "Moved them to .env."),
    ], tmp_path)
    assert any(t.startswith("Do not put the api keys") for t in _stable(ops)), _stable(ops)


def test_please_not_now_is_no_prohibition() -> None:
    assert not match_rules("please not now")
    assert not match_rules("pls not yet")


# --- on purpose, placement, what the team uses ----------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "rule"),
    [
        ("the importer stays single-threaded on purpose, the vendor API rate limits us", True),
        ("the ids remain strings by design, some partners send letters", True),
        ("I broke the build on purpose to see the alert", False),
    ],
)
def test_a_thing_kept_a_way_on_purpose_is_a_rule(sentence: str, rule: bool) -> None:
    assert bool(match_rules(sentence)) is rule, sentence


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_placement_rule_with_what_it_replaces_is_saved(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "add a fixture for the refund flow"),
        ("assistant", "Added tests/fixtures/refund.json."),
        ("user", "fixtures live in a testdata folder next to each package, not under a shared "
                 "top level dir"),
        ("assistant", "Moved it to payments/testdata/refund.json."),
    ], tmp_path)
    assert any("testdata" in t for t in _stable(ops)), _stable(ops)


@pytest.mark.parametrize(
    "sentence",
    ["for dates we are using Luxon, not moment", "we're writing the specs in Gherkin, not prose"],
)
def test_what_the_team_uses_in_place_of_another_is_a_rule(sentence: str) -> None:
    assert any(r.name == "contrast" for r in match_rules(sentence)), sentence


def test_a_decision_said_with_an_adverb_is_a_decision() -> None:
    rules = match_rules("we finally decided to keep the API version in the URL path")
    assert rules and rules[0].category == "decision"


# --- work left at the end --------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_work_the_user_says_is_still_to_do_is_a_checkpoint(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "add a --since flag to the audit command"),
        ("assistant", "Added --since to `audit`; its tests pass."),
        ("user", "ok. the man page for audit still needs updating but i'm out of time, lets "
                 "continue tmrw"),
        ("assistant", "Left for tomorrow: the audit man page."),
    ], tmp_path)
    current = [op["text"] for op in _saved(ops) if op["kind"] == "current"]
    assert any("man page" in t for t in current), ops
    assert not any("continue" in t.lower() for t in _texts(ops)), ops


@pytest.mark.parametrize(
    "text",
    ["gotta stop, battery low", "have to stop now", "ok lets continue tmrw",
     "i'm out of time, we pick this up later"],
)
def test_more_sign_offs(text: str) -> None:
    assert is_sign_off(text), text


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rule_said_mid_task_leaves_the_request_before_it_open(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "port the settings screen to compose in :app and :wear"),
        ("tool", "Edit", {"file_path": "/work/app/app/src/Settings.kt", "old_string": "a",
                          "new_string": "b"}),
        ("user", "dont raise minSdk while you are at it, it stays 26 for the kiosk tablets"),
        ("tool", "Edit", {"file_path": "/work/app/app/src/SettingsScreen.kt", "old_string": "c",
                          "new_string": "d"}),
        ("assistant", ":app uses the compose settings screen now; :wear is the remaining module."),
        ("user", "have to stop now"),
    ], tmp_path)
    current = [op["text"] for op in _saved(ops) if op["kind"] == "current"]
    assert any("port the settings screen" in t for t in current), ops
    assert any("minSdk" in t for t in _stable(ops)), ops


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_closing_remark_after_finished_work_leaves_no_checkpoint(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "what does the retry decorator in jobs.py do"),
        ("assistant", "It retries the job three times with a fixed delay."),
        ("user", "k. run the formatter on jobs.py"),
        ("tool", "Bash", {"command": "ruff format jobs.py"}),
        ("assistant", "Formatted jobs.py."),
        ("user", "thx, bye"),
    ], tmp_path)
    assert not [op for op in _saved(ops) if op["kind"] == "current"], ops


def test_the_agent_naming_the_remaining_part_leaves_the_work_open() -> None:
    assert signals._LEFT_OPEN.search("The parser is ported; the lexer is the remaining part.")
    assert signals._LEFT_OPEN.search("Left for tomorrow: the release notes.")


# --- choices and verdicts on the agent's options --------------------------------------------


_OPTIONS = (
    "Two ways to run the thumbnailer:\n\n"
    "A) a background job on the worker queue\n"
    "B) inline in the upload request\n\n"
    "Which one?"
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_reason_given_with_a_choice_is_not_a_rule_of_its_own(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "the thumbnails are slow to appear"),
        ("assistant", _OPTIONS),
        ("user", "A. we never block the upload request on image work"),
        ("assistant", "Moved the thumbnailer to the worker queue."),
    ], tmp_path)
    texts = _texts(ops)
    assert len(texts) == 1 and "background job" in texts[0], texts


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_verdict_against_an_option_is_not_a_choice_of_it(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "the thumbnails are slow to appear"),
        ("assistant", _OPTIONS),
        ("user", "option B doesn't work, the upload proxy times out after ten seconds"),
        ("assistant", "Then the worker queue it is."),
    ], tmp_path)
    assert not any("chose option B" in t for t in _texts(ops)), _texts(ops)


# --- record text -----------------------------------------------------------------------------


def test_a_command_in_backticks_keeps_its_words() -> None:
    assert "`just lint`" in rewrite("always run `just lint` before pushing", "convention")
    assert rewrite("just run the the linter", "convention") == "Run the linter."


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("no need, the exports are always gzip", "The exports are always gzip."),
        ("hm we keep the cache for a week", "We keep the cache for a week."),
    ],
)
def test_a_reply_lead_is_not_part_of_the_record(said: str, expected: str) -> None:
    assert rewrite(said, "convention") == expected


def test_a_typo_in_the_first_word_is_corrected() -> None:
    assert correct("Alwasy tag the release.", frozenset()) == "Always tag the release."
    assert correct("Tilt runs the stack.", frozenset()) == "Tilt runs the stack."


# --- plain facts about the project -----------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "every migration gets a down step",
        "Each endpoint in the admin API needs a rate limit",
        "the fixtures live in qa/fixtures, one file per case",
        "release branches are cut from main",
        "the mock API is on port 4010",
        "the worker is started with `make jobs`",
        "the deploy branch is prod-eu now",
        "the audit log is append-only for everyone",
        "please keep log lines under 120 characters",
        "we quote strings with double quotes everywhere",
        "we switched to bun last month",
        "no emoji in PR titles, ever",
        "no semicolons please in the TS files",
        "spaces in YAML are fine, but no trailing commas please in the JSON fixtures",
        "from here on, tag releases with a v prefix",
    ],
)
def test_a_plain_fact_about_the_project_is_a_rule(sentence: str) -> None:
    assert match_rules(sentence), sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "every time I run it, it fails",
        "every test is failing now",
        "every page is slow",
        "each one is fine",
        "no problem please go ahead",
        "no need to hurry",
        "the build is green now",
        "the build is 2x faster now",
        "no more questions",
        "that part is fine, but no worries please take your time",
        "we moved the tests to a new folder",
        "keep it under wraps",
        "every day we ship",
    ],
)
def test_a_report_or_a_remark_is_no_fact_rule(sentence: str) -> None:
    assert not match_rules(sentence), sentence


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rule_beside_a_task_quotes_only_its_own_sentence(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "Add a loader for the tariff sheets. The loaders live in etl/loaders, one "
                 "module per source."),
        ("assistant", "Added etl/loaders/tariffs.py."),
    ], tmp_path)
    saved = _saved(ops)
    assert len(saved) == 1 and "etl/loaders" in saved[0]["text"], saved
    assert "tariff" not in saved[0]["evidence"], saved[0]["evidence"]


def test_an_answer_naming_a_longer_alternative_is_a_choice(tmp_path: Path) -> None:
    ops = curate_session("codex", [
        ("user", "add a TSV download of the stock report"),
        ("assistant", "Should the download use tabs or pipes as the column separator?"),
        ("user", "pipes - the warehouse scanner chokes on tabs"),
        ("assistant", "The download is pipe-separated."),
    ], tmp_path)
    assert any(t.startswith('The user chose "pipes') for t in _texts(ops)), _texts(ops)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_change_request_the_agent_left_midway_is_a_checkpoint(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "Swap moment for Luxon in src/dates.ts and drop moment from package.json."),
        ("assistant", "The parsing helpers use Luxon now; formatting and the package.json "
                      "change come next."),
    ], tmp_path)
    current = [op["text"] for op in _saved(ops) if op["kind"] == "current"]
    assert any("Luxon" in t for t in current), ops


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("We indent with two spaces in YAML, revert it.", "We indent with two spaces in YAML."),
        ("the deploy branch is prod-eu now, push it there", "The deploy branch is prod-eu now."),
        ("never force-push to main, revert it instead",
         "Never force-push to main, revert it instead."),
        ("the hooks run the linter, run them before every push",
         "The hooks run the linter, run them before every push."),
    ],
)
def test_the_step_asked_for_now_after_a_rule_is_left_to_the_evidence(
    said: str, expected: str
) -> None:
    assert rewrite(said, "convention") == expected


def test_open_work_the_task_list_already_names_is_one_checkpoint(tmp_path: Path) -> None:
    todos = [
        {"content": "Add the CSV parser", "status": "completed", "activeForm": "Adding"},
        {"content": "Reject rows without a tariff code", "status": "pending",
         "activeForm": "Rejecting"},
    ]
    ops = curate_session("claude", [
        ("user", "import the tariff sheets from csv"),
        ("assistant", "The CSV parser is in."),
        ("user", "ok stop here. rejecting the rows without a tariff code still isnt done, dont "
                 "forget that"),
        ("tool", "TodoWrite", {"todos": todos}),
        ("result", "Todos have been modified successfully."),
        ("assistant", "Stopping; rejecting rows without a tariff code is open."),
    ], tmp_path)
    current = [op["text"] for op in _saved(ops) if op["kind"] == "current"]
    assert len(current) == 1 and current[0].startswith(signals.UNFINISHED_TASKS), current


def test_a_reminder_after_open_work_is_left_to_the_evidence() -> None:
    said = "the release notes still need a migration section, dont forget that"
    assert rewrite(said, "open_issue") == "The release notes still need a migration section."
