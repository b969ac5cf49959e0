"""Negation- and word-order-aware contradiction matching, and what the curator does with it.

Made-up statements only (none from the corpus).
"""

from __future__ import annotations

from typing import Any

import pytest

from wardian.curator import curate
from wardian.curator.contradiction import contradicts, stance


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Never use npm.", "Use npm for installs."),
        ("no, use pnpm, never npm", "Use npm for installs."),
        ("Use tabs, not spaces.", "Use spaces, not tabs."),
        ("Always rebase feature branches.", "Never rebase feature branches."),
        ("Prefer Postgres over MySQL for new services.", "Use MySQL for new services."),
        ("Do not mock the database in tests.", "Mock the database in tests."),
    ],
)
def test_contradictions(a: str, b: str) -> None:
    assert contradicts(a, b) and contradicts(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use tabs, not spaces.", "Use tabs, not spaces, in Go files."),
        ("Do not use yarn.", "Use pnpm."),
        ("Never push to main.", "Never force-push to main."),
        ("Run the linter before committing.", "Run the formatter before committing."),
    ],
)
def test_not_contradictions(a: str, b: str) -> None:
    assert not contradicts(a, b)


def test_stance_reads_the_preferred_and_the_rejected_side() -> None:
    s = stance("Use uv, not pip, in this repo")
    assert "uv" in s.prefers and "pip" in s.rejects and "pip" not in s.prefers


def _payload(text: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"messages": [{"seq": 1, "role": "user", "kind": "text", "text": text, "meta": {}}],
            "records": records, "max_changes": 10}


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ("Use npm for installs.", "no, use pnpm, never npm"),
        ("Use tabs, not spaces.", "Use spaces, not tabs."),
    ],
)
def test_a_contradiction_updates_the_record(record: str, said: str) -> None:
    rec = {"id": "rec00001", "revision_id": "v1", "kind": "stable",
           "scope": {"kind": "workspace", "path": "/w"}, "text": record}
    ops = curate(_payload(said, [rec]))["operations"]
    assert [(op["op"], op.get("memory_id")) for op in ops] == [("update", "rec00001")]


def test_within_one_session_the_later_statement_wins() -> None:
    messages = [
        {"seq": 1, "role": "user", "kind": "text", "text": "Always squash commits.", "meta": {}},
        {"seq": 2, "role": "assistant", "kind": "text", "text": "Ok.", "meta": {}},
        {"seq": 3, "role": "user", "kind": "text", "text": "Never squash commits.", "meta": {}},
    ]
    ops = curate({"messages": messages, "records": []})["operations"]
    assert [op["text"] for op in ops] == ["Never squash commits."]
