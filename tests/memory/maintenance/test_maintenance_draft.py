"""`draft_plan`: a plan skeleton for the agent's own records with their current revisions;
writes nothing (spec "Operator maintenance in Garden": managed agents may draft a plan)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wardian.errors import NotFoundError, UsageError
from wardian.memory.maintenance.draft import draft_plan
from wardian.memory.maintenance.plan import check_owner, load_plan_bytes
from wardian.memory.maintenance.preview import build_preview


def test_draft_names_current_revisions_and_round_trips(kit: Any) -> None:
    a, b = kit.record("a", sources=2), kit.record("b")
    kit.store.update(None, b.id, text="b edited", actor="test")
    before = kit.fingerprint()
    doc = draft_plan(kit.owner.id, [a.id[:8], b.id], kit.store)
    assert kit.fingerprint() == before  # nothing written
    assert doc["schema_version"] == 1 and doc["agent_id"] == kit.owner.id
    assert doc["plan_id"] and doc["idempotency_key"]
    ops = doc["operations"]
    assert [op["memory_id"] for op in ops] == [a.id, b.id]
    assert ops[1]["expected_revision_id"] == kit.store.get(b.id).current_revision_id
    assert ops[1]["text"] == "b edited"
    plan = load_plan_bytes(json.dumps(doc).encode())
    check_owner(plan, kit.owner.id)
    assert build_preview(plan, kit.store, kit.owner.id).conflict_free


def test_draft_refuses_other_agents_removed_duplicates_and_too_many(kit: Any) -> None:
    mine, theirs = kit.record("mine"), kit.record("theirs", agent=kit.other)
    with pytest.raises(NotFoundError):
        draft_plan(kit.owner.id, [theirs.id], kit.store)
    with pytest.raises(UsageError, match="named twice"):
        draft_plan(kit.owner.id, [mine.id, mine.id[:8]], kit.store)
    kit.store.remove(None, mine.id, actor="test")
    with pytest.raises(UsageError, match="removed"):
        draft_plan(kit.owner.id, [mine.id], kit.store)
    with pytest.raises(UsageError, match="at most 100"):
        draft_plan(kit.owner.id, ["x"] * 101, kit.store)
