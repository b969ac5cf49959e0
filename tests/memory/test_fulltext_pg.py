"""PostgreSQL full-text search (``memory`` migration 7): PostgreSQL's own text search, a
generated ``tsvector`` with Snowball English stems, in place of the FTS5 emulation that
migrations 2-5 built; identifiers split into words as on SQLite, query syntax is inert,
and a store the old schema wrote is migrated (its functions dropped, its rows indexed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

_EMULATION = ["fts5_porter", "fts5_porter_cv", "fts_plain", "fts_query", "fts_stem",
              "fts_text", "fts_vector", "records_fts_sync"]
"""The functions migrations 2-5 created in the ``memory`` schema."""


def _functions(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return [r[0] for r in conn.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'memory' ORDER BY 1")]


def _save(store: MemoryStore, text: str) -> str:
    return store.save("agent-1", text, evidence="made up for this test",
                      scope=Scope("agent"), actor="test").id


def test_a_write_without_the_schema_on_the_search_path_indexes_the_record(
        pg_url: str, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore(open_memory_db())
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
    assert [r.id for r in store.index.recall("agent-1", "thursdays")] == [rid]
    assert [r.id for r in store.index.recall("agent-1", "nightly backups")] == ["r-other"]


@pytest.mark.parametrize("text, query", [
    ("Publish refunds to the heron.payments.v2 topic.", "payments topic"),
    ("The settings live in pnpm-workspace.yaml at the root.", "yaml settings"),
    ("Mail the owner at ops@quarry.example when it breaks.", "quarry owner"),
    ("Generously sized caches help the universities.", "generous university caches"),
    ("Call load_config() before serving.", "load config"),
    ("The nightly job re-indexed the archive—twice.", "indexing archive"),
])
def test_identifiers_and_stems_match_on_both_backends(backend: str, text: str,
                                                      query: str) -> None:
    """Dotted names, file names, addresses, snake_case and dashes split into words, and
    another form of a word finds it (``indexing`` finds ``indexed``): the same record
    comes back on both backends, holding every query word."""
    store = MemoryStore(open_memory_db())
    rid = _save(store, text)
    _save(store, "Something else entirely.")
    assert [r.id for r in store.index.recall("agent-1", query)] == [rid]
    rowid = store.conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]
    seen = {c.rowid: c for c in store.index.recall_considered("agent-1", query).candidates}
    assert sorted(seen[rowid].held) == sorted(query.split())


@pytest.mark.parametrize("query", [
    '"rollback plan" -staging', "rollback OR (plan", "rollback & !plan | 'x':*",
    "rollback <-> plan", "plan:* rollback\\", "'rollback'''"])
def test_query_syntax_is_inert(backend: str, query: str) -> None:
    """Quotes, negation and tsquery/FTS5 operators in a query are plain text: no error,
    and the record holding its words comes back."""
    store = MemoryStore(open_memory_db())
    rid = _save(store, "The rollback plan for the billing service lives in the runbook.")
    _save(store, "Something else entirely.")
    assert [r.id for r in store.index.recall("agent-1", query)][:1] == [rid]


@pytest.mark.parametrize("text, filter_text", [
    ("Deployments freeze on Fridays.", "deplo"),
    ("Run load_config() before serving.", "load_conf"),
    ("Staging lives at heron.payments.v2.", "payments"),
])
def test_the_garden_text_filter_matches_word_prefixes(backend: str, text: str,
                                                      filter_text: str) -> None:
    store = MemoryStore(open_memory_db())
    rid = _save(store, text)
    _save(store, "Something else entirely.")
    records, total = store.page("agent-1", text=filter_text)
    assert ([r.id for r in records], total) == ([rid], 1)


def test_a_new_store_has_no_emulation_functions(pg_url: str) -> None:
    from wardian.memory.db import MemoryDB

    MemoryDB.open_at(pg_url)
    assert _functions(pg_url) == []


def _old_store(url: str, records: list[tuple[str, str]]) -> None:
    """`url`'s ``memory`` schema as the Wardian before migration 7 left it (migrations
    1-6 as shipped: 3 and 5 from ``data/pg_fts5_emulation.sql``), holding `records`."""
    import re

    from tests.pg_memory import records_at_migration

    from wardian._db import NamedMigration, migrate_component
    from wardian._pg import PgConnection
    from wardian.memory.schema_pg import POSTGRES_MIGRATIONS

    shipped = dict(re.findall(
        r"-- @@ migration (\d+) \w+ sha256 \w+\n(.*?)(?=\n-- @@ |\Z)",
        (Path(__file__).parent / "data" / "pg_fts5_emulation.sql").read_text(), re.S))
    old = PgConnection(url, "memory")
    try:
        migrate_component(old, "memory", [
            NamedMigration(m.name, shipped.get(str(v), m.apply))
            for v, m in enumerate(POSTGRES_MIGRATIONS[:6], start=1)])
    finally:
        old.close()
    records_at_migration(url, 6, records)


def test_an_old_store_is_migrated_to_native_search(pg_url: str, wardian_home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A store the FTS5 emulation wrote: after migration 7 none of its functions is
    left, its records are indexed by PostgreSQL's own search, and stems match."""
    _old_store(pg_url, [("r-indexed", "The archive was indexed overnight."),
                        ("r-other", "Backups run nightly at two.")])
    assert set(_EMULATION) <= set(_functions(pg_url))  # the old schema, as shipped
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore(open_memory_db())
    assert _functions(pg_url) == []
    assert store.conn.execute(
        "SELECT count(*) FROM pg_ts_config WHERE cfgname = 'wardian_fts'").fetchone()[0] == 0
    assert [r.id for r in store.index.recall("agent-1", "indexing archive")] == ["r-indexed"]
    assert [r.id for r in store.index.recall("agent-1", '"backup" -nightly')] == ["r-other"]
    rid = _save(store, "Reindexing starts at midnight.")
    assert [r.id for r in store.index.recall("agent-1", "reindexed midnight")] == [rid]
