"""Kinds of statement the fifth unseen set (tests/curator/unseen5/) showed the curator
getting wrong.

As in test_generalisation4.py, each test is a kind of statement with sentences made up for
the test, neither from the corpus nor from any held-out set (which stay measurements).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.blind import build
from tests.curator.sessions import FORMATS, curate_session
from wardian.curator import curate
from wardian.curator.segments import is_one_off, pasted_spans
from wardian.curator.values import retired_values
from wardian.transcripts import load_transcript


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> list[str]:
    return [op["text"] for op in _saved(ops)]


def _said(fmt: str, tmp_path: Path, message: str) -> list[str]:
    return _texts(curate_session(fmt, [
        ("user", "port the exporter to the new queue client"),
        ("assistant", "Ported the exporter; all 31 tests pass. Anything else?"),
        ("user", message),
        ("assistant", "Understood."),
    ], tmp_path))


# --- 1. an instruction tied to the present is a one-off ------------------------------------

ONE_OFF = [
    "don't restart the gateway now, the ops team is patching it.",
    "do not run the migration today, the replica is rebuilding.",
    "not now, the staging cluster is frozen until thursday.",
    "never touch the billing tables during the audit freeze.",
    "dont merge anything tonight, the on-call rotation is empty.",
    "skip the load test this week, the lab is booked.",
    "hold off on the rollout until the 14th.",
    "no deploys until monday please.",
    "leave the cache warmer off at the moment.",
]
DURABLE = [
    "from now on run the linter before every commit.",
    "never push on fridays.",
    "always tag releases with a signed tag.",
    "do not edit the generated protobuf files by hand.",
    "we deploy with helm, never with kubectl apply.",
    "don't ever commit the sqlite fixtures from now on.",
    "we no longer build the docs with sphinx now, mkdocs does it.",
    "we never use yarn now that the monorepo is on pnpm.",
]


@pytest.mark.parametrize("sentence", ONE_OFF)
def test_an_instruction_tied_to_the_present_is_a_one_off(sentence: str) -> None:
    assert is_one_off(sentence)


@pytest.mark.parametrize("sentence", DURABLE)
def test_a_rule_without_a_present_limit_is_not_a_one_off(sentence: str) -> None:
    assert not is_one_off(sentence)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sentence", ONE_OFF[:3])
def test_a_one_off_instruction_is_not_saved(fmt: str, sentence: str, tmp_path: Path) -> None:
    texts = _said(fmt, tmp_path, sentence)
    assert not texts, texts


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sentence", DURABLE[:3])
def test_a_durable_rule_beside_the_one_offs_is_still_saved(
    fmt: str, sentence: str, tmp_path: Path
) -> None:
    texts = _said(fmt, tmp_path, sentence)
    assert texts, "a rule with no present limit is saved"


def _refused(tmp_path: Path, command: str, reason: str) -> list[str]:
    build.OUT = tmp_path
    build.claude_code(
        "refused",
        "/srv/orchard",
        [
            ("user", "tidy the seed scripts"),
            ("reject", ("Bash", {"command": command, "description": "Run"}, reason)),
            ("assistant", "Understood."),
        ],
    )
    conv = load_transcript(tmp_path / "claude-code" / "refused.jsonl")
    return _texts(curate({"messages": [m.to_json() for m in conv.messages]})["operations"])


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("npm run seed:prod", "not today, the marketing import is running"),
        ("make publish", "not this week, the registry is being migrated"),
        ("kubectl rollout restart deploy/api", "no, not during the change freeze"),
        ("terraform apply", "wait until tuesday, finance has to sign off"),
    ],
)
def test_a_refusal_for_the_present_is_not_a_rule(
    tmp_path: Path, command: str, reason: str
) -> None:
    texts = _refused(tmp_path, command, reason)
    assert not texts, texts


def test_a_refusal_with_a_lasting_reason_is_kept(tmp_path: Path) -> None:
    texts = _refused(tmp_path, "pip install requests",
                     "we never install packages with pip here, use uv add")
    assert any("uv add" in t for t in texts), texts


# --- 2. text the user pasted is not the user's statement ------------------------------------

PASTES = [
    "the deploy job printed this, any idea?\n\n```\nWARN: always set REGION before deploy\n"
    "ERROR: bucket not found\n```",
    "here's the output:\n\nINFO: you must never run this as root\nINFO: using cache at /tmp\n",
    "the linter says:\nhint: always prefer f-strings over format calls\nhint: never use bare "
    "except clauses",
    "from the CONTRIBUTING excerpt:\n\nContributors should always squash their commits.\n"
    "Maintainers must sign every tag.",
    "2026-03-02 10:11:04 WARN never retry a poisoned message\n"
    "2026-03-02 10:11:05 ERROR consumer stopped\nwhy does it stop?",
    "I got this when building:\n\nerror: could not compile `orchard-core` due to 2 errors\n"
    "note: always enable the `std` feature",
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("message", PASTES)
def test_a_sentence_inside_a_paste_is_not_saved(fmt: str, message: str, tmp_path: Path) -> None:
    texts = _said(fmt, tmp_path, message)
    assert not texts, texts


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_users_own_rule_after_a_paste_is_saved(fmt: str, tmp_path: Path) -> None:
    texts = _said(fmt, tmp_path, "here's the log:\n\nERROR: timeout after 30s\nERROR: retrying\n\n"
                                 "we always set the client timeout to 90 seconds in this service.")
    assert any("90 seconds" in t for t in texts), texts


def test_a_users_note_line_alone_is_not_a_paste() -> None:
    assert pasted_spans("note: we never ship on a friday") == []
    assert pasted_spans("always run the smoke tests before tagging.") == []


# --- 3. a value the user replaces later in the session --------------------------------------


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("ok, trunk is dead, we merge to main", "trunk"),
        ("forget master.", "master"),
        ("forget about npm, bun does it all", "npm"),
        ("yarn is obsolete here", "yarn"),
    ],
)
def test_a_value_the_user_declares_dead_is_retired(text: str, word: str) -> None:
    assert [r.word for r in retired_values(text)] == [word]


@pytest.mark.parametrize(
    "text",
    ["forget the last step", "the battery is dead", "forget about it, it's fine"],
)
def test_only_known_values_are_retired(text: str) -> None:
    assert retired_values(text) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_later_value_replaces_the_earlier_one(fmt: str, tmp_path: Path) -> None:
    texts = _texts(curate_session(fmt, [
        ("user", "add the retry flag to the importer. open the merge request against trunk "
                 "like always"),
        ("assistant", "There is no trunk on the remote, only main. Which one?"),
        ("user", "right, trunk is dead since the migration. merge requests go to main now, "
                 "forget trunk"),
        ("assistant", "Opened it against main."),
    ], tmp_path))
    assert not any("trunk" in t and "main" not in t for t in texts), texts
    assert any("main" in t for t in texts), texts


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rule_on_another_subject_stays(fmt: str, tmp_path: Path) -> None:
    texts = _texts(curate_session(fmt, [
        ("user", "always run the contract tests before opening a merge request"),
        ("assistant", "Noted."),
        ("user", "master is dead, we use main now"),
        ("assistant", "Understood."),
    ], tmp_path))
    assert any("contract tests" in t for t in texts), texts


# --- 4. a pasted compiler error is not unfinished work --------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_pasted_compile_error_on_finished_work_is_no_checkpoint(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "fix the overflow in the ring buffer"),
        ("assistant", "Fixed the overflow; tests pass."),
        ("user", "CI printed this on the old commit:\n\nerror[E0308]: mismatched types\n"
                 "error: could not compile `ringbuf` due to previous error"),
        ("assistant", "That was the old commit; the new one builds and all tests pass."),
        ("user", "great, thanks"),
    ], tmp_path)
    current = [op["text"] for op in _saved(ops) if op["kind"] == "current"]
    assert not current, current


# --- 5. a refusal reason keeps its whole thought or says nothing ---------------------------


@pytest.mark.parametrize(
    ("reason", "lasting"),
    [
        ("no. we never regenerate the lockfile by hand, the bot does it. just run install "
         "if you must", "by hand"),
        ("no, schema changes go through alembic only. run the autogenerate if you have to",
         "alembic"),
    ],
)
def test_a_grudging_permission_in_a_refusal_is_not_a_rule(
    tmp_path: Path, reason: str, lasting: str
) -> None:
    texts = _refused(tmp_path, "rm -rf node_modules && npm install", reason)
    assert not any("if the agent must" in t.lower() or "if the agent has to" in t.lower()
                   or "if you must" in t.lower() for t in texts), texts
    assert any(lasting in t for t in texts), texts


def _two_turns(fmt: str, tmp_path: Path, first: str, second: str) -> list[str]:
    return _texts(curate_session(fmt, [
        ("user", first),
        ("assistant", "Done. Anything else?"),
        ("user", second),
        ("assistant", "Understood."),
    ], tmp_path))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("first", "second", "old"),
    [
        ("add the healthcheck route. open the PR against develop like always",
         "actually PRs go to main these days, every PR", "develop"),
        ("wire the seed script and always install deps with yarn",
         "hm, we install deps with pnpm now, for every package", "yarn"),
        ("bump the parser and run the suite with nose as usual",
         "sorry, we run the suite with pytest now", "nose"),
    ],
)
def test_only_the_last_value_of_a_subject_is_saved(
    fmt: str, tmp_path: Path, first: str, second: str, old: str
) -> None:
    texts = _two_turns(fmt, tmp_path, first, second)
    assert not any(old in t.lower() for t in texts), texts


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        ("open the PR against develop like always", "never open PRs against main", "develop"),
        ("always use pnpm for installs", "npm is banned, never run npm install", "pnpm"),
        ("never commit directly to main", "branch off develop for the hotfix work", "main"),
    ],
)
def test_a_later_statement_rejecting_or_on_another_subject_keeps_the_rule(
    fmt: str, tmp_path: Path, first: str, second: str, kept: str
) -> None:
    texts = _two_turns(fmt, tmp_path, first, second)
    assert any(kept in t.lower() for t in texts), texts
