"""Property tests (hypothesis): random valid plans over random stores either apply completely
or change nothing; preview never writes; replay never writes (issue 3 acceptance).

Failures are real: stale expected revisions, removed records, other agents' records, a
concurrent writer between preview and apply, and a SQLite trigger that aborts the write of
one record in the middle of the transaction. No mocks of our storage.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.memory.maintenance.conftest import file_hash, logical_state

from wardian.errors import WardianError
from wardian.memory.db import MemoryDB
from wardian.memory.maintenance.apply import ConfirmRequest
from wardian.memory.maintenance.service import apply_file, preview_file
from wardian.memory.models import Record, Scope, Source
from wardian.memory.store import MemoryStore

OWNER = "0a0a0a0a-0000-4000-8000-000000000001"
OTHER = "0b0b0b0b-0000-4000-8000-000000000002"
MISSING = "0c0c0c0c-0000-4000-8000-00000000dead"

def _one_primary(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most one primary source per operation (the plan's rule)."""
    seen = False
    for item in items:
        item["primary"] = item["primary"] and not seen
        seen = seen or item["primary"]
    return items


# Control characters other than newline/tab are refused by the plan rules (issue 15).
texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"],
                              include_characters="\n\t"), min_size=1,
                max_size=20).filter(lambda s: s.strip() != "")
locators = st.sampled_from(["a.md", "b.md", "c.md", "d.md"])
sources = st.lists(st.builds(lambda t, loc, p: {"source_type": t, "locator": loc,
                                                "primary": p},
                             st.sampled_from(["file", "url"]), locators, st.booleans()),
                   max_size=3).map(_one_primary)
scopes = st.sampled_from([{"kind": "agent"},
                          {"kind": "workspace", "path": os.path.abspath("/w2")}])


@dataclass
class World:
    """A random store: the owner's records (some removed, some edited), and an alien one."""

    n_records: int
    removed: list[int]
    edited: list[int]
    op_specs: list[tuple[str, int, bool, dict[str, Any]]]
    concurrent_edit: int | None
    poison: int | None
    ids: list[str] = field(default_factory=list)


@st.composite
def worlds(draw: Any) -> World:
    n = draw(st.integers(1, 7))
    idx = st.integers(0, n - 1)
    op_specs = draw(st.lists(st.tuples(
        st.sampled_from(["revise", "create", "retire", "retire_into"]),
        # mostly the owner's records; n = another agent's record, n+1 = a missing id
        st.sampled_from([*range(n)] * 6 + [n, n + 1]),
        st.sampled_from([True] * 9 + [False]),  # False: a stale expected revision
        st.fixed_dictionaries({}, optional={
            "text": texts, "kind": st.sampled_from(["stable", "current"]), "scope": scopes,
            "evidence_excerpt": texts, "add_sources": sources, "reason": texts,
            "target": st.integers(0, n + 3),
        }),
    ), min_size=1, max_size=10))
    return World(
        n_records=n,
        removed=draw(st.lists(idx, max_size=1, unique=True)),
        edited=draw(st.lists(idx, max_size=2, unique=True)),
        op_specs=op_specs,
        concurrent_edit=draw(st.none() | idx),
        poison=draw(st.none() | st.none() | idx),
    )


def build_store(world: World, db: Path) -> dict[str, str]:
    """Create the records; return {record id: a stale revision id} for edited ones."""
    store = MemoryStore(MemoryDB.open(db))
    stale: dict[str, str] = {}
    for i in range(world.n_records):
        rec = store.save(OWNER, f"record {i}", evidence="ev", scope=Scope("workspace", "/w"),
                         sources=[Source("file", f"r{i}.md")], actor="test")
        world.ids.append(rec.id)
    alien = store.save(OTHER, "alien", evidence="ev", scope=Scope("agent"), actor="test")
    world.ids += [alien.id, MISSING]
    for i in world.edited:
        stale[world.ids[i]] = store.get(world.ids[i]).current_revision_id
        store.update(None, world.ids[i], text=f"edited {i}", actor="test")
    for i in world.removed:
        store.remove(None, world.ids[i], actor="test", reason="gone")
    return stale


def build_plan(world: World, db: Path, stale: dict[str, str]) -> dict[str, Any]:
    store = MemoryStore(MemoryDB.open(db))
    ops: list[dict[str, Any]] = []
    subjects: set[str] = set()
    retired: set[str] = set()
    creates: list[str] = []
    pending_into: list[tuple[dict[str, Any], int]] = []
    for n, (kind, target, fresh, extra) in enumerate(world.op_specs):
        if kind == "create":
            key = f"ck{n}"
            creates.append(key)
            ops.append({"op": "create", "client_key": key, "text": extra.get("text", "new"),
                        "kind": extra.get("kind", "stable"),
                        "scope": extra.get("scope", {"kind": "agent"}),
                        "evidence_excerpt": extra.get("evidence_excerpt", "ev"),
                        "sources": extra.get("add_sources", [])})
            continue
        memory_id = world.ids[target]
        if memory_id in subjects:
            continue
        subjects.add(memory_id)
        current = (store.conn.execute("SELECT current_revision_id FROM records WHERE id = ?",
                                      (memory_id,)).fetchone() or ["never-existed"])[0]
        expected = current if fresh else stale.get(memory_id, "rev-does-not-exist")
        op: dict[str, Any] = {"op": kind, "memory_id": memory_id,
                              "expected_revision_id": expected}
        if kind == "revise":
            for name in ("text", "kind", "scope", "evidence_excerpt", "add_sources"):
                if name in extra:
                    op[name] = extra[name]
            if len(op) == 3 or op.get("add_sources") == []:
                op["text"] = extra.get("text", "revised")
        elif kind == "retire":
            op["reason"] = extra.get("reason", "stale")
            retired.add(memory_id)
        else:
            retired.add(memory_id)
            if "reason" in extra:
                op["reason"] = extra["reason"]
            pending_into.append((op, extra.get("target", 0)))
        ops.append(op)
    for op, choice in pending_into:
        survivors = [i for i in world.ids if i not in retired] + [f"ck:{k}" for k in creates]
        if not survivors:
            ops.remove(op)
            continue
        pick = survivors[choice % len(survivors)]
        if pick.startswith("ck:"):
            op["target_client_key"] = pick[3:]
        else:
            op["target_memory_id"] = pick
    if not ops:
        ops.append({"op": "create", "client_key": "only", "text": "t", "kind": "stable",
                    "scope": {"kind": "agent"}, "evidence_excerpt": "e", "sources": []})
    return {"schema_version": 1, "plan_id": "prop", "agent_id": OWNER,
            "idempotency_key": "prop-key", "operations": ops}


def touched(plan: dict[str, Any], fields: tuple[str, ...]) -> set[str]:
    ids: set[str] = set()
    for op in plan["operations"]:
        ids.update(v for k, v in op.items() if k in fields)
    return ids


def yes(_: ConfirmRequest) -> bool:
    return True


def never(request: ConfirmRequest) -> bool:
    raise AssertionError(f"a replay must not prompt: {request}")


def check_applied(db: Path, plan: dict[str, Any], receipt: dict[str, Any]) -> None:
    store = MemoryStore(MemoryDB.open(db))
    created = {c["client_key"]: c["memory_id"] for c in receipt["created"]}
    changed = set(created.values()) | {r["memory_id"] for r in receipt["revised"]}
    for op in plan["operations"]:
        record: Record = store.get(created[op["client_key"]] if op["op"] == "create"
                                   else op["memory_id"])
        if op["op"] in {"retire", "retire_into"}:
            assert record.status == "removed"
        else:
            assert record.status == "active"
            if "text" in op:
                assert record.text == op["text"]
            if "kind" in op:
                assert record.kind == op["kind"]
            if "scope" in op:
                assert record.scope.to_json() == op["scope"]
            wanted = {(s["source_type"], s["locator"])
                      for s in op.get("add_sources", op.get("sources", []))}
            assert wanted <= {(s.source_type, s.locator) for s in record.sources}
        if op["op"] == "retire_into":
            target = op.get("target_memory_id") or created[op["target_client_key"]]
            donor = {(s.source_type, s.locator) for s in record.sources}
            assert donor <= {(s.source_type, s.locator) for s in store.get(target).sources}
    for record_id in changed:
        assert store.history(record_id)[-1].actor == "plan:prop"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(worlds())
def test_apply_is_all_or_nothing_and_preview_and_replay_never_write(world: World) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        db, state = home / "memory.db", home / "state.db"
        stale = build_store(world, db)
        plan = build_plan(world, db, stale)
        path = home / "plan.json"
        path.write_text(json.dumps(plan), encoding="utf-8")

        before_bytes, before_rows = file_hash(db), logical_state(db)
        preview = preview_file(path, OWNER, memory_db=db, state_db=state)
        assert (file_hash(db), logical_state(db)) == (before_bytes, before_rows)

        subjects = touched(plan, ("memory_id",))
        expect_failure = not preview.conflict_free
        if world.concurrent_edit is not None:
            victim = world.ids[world.concurrent_edit]
            writer = MemoryStore(MemoryDB.open(db))
            if writer.get(victim).status == "active":
                writer.update(None, victim, text="concurrent", actor="someone")
                expect_failure |= victim in subjects  # its expected revision is now stale
        if world.poison is not None:
            poisoned = world.ids[world.poison]
            conn = sqlite3.connect(db)
            conn.execute(
                "CREATE TRIGGER poison BEFORE UPDATE ON records WHEN old.id = "
                f"'{poisoned}' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
            )
            conn.close()
            expect_failure |= poisoned in touched(plan, ("memory_id", "target_memory_id"))
        rows = logical_state(db)
        try:
            result = apply_file(path, OWNER, confirm=yes, memory_db=db, state_db=state)
        except WardianError as exc:
            event(f"rolled back: {type(exc).__name__}")
            assert logical_state(db) == rows  # nothing changed
            assert expect_failure
            return
        assert not expect_failure
        event("applied")
        receipt = result.receipt.to_json()
        assert not result.replayed and receipt["preview_digest"] == preview.digest
        check_applied(db, plan, receipt)

        replay_bytes, replay_rows = file_hash(db), logical_state(db)
        again = apply_file(path, OWNER, confirm=never, memory_db=db, state_db=state)
        assert again.replayed and again.receipt.to_json() == receipt
        assert (file_hash(db), logical_state(db)) == (replay_bytes, replay_rows)
