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
        other.execute("SET search_path = memory")  # the index functions' own schema
        rows = other.execute(
            "SELECT id, fts = fts_vector(text) || fts_vector(evidence), doclen FROM records"
            ).fetchall()
    assert {r[0]: (r[1], r[2]) for r in rows} == {rid: (True, 10), "r-other": (True, 8)}
    assert [r.id for r in store.index.recall("agent-1", "thursdays")] == [rid]
    assert [r.id for r in store.index.recall("agent-1", "nightly backups")] == ["r-other"]


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
    assert [r.id for r in store.index.recall("agent-1", query)] == [rid]
    rowid = store.conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]
    seen = {c.rowid: c for c in store.index.recall_considered("agent-1", query).candidates}
    assert sorted(seen[rowid].held) == sorted(query.split())  # every word, by its words


def test_the_upgrade_indexes_existing_records_again(pg_url: str, wardian_home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pg_memory import records_at_migration

    assert records_at_migration(pg_url, 1, [("r-old", "Publish to heron.payments.v2 now.")],
                                "SELECT fts @@ 'heron'::tsquery FROM records") is False
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore()
    row = store.conn.execute("SELECT fts @@ 'heron'::tsquery, doclen FROM records").fetchone()
    assert (row[0], row[1]) == (True, 8)
    assert [r.id for r in store.index.recall("agent-1", "heron payments")] == ["r-old"]


# --- non-ASCII words (``memory`` migration 3) ---------------------------------------------
# Made-up records whose words the queries write in another case, or without the Latin
# diacritics FTS5's unicode61 drops. The test cluster's databases have ctype C, under which
# PostgreSQL lower-cased only ASCII: ``ärger`` did not find ``ÄRGER`` there.

FOLDED_RECORDS = [
    "Der ÄRGER mit dem Ölfilter begann im Frühjahr.",
    "L'ÉCOLE de Montréal ferme à midi le vendredi.",
    "Сервер ПРИВЕТСТВИЯ перезапускается каждую ночь.",
    "Η ΟΔΟΣ προς τον ΔΙΑΚΟΜΙΣΤΉ είναι κλειστή.",
    "Crème brûlée is served at the Zürich offsite.",
    "KJØRETØY-data ligger i Ålesund→lageret.",
    "The slab measures 12m² and costs 40€ per square metre.",
    "Something else entirely about the build queue.",
]

FOLDED_QUERIES = [
    ("ärger", 0), ("ÄRGER ölfilter", 0), ("argernis olfilter fruhjahr", 0),
    ("école", 1), ("ECOLE montreal", 1),
    ("приветствия", 2), ("ПЕРЕЗАПУСКАЕТСЯ сервер", 2),
    ("οδος", 3), ("διακομιστή", 3),
    ("creme brulee", 4), ("ZÜRICH offsite", 4), ("zurich", 4),
    ("kjøretøy", 5), ("ÅLESUND", 5), ("lageret", 5),
    ("12m²", 6), ("€ slab", 6),
]


def _save_all(store: MemoryStore) -> list[str]:
    return [store.save("agent-1", text, evidence="made up for this test",
                       scope=Scope("agent"), actor="test").id for text in FOLDED_RECORDS]


@pytest.mark.parametrize("query, expected", FOLDED_QUERIES)
def test_non_ascii_words_fold_as_on_sqlite(backend: str, query: str, expected: int) -> None:
    """Case and Latin diacritics fold as unicode61 folds them (``Ä``, ``ä`` -> ``a``), and
    unicode61's separators and word characters hold (``→`` splits, ``²`` does not): the
    same record comes back on both backends, and every query word counts for it."""
    store = MemoryStore()
    ids = _save_all(store)
    assert [r.id for r in store.index.recall("agent-1", query)][:1] == [ids[expected]]
    rowid = store.conn.execute("SELECT rowid FROM records WHERE id = ?",
                               (ids[expected],)).fetchone()[0]
    seen = {c.rowid: c for c in store.index.recall_considered("agent-1", query).candidates}
    held = {word for word in query.lower().split() if word != "argernis" and word != "€"}
    assert set(seen[rowid].held) == held


@pytest.mark.parametrize("text, expected", [("ärg", 0), ("ECOL", 1), ("ПРИВЕТ", 2),
                                            ("zür", 4), ("kjøre", 5)])
def test_the_garden_text_filter_folds_as_on_sqlite(backend: str, text: str,
                                                   expected: int) -> None:
    store = MemoryStore()
    ids = _save_all(store)
    records, total = store.page("agent-1", text=text)
    assert ([r.id for r in records], total) == ([ids[expected]], 1)


def _variants(word: str) -> set[str]:
    """`word` as a user might type it: other cases, Latin diacritics left off."""
    import unicodedata

    bare = "".join(ch for ch in unicodedata.normalize("NFD", word)
                   if unicodedata.category(ch) != "Mn" or not "\u0300" <= ch <= "\u036f")
    return {word, word.upper(), word.lower(), word.title(), bare, bare.upper()}


def test_any_case_or_diacritics_of_a_word_recalls_the_same_records_on_both_backends(
        pg_url: str, tmp_path: Path) -> None:
    """Every word of the made-up records, in every variant, as one-word and two-word
    queries: PostgreSQL returns exactly the records SQLite returns, in its order."""
    import re

    from wardian.memory.db import MemoryDB

    stores = [MemoryStore(db=MemoryDB.open_at(tmp_path / "memory.db")),
              MemoryStore(db=MemoryDB.open_at(pg_url))]
    texts: list[dict[str, str]] = []
    for store in stores:
        ids = _save_all(store)
        texts.append(dict(zip(ids, FOLDED_RECORDS, strict=True)))
    words = sorted({w for text in FOLDED_RECORDS for w in re.findall(r"\w+", text)
                    if len(w) > 3})
    queries = sorted({v for w in words for v in _variants(w)})
    queries += [f"{a} {b}" for a, b in zip(queries[::7], queries[3::7], strict=False)]
    found = 0
    for query in queries:
        answers = [[texts[i][r.id] for r in store.index.recall("agent-1", query)]
                   for i, store in enumerate(stores)]
        assert answers[1] == answers[0], query
        found += bool(answers[0])
    assert found >= 0.8 * len(queries)  # they do find records (not only stop words)


@pytest.mark.parametrize("first, last", [
    (0x1, 0xFFFF),
    # Planes 1-3, 14 and the start of 15 (4-13 are unassigned, 15-16 private use).
    pytest.param(0x10000, 0x3FFFF, marks=pytest.mark.slow),
    pytest.param(0xE0000, 0xF00FF, marks=pytest.mark.slow),
])
def test_every_code_point_separates_or_folds_as_unicode61_does(
        pg_url: str, first: int, last: int) -> None:
    """Each code point, between two letters: a separator (two words), or folded into
    the word exactly as SQLite's unicode61 folds it (the shipped table,
    `wardian.memory.fts_fold_pg`, is SQLite's own, and PostgreSQL applies it)."""
    import sqlite3

    import psycopg

    from wardian.memory.db import MemoryDB

    points = [c for c in range(first, last + 1) if not 0xD800 <= c <= 0xDFFF]
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61')")
    lite.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    with lite:
        lite.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)",
                         ((c, f"a{chr(c)}b") for c in points))
    expected: dict[int, list[str]] = {}
    for term, doc in lite.execute("SELECT term, doc FROM v ORDER BY doc, term"):
        expected.setdefault(int(doc), []).append(str(term))
    lite.close()
    MemoryDB.open_at(pg_url)  # migrated
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c, array(SELECT lexeme FROM unnest(to_tsvector('simple',"
            " memory.fts_text('a' || chr(c) || 'b'))) ORDER BY 1)"
            " FROM unnest(%s::int[]) c", (points,)).fetchall()
    differ = [(f"U+{c:04X}", expected.get(c), got) for c, got in rows
              if expected.get(c) != got]
    assert differ == []



def test_the_fold_upgrade_indexes_existing_non_ascii_records_again(
        pg_url: str, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pg_memory import records_at_migration

    # a database as migration 2 left it, with records written then
    records_at_migration(pg_url, 2, [("r-umlaut", "Der ÄRGER mit dem Ölfilter."),
                                     ("r-ascii", "Plain words about the filter.")])
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore()
    assert [r.id for r in store.index.recall("agent-1", "ärger olfilter")] == ["r-umlaut"]
    assert [r.id for r in store.index.recall("agent-1", "plain filter")][:1] == ["r-ascii"]
    from wardian.memory import fulltext_pg

    assert fulltext_pg.index_problems(store.conn) == []  # every row as the new rule cuts it


def test_the_schema_keeps_only_the_functions_recall_calls(pg_url: str) -> None:
    """Migration 4 dropped migration 1's ``bm25_term`` (recall scores in one query);
    migration 5's functions cut and stem words (`wardian.memory.fts_porter_pg`)."""
    import psycopg

    from wardian.memory.db import MemoryDB

    MemoryDB.open_at(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'memory' ORDER BY 1")]
    assert names == ["fts5_porter", "fts5_porter_cv", "fts_plain", "fts_query", "fts_stem",
                     "fts_text", "fts_vector", "records_fts_sync"]
