"""PostgreSQL full-text search (issue 18, ``memory`` migration 2): words are cut and
stemmed as FTS5's ``porter unicode61`` cuts them, so both backends find the same records;
and the trigger runs with its own search_path, so a client whose ``search_path`` lacks
``memory`` (psql, a migration tool, another role) can still write records."""

from __future__ import annotations

from pathlib import Path

import pytest

from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore


def test_a_write_without_the_schema_on_the_search_path_indexes_the_record(
        pg_url: str, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore()
    rid = store.save("agent-1", "Deploys go out on Tuesdays.", evidence="the user said so",
                     scope=Scope("agent"), actor="test").id
    with psycopg.connect(pg_url, autocommit=True) as other:
        other.execute("SET search_path = ''")
        other.execute("UPDATE memory.records SET text = 'Deploys go out on Thursdays only.'"
                      " WHERE id = %s", (rid,))
        other.execute(
            "INSERT INTO memory.records (id, agent_id, kind, scope_kind, text, evidence,"
            " status, created_at, updated_at, current_revision_id) VALUES ('r-other',"
            " 'agent-1', 'stable', 'agent', 'Backups run nightly at two.', 'ops said so',"
            " 'active', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'none')")
        rows = other.execute(
            "SELECT id, fts = to_tsvector('memory.wardian_fts', memory.fts_text(text))"
            " || to_tsvector('memory.wardian_fts', memory.fts_text(evidence)), doclen"
            " FROM memory.records"
            ).fetchall()
    assert {r[0]: (r[1], r[2]) for r in rows} == {rid: (True, 10), "r-other": (True, 8)}
    assert [r.id for r in store.recall("agent-1", "thursdays")] == [rid]
    assert [r.id for r in store.recall("agent-1", "nightly backups")] == ["r-other"]


@pytest.mark.parametrize("text, query", [
    ("Publish refunds to the heron.payments.v2 topic.", "payments topic"),
    ("The settings live in pnpm-workspace.yaml at the root.", "yaml settings"),
    ("Mail the owner at ops@quarry.example when it breaks.", "quarry owner"),
    ("Generously sized caches help the universities.", "generous university caches"),
    ("Call load_config() before serving.", "load config"),
])
def test_identifiers_and_stems_match_as_on_sqlite(backend: str, text: str, query: str) -> None:
    """Dotted names, file names, addresses and snake_case split into words, stems as
    Porter cuts them: the same record comes back on both backends."""
    store = MemoryStore()
    rid = store.save("agent-1", text, evidence="the user said so", scope=Scope("agent"),
                     actor="test").id
    store.save("agent-1", "Something else entirely.", evidence="noise", scope=Scope("agent"),
               actor="test")
    assert [r.id for r in store.recall("agent-1", query)] == [rid]
    rowid = store.conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]
    seen = {c.rowid: c for c in store.recall_considered("agent-1", query).candidates}
    assert sorted(seen[rowid].held) == sorted(query.split())  # every word, by its words


def test_the_upgrade_indexes_existing_records_again(pg_url: str, wardian_home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian._db import close_databases, migrate_component
    from wardian._pg import PgConnection
    from wardian.memory.schema_pg import POSTGRES_MIGRATIONS

    old = PgConnection(pg_url, "memory")
    try:
        migrate_component(old, "memory", POSTGRES_MIGRATIONS[:1])  # type: ignore[arg-type]
        old.execute(
            "INSERT INTO records (id, agent_id, kind, scope_kind, text, evidence, status,"
            " created_at, updated_at, current_revision_id) VALUES ('r-old', 'agent-1',"
            " 'stable', 'agent', 'Publish to heron.payments.v2 now.', 'said so', 'active',"
            " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'none')")
        assert old.execute("SELECT fts @@ 'heron'::tsquery FROM records").fetchone()[0] is False
    finally:
        old.close()
    close_databases(pg_url)
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore()
    row = store.conn.execute("SELECT fts @@ 'heron'::tsquery, doclen FROM records").fetchone()
    assert (row[0], row[1]) == (True, 8)
    assert [r.id for r in store.recall("agent-1", "heron payments")] == ["r-old"]
