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
