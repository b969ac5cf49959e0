"""The builtin saves only what it reads reliably, quoting the user without losing meaning.

Every sentence is invented for these tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.blind import build
from wardian.curator import curate
from wardian.curator.contradiction import contradicts, stance
from wardian.curator.rules import rewrite
from wardian.transcripts import load_transcript


def _ops_of(path: Path) -> list[dict[str, Any]]:
    conv = load_transcript(path)
    payload = {"messages": [m.to_json() for m in conv.messages], "records": []}
    return list(curate(payload)["operations"])


def _user(*texts: str) -> list[dict[str, Any]]:
    payload = {
        "messages": [
            {"seq": k, "role": "user", "kind": "text", "text": t, "meta": {}}
            for k, t in enumerate(texts, 1)
        ],
        "records": [],
    }
    return list(curate(payload)["operations"])


def test_a_refusal_reason_of_two_statements_keeps_both(tmp_path: Path) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "refusal",
        "/srv/orchard",
        [
            ("user", "Ship the pruning fix."),
            (
                "reject",
                (
                    "Bash",
                    {"command": "git push origin trunk"},
                    "Nobody pushes straight to trunk in this repo. Open a merge request "
                    "from a topic branch.",
                ),
            ),
            ("assistant", "Opened a merge request from topic/pruning."),
        ],
    )
    ops = [op for op in _ops_of(tmp_path / "claude-code" / "refusal.jsonl")
           if op["kind"] == "stable"]
    assert len(ops) == 1, ops
    assert "Nobody pushes straight to trunk" in ops[0]["text"]
    assert "merge request from a topic branch" in ops[0]["text"]


NEGATED = [
    "no tabs please",
    "No semicolons in the TypeScript sources.",
    "nope, no tabs",
    "No force pushes to the release branches.",
    "no mocks in the integration tests please",
    "No-one merges their own pull request.",
    "no-op migrations still need a review",
]


@pytest.mark.parametrize("said", NEGATED)
@pytest.mark.parametrize("category", ["correction", "convention", "explicit", "decision"])
def test_a_leading_no_that_negates_is_never_dropped(said: str, category: str) -> None:
    text = rewrite(said, category).lower()
    assert text.startswith(("no ", "no-")) or " no " in text, text


@pytest.mark.parametrize(
    ("said", "rest"),
    [("no, use spaces", "Use spaces."), ("Nope - keep it on httpx.", "Keep it on httpx."),
     ("no I meant the staging bucket", "the staging bucket")],
)
def test_a_leading_no_that_answers_is_dropped(said: str, rest: str) -> None:
    assert rest.lower() in rewrite(said, "correction").lower()


def test_a_negated_preference_read_as_a_stance_rejects() -> None:
    assert "tabs" in stance("no tabs please").rejects
    assert contradicts("no tabs please", "Use tabs.")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Which label should the release get?", "None"),
        ("Which reviewer should I add to the pull request?", "No reviewer"),
        ("Should I add a changelog entry as well?", "Not now"),
        ("Which cache should the build use?", "Neither"),
    ],
)
def test_an_answer_that_only_declines_decides_nothing(
    tmp_path: Path, question: str, answer: str
) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "declined",
        "/srv/orchard",
        [("user", "Cut the 3.2 release."), ("ask", (question, answer)),
         ("assistant", "Release 3.2 is tagged.")],
    )
    ops = _ops_of(tmp_path / "claude-code" / "declined.jsonl")
    assert not [op for op in ops if "chose" in op["text"]], ops


@pytest.mark.parametrize(
    "answer", ["No, use the local disk cache", "Redis streams (Recommended)", "no-store"]
)
def test_an_answer_that_names_what_holds_is_kept(tmp_path: Path, answer: str) -> None:
    build.OUT = tmp_path
    build.claude_code(
        "named",
        "/srv/orchard",
        [("user", "Speed up the build."), ("ask", ("Which cache should the build use?", answer)),
         ("assistant", "The build uses it now.")],
    )
    ops = _ops_of(tmp_path / "claude-code" / "named.jsonl")
    assert any("chose" in op["text"] and "cache" in op["text"] for op in ops), ops


HEDGED = [
    "maybe the importer should always skip blank rows",
    "I guess we always tag releases on Fridays",
    "the parser might be faster with a lookup table, use one",
    "we should probably pin orjson to the 3.x line",
    "in theory the cron job never overlaps, so don't add a lock",
    "perhaps always run the slow suite before a release",
]


@pytest.mark.parametrize("said", HEDGED)
def test_a_hedged_statement_is_not_saved(said: str) -> None:
    assert [op for op in _user(said) if op.get("kind") == "stable"] == []


@pytest.mark.parametrize(
    "said",
    [
        "the importer should always skip blank rows",
        "we always tag releases on Fridays",
        "remember that the nightly job might run twice after a deploy",
    ],
)
def test_the_same_statement_without_a_hedge_or_asked_to_be_remembered_is_saved(
    said: str,
) -> None:
    assert [op for op in _user(said) if op.get("kind") == "stable"], said


def test_the_users_own_plan_is_not_left_as_unfinished_work() -> None:
    payload = {
        "messages": [
            {"seq": 1, "role": "user", "kind": "text",
             "text": "we will add the photo upload later this year"},
            {"seq": 2, "role": "assistant", "kind": "text", "text": "Noted."},
        ],
        "records": [],
    }
    assert curate(payload)["operations"] == []
