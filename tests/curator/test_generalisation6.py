"""Kinds of statement the sixth unseen set (tests/curator/unseen6/) showed the curator
getting wrong.

As in test_generalisation5.py, each test is a kind of statement with sentences made up for
the test, neither from the corpus nor from any held-out set (which stay measurements).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import FORMATS, curate_session
from wardian.curator import curate, signals


def _answered(question: str, answer: str) -> list[str]:
    """Texts saved from a session whose agent asked `question` and got `answer`."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": "wire the invoice exporter to the new ledger service"},
        {"seq": 1, "role": "assistant", "kind": "tool_call", "meta": {},
         "text": f'AskUserQuestion({{"questions": [{{"question": "{question}"}}]}})'},
        {"seq": 2, "role": "tool", "kind": "answer", "meta": {},
         "text": f'User has answered your questions: "{question}"="{answer}".'},
        {"seq": 3, "role": "assistant", "kind": "text", "meta": {},
         "text": "Done: the exporter posts to the ledger service and all 14 tests pass."},
    ]
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op["text"] for op in ops if op["op"] in ("save", "update")]


# --- 1. an answer limited to this time is a one-off, not a rule -----------------------------

ONE_OFF_ANSWERS = [
    ("Should the export include archived invoices?", "only the open ones this time"),
    ("Which ledger account should I post to?", "the sandbox account for now, live comes later"),
    ("Do you want the totals rounded?", "round them for this run, we revisit it after the audit"),
    ("Should I retry failed posts?", "no retries just this once, the queue is being drained"),
]
DURABLE_ANSWERS = [
    ("Which currency format should invoices use?", "always ISO 4217 codes, never symbols"),
    ("Where should the exporter write its log?", "to stderr, the collector reads nothing else"),
]


@pytest.mark.parametrize(("question", "answer"), ONE_OFF_ANSWERS)
def test_an_answer_for_this_time_only_is_not_saved(question: str, answer: str) -> None:
    assert _answered(question, answer) == []


@pytest.mark.parametrize(("question", "answer"), DURABLE_ANSWERS)
def test_a_lasting_answer_is_still_saved(question: str, answer: str) -> None:
    texts = _answered(question, answer)
    assert any(answer.split(",")[0] in t for t in texts), texts


# --- 2. "fixed" naming a kind of thing is no confirmation that the work is done -------------

FIXED_AS_ADJECTIVE = [
    "switch the limiter to a fixed window of 30 seconds",
    "change the thumbnails to a fixed width of 240 px",
    "switch the log lines to a fixed prefix with the host name",
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("request_text", FIXED_AS_ADJECTIVE)
def test_a_request_naming_a_fixed_thing_left_failing_is_a_checkpoint(
    fmt: str, request_text: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", request_text),
        ("assistant", "The sampler test still fails: the order differs per run."),
    ], tmp_path)
    assert any(op["kind"] == "current" for op in ops if op["op"] == "save"), ops


@pytest.mark.parametrize("reply", ["fixed, thanks", "that fixed it", "it's fixed now", "fixed!"])
def test_fixed_said_of_the_work_still_confirms_it(reply: str) -> None:
    assert signals._CONFIRM.search(reply)


# --- 3. a one-off limit said mid-task is not the work the checkpoint names -------------------

ONE_OFF_LIMITS = [
    "for this run just use the eu bucket",
    "just this once skip the slow integration suite",
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("limit", ONE_OFF_LIMITS)
def test_a_one_off_limit_is_not_the_checkpointed_request(
    fmt: str, limit: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "add a retry with backoff to the uploader"),
        ("assistant", "Working on the uploader retry."),
        ("user", limit),
        ("assistant", "The upload test still fails: the retry gives up after one try."),
    ], tmp_path)
    current = [op["text"] for op in ops if op["op"] == "save" and op["kind"] == "current"]
    assert current and all(limit not in t.lower() for t in current), current
    assert any("retry" in t.lower() for t in current), current


# --- 4. a rule the user takes back in their next message is not kept -----------------------

def _retracted(first: str, second: str) -> list[str]:
    """Texts saved from a session where the user states `first`, then says `second`."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {}, "text": first},
        {"seq": 1, "role": "assistant", "kind": "text", "meta": {},
         "text": "Understood, I'll keep to that."},
        {"seq": 2, "role": "user", "kind": "text", "meta": {}, "text": second},
        {"seq": 3, "role": "assistant", "kind": "text", "meta": {},
         "text": "Done: switched over, and all 12 tests pass."},
    ]
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op["text"] for op in ops if op["op"] in ("save", "update")]


RETRACTED = [
    ("Lint the Lua scripts with luacheck before every push.",
     "scratch that, lint them with selene instead", "luacheck"),
    ("Put the fixtures under spec/fixtures from now on.",
     "on second thought, the fixtures go in test/data", "spec/fixtures"),
    ("Always bump the version in VERSION.txt before tagging.",
     "wait, no - the version lives in pyproject.toml, bump it there", "VERSION.txt"),
    ("From now on name the feature flags with a ff_ prefix.",
     "Forget that. Flags get no prefix at all.", "ff_"),
    ("We always squash the commits of a pull request.",
     "Strike that, we rebase and keep the commits.", "squash"),
    ("Keep the changelog entries in docs/CHANGES.rst going forward.",
     "never mind that, I take it back: entries go into the release notes", "CHANGES.rst"),
]


@pytest.mark.parametrize(("first", "second", "word"), RETRACTED)
def test_a_rule_taken_back_in_the_next_message_is_not_saved(first: str, second: str,
                                                           word: str) -> None:
    assert not any(word in t for t in _retracted(first, second))


NOT_RETRACTIONS = [
    ("Lint the Lua scripts with luacheck before every push.",
     "also, never mind the old warnings in vendor/, those are not ours"),
    ("Always bump the version in VERSION.txt before tagging.",
     "scratch files go in /tmp, not in the repo"),
    ("From now on name the feature flags with a ff_ prefix.",
     "thanks, that's right. next: add the flag for the new checkout page"),
]


@pytest.mark.parametrize(("first", "second"), NOT_RETRACTIONS)
def test_a_later_message_that_takes_nothing_back_keeps_the_rule(first: str, second: str) -> None:
    key = first.split()[-2]
    assert any(key in t for t in _retracted(first, second)), _retracted(first, second)


def test_taking_back_the_last_statement_leaves_the_others_of_that_message() -> None:
    texts = _retracted(
        "Never log the card numbers. From now on deploy the worker with fly deploy.",
        "scratch that, we deploy it with the make target",
    )
    assert any("card numbers" in t for t in texts), texts
    assert not any("fly deploy" in t for t in texts), texts


def test_taking_back_an_unsaved_last_statement_leaves_the_saved_rule() -> None:
    texts = _retracted(
        "Trim the import to 500 rows. The importer must never drop a row silently. use csvkit",
        "scratch that, use the stdlib csv module",
    )
    assert any("never drop a row" in t for t in texts), texts


def test_a_sign_off_after_the_rule_does_not_shield_it() -> None:
    texts = _retracted("We always squash the commits of a pull request. Thanks!",
                       "Strike that, we rebase and keep the commits.")
    assert not any("squash" in t for t in texts), texts


# --- 5. the platform or toolchain version the project targets, said plainly --------------

def _said(text: str) -> list[str]:
    """Texts saved from a session whose user says `text` alongside a finished task."""
    messages: list[dict[str, Any]] = [
        {"seq": 0, "role": "user", "kind": "text", "meta": {},
         "text": f"add a --dry-run flag to the sync command. {text}"},
        {"seq": 1, "role": "assistant", "kind": "text", "meta": {},
         "text": "Done: --dry-run prints the plan, and all 9 tests pass."},
    ]
    ops = curate({"messages": messages, "records": [], "max_changes": 10})["operations"]
    return [op["text"] for op in ops if op["op"] in ("save", "update")]


TARGETS = [
    ("We target Kotlin 2.0 and nothing older.", "Kotlin 2.0"),
    ("The service runs on Node 22.", "Node 22"),
    ("We build against Qt 6.7 on every platform.", "Qt 6.7"),
    ("The library supports Python 3.10 and later.", "Python 3.10"),
    ("we're on Postgres 16 in all environments", "Postgres 16"),
    ("The plugin targets Lua 5.4 only.", "Lua 5.4"),
]
NOT_TARGETS = [
    "does it support Python 3.9 too?",
    "we targeted Node 18 last year, before the upgrade",
    "the nightly run took 14 minutes",
    "it ran on 3 workers when it failed",
]


@pytest.mark.parametrize(("text", "value"), TARGETS)
def test_a_plain_target_version_is_saved(text: str, value: str) -> None:
    assert any(value in t for t in _said(text)), _said(text)


@pytest.mark.parametrize("text", NOT_TARGETS)
def test_a_version_asked_about_or_in_the_past_is_not_saved(text: str) -> None:
    assert _said(text) == []
