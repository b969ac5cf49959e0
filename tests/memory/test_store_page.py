"""`MemoryStore.page`: the operator's paged, filtered record list (Garden, issue 17)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from wardian.errors import UsageError
from wardian.memory.db import MemoryDB
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

AGENT = "00000000-0000-4000-8000-00000000000a"
OTHER = "00000000-0000-4000-8000-00000000000b"


@pytest.fixture
def store(tmp_path: Path, backend: str) -> Iterator[MemoryStore]:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    s = MemoryStore(MemoryDB.open(tmp_path / "memory.db"))
    yield s


def _save(store: MemoryStore, text: str, agent: str = AGENT, **kw: object) -> str:
    kw.setdefault("scope", Scope.agent())
    return store.save(agent, text, evidence=str(kw.pop("evidence", "seen")), actor="t",
                      **kw).id  # type: ignore[arg-type]


def test_pages_cover_every_record_once_newest_first(store: MemoryStore) -> None:
    ids = [_save(store, f"note number {i}") for i in range(23)]
    _save(store, "someone else's", agent=OTHER)
    seen: list[str] = []
    for page in range(3):
        records, total = store.page(AGENT, limit=10, offset=page * 10)
        assert total == 23
        seen += [r.id for r in records]
    assert sorted(seen) == sorted(ids) and len(seen) == 23
    newest, _ = store.page(AGENT, limit=1)
    assert newest[0].id == ids[-1]


def test_text_matches_word_prefixes_in_text_or_evidence_and_id_prefixes(
    store: MemoryStore,
) -> None:
    kiln = _save(store, "The kiln in the back shed runs hot", evidence="glaze notes")
    _save(store, "Pottery wheel needs oil")
    assert [r.id for r in store.page(AGENT, text="KILN")[0]] == [kiln]
    assert [r.id for r in store.page(AGENT, text="shed glaz")[0]] == [kiln]  # both, prefixes
    assert store.page(AGENT, text="kiln wheel")[1] == 0  # every word must match
    assert [r.id for r in store.page(AGENT, text=kiln[:8])[0]] == [kiln]
    assert store.page(OTHER, text="kiln")[1] == 0


def test_search_syntax_in_the_input_is_plain_text(store: MemoryStore) -> None:
    odd = _save(store, 'Quote "exactly" and NOT this OR that: 100% done_ish')
    for query in ('"exactly', "NOT this", "OR", "that:", "done_ish", "100%"):
        assert odd in [r.id for r in store.page(AGENT, text=query)[0]], query
    for query in ("*", "(", '"', "%"):  # no word characters: a plain substring
        assert store.page(AGENT, text=query)[1] == (1 if query in {'"', "%"} else 0), query


def test_filters_by_kind_scope_and_status(store: MemoryStore) -> None:
    current = _save(store, "Working on the migration", kind="current")
    workspace = _save(store, "Repo uses tabs", scope=Scope.workspace("/srv/repo"))
    gone = _save(store, "Old fact")
    store.remove(None, gone, actor="t", reason="stale")
    assert [r.id for r in store.page(AGENT, kind="current")[0]] == [current]
    assert [r.id for r in store.page(AGENT, scope_kind="workspace")[0]] == [workspace]
    assert [r.id for r in store.page(AGENT, status="removed")[0]] == [gone]
    assert store.page(AGENT, status=None)[1] == 3
    for bad in ({"kind": "odd"}, {"scope_kind": "global"}, {"status": "lost"}, {"limit": 0}):
        with pytest.raises(UsageError):
            store.page(AGENT, **bad)


def test_a_deep_page_is_read_from_the_page_index(store: MemoryStore) -> None:
    if store.db.dialect == "postgres":
        pytest.skip("reads SQLite's query plan (PostgreSQL plans by table statistics)")
    plan = store.conn.execute(
        "EXPLAIN QUERY PLAN SELECT rowid FROM records WHERE agent_id = ? AND status = ?"
        " ORDER BY updated_at DESC, id DESC LIMIT 50 OFFSET 5000", (AGENT, "active"),
    ).fetchall()
    details = " ".join(str(row[3]) for row in plan)
    assert "records_page" in details and "TEMP B-TREE" not in details, details


def test_the_startup_reads_step_the_startup_index_on_sqlite(store: MemoryStore) -> None:
    # SQLite is told which index to step (its ranges are in time order); PostgreSQL gets
    # the same statement without the hint and must still answer it.
    kept = _save(store, "A stable note")
    statements: list[str] = []
    if isinstance(store.conn, sqlite3.Connection):
        store.conn.set_trace_callback(statements.append)
    assert [r.id for r in store.startup_set(AGENT, None)] == [kept]
    assert store.startup_count(AGENT, "/srv/repo") == 1
    if isinstance(store.conn, sqlite3.Connection):
        store.conn.set_trace_callback(None)
        startup = [s for s in statements if "scope_kind = " in s and "FROM records" in s]
        assert len(startup) == 6 and all("INDEXED BY records_startup" in s for s in startup)
