"""The builtin saves only what it reads reliably, quoting the user without losing meaning.

Every sentence is invented for these tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.curator.blind import build
from wardian.curator import curate
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
