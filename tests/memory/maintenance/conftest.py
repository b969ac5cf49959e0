"""Fixtures for reviewed-maintenance tests: an owner agent, its records, plan files, and a
fingerprint of ``memory.db`` (file bytes + logical contents) to prove "nothing changed"."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from wardian._backend import Connection
from wardian.config import open_state_db
from wardian.memory.db import open_memory_db
from wardian.memory.models import Record, Scope, Source
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import Agent, AgentRegistry

TABLES = {
    "records": "id",
    "record_sources": "record_id, position",
    "revisions": "revision_id",
    "maintenance_receipts": "owner_id, idempotency_key",
}


def logical_state(db: Path | MemoryStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables maintenance may touch, in a stable order (read-only): of
    the file `db`, or through a store (on PostgreSQL there is no file)."""
    if isinstance(db, MemoryStore):
        return _rows(db.conn, TABLES)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return _rows(conn, TABLES)
    finally:
        conn.close()


def _rows(conn: Connection, tables: dict[str, str]) -> dict[str, list[tuple[Any, ...]]]:
    return {table: [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY {order}")]
            for table, order in tables.items()}


def pg_hash(store: MemoryStore) -> str:
    """sha256 of every row of every table of the ``memory`` schema, ``memory_version``
    included (it moves with every write transaction that changed a row): PostgreSQL's
    stand-in for the file's bytes."""
    tables = [r[0] for r in store.conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'memory'"
        " ORDER BY table_name")]
    rows = _rows(store.conn, {t: "1" for t in tables})
    return hashlib.sha256(repr(sorted((t, sorted(map(repr, v))) for t, v in rows.items()))
                          .encode()).hexdigest()


def file_hash(db: Path) -> str:
    """sha256 of the database file and its WAL (if any), byte for byte."""
    digest = hashlib.sha256(db.read_bytes())
    wal = db.with_name(db.name + "-wal")
    if wal.exists():
        digest.update(wal.read_bytes())
    return digest.hexdigest()


@dataclass
class Kit:
    """The owner agent, a store on the test's memory.db, and plan-writing helpers."""

    home: Path
    owner: Agent
    other: Agent
    store: MemoryStore

    @property
    def db(self) -> Path:
        return self.home / "memory.db"

    def record(
        self, text: str = "a memory", *, agent: Agent | None = None, sources: int = 1,
        kind: str = "stable", scope: Scope | None = None,
    ) -> Record:
        return self.store.save(
            (agent or self.owner).id, text, evidence=f"evidence for {text}", kind=kind,  # type: ignore[arg-type]
            scope=scope or Scope("workspace", str(self.home)),
            sources=[Source("file", f"{text}-{i}.md") for i in range(sources)],
            actor="test",
        )

    def plan(self, operations: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema_version": 1, "plan_id": "plan-test", "agent_id": self.owner.id,
            "idempotency_key": "key-1", "operations": operations,
        }
        doc.update(top)
        return doc

    def write(self, doc: dict[str, Any] | str | bytes, name: str = "plan.json") -> Path:
        path = self.home / name
        if isinstance(doc, bytes):
            path.write_bytes(doc)
        elif isinstance(doc, str):
            path.write_text(doc, encoding="utf-8")
        else:
            path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        return path

    def fingerprint(self) -> tuple[str, dict[str, list[tuple[Any, ...]]]]:
        """(file hash, logical rows) of memory.db; closes the kit's own connection first so
        no open handle of the test holds un-checkpointed pages."""
        if self.store.db.dialect == "postgres":
            return (pg_hash(self.store), logical_state(self.store))
        self.store.db.close()  # the file's one connection in this process, not just a view
        result = (file_hash(self.db), logical_state(self.db))
        self.store = MemoryStore(open_memory_db())
        return result

    def state(self) -> dict[str, list[tuple[Any, ...]]]:
        if self.store.db.dialect == "postgres":
            return logical_state(self.store)
        return logical_state(self.db)


@pytest.fixture
def kit(wardian_home: Path, backend: str) -> Iterator[Kit]:
    """The kit on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    registry = AgentRegistry(open_state_db())
    owner = registry.add("alice", provider="codex")
    other = registry.add("bob", provider="codex")
    store = MemoryStore(open_memory_db())
    k = Kit(wardian_home, owner, other, store)
    yield k


@pytest.fixture
def revise_op() -> Callable[..., dict[str, Any]]:
    def make(record: Record, **fields: Any) -> dict[str, Any]:
        return {"op": "revise", "memory_id": record.id,
                "expected_revision_id": record.current_revision_id, **fields}
    return make
