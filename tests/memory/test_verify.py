"""`MemoryStore.verify()` and the doctor's ``memory-history`` check (issue 13): a record that
drifted from its latest revision, or a full-text index out of step, is reported by id."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore


def _store_with_records(home: Path) -> tuple[MemoryStore, list[str]]:
    store = MemoryStore(open_memory_db())
    ids = [store.save("agent-1", text, evidence=f"the user said: {text}", kind="stable",
                      scope=Scope("workspace", str(home)), actor="test").id
           for text in ("Use tabs, not spaces.", "Deploys go out on Tuesdays \"only\".")]
    store.update("agent-1", ids[0], text="Use tabs for indentation.", actor="test")
    return store, ids


def test_a_consistent_store_verifies_clean(wardian_home: Path) -> None:
    store, _ = _store_with_records(wardian_home)
    assert store.verify() == []


def test_drift_from_the_latest_revision_and_index_gaps_are_named(wardian_home: Path) -> None:
    store, ids = _store_with_records(wardian_home)
    raw = sqlite3.connect(wardian_home / "memory.db")
    try:
        with raw:
            # A write that bypassed the store: no revision records it.
            raw.execute("UPDATE records SET text = 'Use spaces.' WHERE id = ?", (ids[0],))
            # The full-text index loses the other record's row.
            row = raw.execute("SELECT rowid, text, evidence FROM records WHERE id = ?",
                              (ids[1],)).fetchone()
            raw.execute("INSERT INTO records_fts (records_fts, rowid, text, evidence)"
                        " VALUES ('delete', ?, ?, ?)", row)
    finally:
        raw.close()
    problems = store.verify()
    assert any(p.startswith(f"record {ids[0]}: differs from its latest revision")
               for p in problems), problems
    assert any(p.startswith(f"record {ids[1]}: missing from the full-text index")
               for p in problems), problems
    assert len(problems) == 2, problems


def test_doctor_runs_the_check(cli: CliRunner, wardian_home: Path) -> None:
    _, ids = _store_with_records(wardian_home)
    ok = invoke(cli, "doctor", "--check", "memory-history", "--json")
    assert ok.exit_code == 0, ok.output
    raw = sqlite3.connect(wardian_home / "memory.db")
    try:
        with raw:
            raw.execute("UPDATE records SET evidence = 'edited by hand' WHERE id = ?", (ids[1],))
    finally:
        raw.close()
    bad = invoke(cli, "doctor", "--check", "memory-history", "--json")
    assert bad.exit_code == 1, bad.output
    assert ids[1] in json.dumps(json.loads(bad.stdout))


def test_on_postgres_drift_is_named_and_the_index_follows_any_write(
        pg_url: str, wardian_home: Path, monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store, ids = _store_with_records(wardian_home)
    assert store.verify() == []
    with store.db.atomic():
        # A write that bypassed the store: no revision, but the index follows it.
        store.conn.execute("UPDATE records SET text = 'Use quokkas.' WHERE id = ?", (ids[0],))
    problems = store.verify()
    assert [p.split(":")[0] for p in problems] == [f"record {ids[0]}"], problems
    assert problems[0].startswith(f"record {ids[0]}: differs from its latest revision")
    assert [r.id for r in store.index.recall("agent-1", "quokkas")] == [ids[0]]


def _corrupt_every_kind(store: MemoryStore, backend: str, home: Path) -> dict[str, str]:
    """One record per kind of row, each broken by a write that bypassed the store;
    returns the start of the line verify must print for each (by record id)."""
    from wardian.memory.embedding import DIM, MODEL
    from wardian.memory.models import Source

    scope = Scope("workspace", str(home))
    ids = [store.save("agent-1", f"Record number {word} keeps its own words.",
                      evidence=f"the user said {word}", scope=scope, actor="test",
                      sources=[Source("url", f"https://example.test/{word}")]).id
           for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                        "hotel", "india")]
    # Untouched: text JSON must escape (quotes, a backslash, control characters, non-ASCII).
    store.save("agent-1", 'An "untouched" record:\ttabs\\ and\nlines, ünïcödé ✓.',
               evidence="said so", scope=scope, actor="test")
    store.save("agent-1", "An agent-wide record.", evidence="said so", scope=Scope("agent"),
               actor="test")
    conn = store.conn
    rev = {i: conn.execute("SELECT current_revision_id FROM records WHERE id = ?",
                           (i,)).fetchone()[0] for i in ids}
    with store.db.atomic():
        conn.execute("DELETE FROM record_vectors")
        for i in ids:
            conn.execute("INSERT INTO record_vectors (record_id, revision_id, model, vector)"
                         " VALUES (?, ?, ?, ?)", (i, rev[i], MODEL, bytes(2 * DIM)))
        # a record row edited by hand: no revision holds it
        conn.execute("UPDATE records SET kind = 'current' WHERE id = ?", (ids[0],))
        # a revision's snapshot edited: the scope no longer matches
        conn.execute("UPDATE revisions SET snapshot_json = replace(snapshot_json,"
                     " '\"workspace\"', '\"agent\"') WHERE revision_id = ?", (rev[ids[1]],))
        # a newer revision than the one the record names
        conn.execute("INSERT INTO revisions (revision_id, record_id, seq, snapshot_json, actor,"
                     " created_at) SELECT 'r-newer', record_id, seq + 1, snapshot_json, actor,"
                     " created_at FROM revisions WHERE revision_id = ?", (rev[ids[2]],))
        # every revision of a record gone
        conn.execute("DELETE FROM revisions WHERE record_id = ?", (ids[3],))
        # a source row changed
        conn.execute("UPDATE record_sources SET locator = 'https://elsewhere.test'"
                     " WHERE record_id = ?", (ids[4],))
        # a vector left at an older revision, and one of the wrong size
        conn.execute("UPDATE record_vectors SET revision_id = 'r-old' WHERE record_id = ?",
                     (ids[5],))
        conn.execute("UPDATE record_vectors SET vector = ? WHERE record_id = ?",
                     (bytes(10), ids[6]))
        # the full-text index out of step with a record's evidence (on PostgreSQL it is
        # a generated column, which no write can set apart from its text)
        if backend == "sqlite":
            row = conn.execute("SELECT rowid, text, evidence FROM records WHERE id = ?",
                               (ids[7],)).fetchone()
            conn.execute("INSERT INTO records_fts (records_fts, rowid, text, evidence)"
                         " VALUES ('delete', ?, ?, ?)", tuple(row))
            conn.execute("INSERT INTO records_fts (rowid, text, evidence) VALUES (?, ?, ?)",
                         (row[0], row[1], "some other evidence"))
    wanted = {
        ids[0]: f"record {ids[0]}: differs from its latest revision {rev[ids[0]]}",
        ids[1]: f"record {ids[1]}: differs from its latest revision {rev[ids[1]]}",
        ids[2]: f"record {ids[2]}: current revision {rev[ids[2]]} is not its latest (r-newer)",
        ids[3]: f"record {ids[3]}: has no revision",
        ids[4]: f"record {ids[4]}: differs from its latest revision {rev[ids[4]]}",
        ids[5]: f"record {ids[5]}: its vector is of revision r-old, not the current"
                f" {rev[ids[5]]}",
        ids[6]: f"record {ids[6]}: its {MODEL} vector holds 10 bytes, not {2 * DIM}",
    }
    if backend == "sqlite":
        wanted[ids[7]] = f"record {ids[7]}: its evidence is not in the full-text index as stored"
        # the index loses a record's row, and holds a row of no record
        row = conn.execute("SELECT rowid, text, evidence FROM records WHERE id = ?",
                           (ids[8],)).fetchone()
        with store.db.atomic():
            conn.execute("INSERT INTO records_fts (records_fts, rowid, text, evidence)"
                         " VALUES ('delete', ?, ?, ?)", tuple(row))
            conn.execute("INSERT INTO records_fts (rowid, text, evidence)"
                         " VALUES (999999, 'nobody', 'no record')")
        wanted[ids[8]] = f"record {ids[8]}: missing from the full-text index"
        wanted["999999"] = "full-text index row 999999 has no record"
    return wanted


def _check_every_kind(problems: list[str], wanted: dict[str, str]) -> None:
    assert len(problems) == len(wanted), problems
    for key, start in wanted.items():
        assert any(p.startswith(start) for p in problems), (key, start, problems)


def test_every_kind_of_broken_row_is_named(backend: str, wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    assert store.verify() == []
    wanted = _corrupt_every_kind(store, backend, wardian_home)
    _check_every_kind(store.verify(), wanted)


def test_read_only_verify_names_the_same_rows(wardian_home: Path) -> None:
    """The doctor's connection is ``mode=ro``: FTS5's integrity-check (an INSERT) cannot
    run there, and the comparison index in ``temp`` names the same records."""
    from wardian._db import open_readonly
    from wardian.memory.db import MemoryDB

    store = MemoryStore(open_memory_db())
    wanted = _corrupt_every_kind(store, "sqlite", wardian_home)
    conn = open_readonly(wardian_home / "memory.db")
    try:
        problems = MemoryStore(MemoryDB(wardian_home / "memory.db", conn)).verify()
        assert conn.execute("SELECT name FROM sqlite_temp_master").fetchall() == []
    finally:
        conn.close()
    _check_every_kind(problems, wanted)


def test_words_reordered_in_the_index_are_seen_where_the_check_may_write(
        wardian_home: Path) -> None:
    """Same words, same lengths, another order: only FTS5's own check sees it."""
    store, ids = _store_with_records(wardian_home)
    conn = store.conn
    row = conn.execute("SELECT rowid, text, evidence FROM records WHERE id = ?",
                       (ids[0],)).fetchone()
    with store.db.atomic():
        conn.execute("INSERT INTO records_fts (records_fts, rowid, text, evidence)"
                     " VALUES ('delete', ?, ?, ?)", tuple(row))
        conn.execute("INSERT INTO records_fts (rowid, text, evidence) VALUES (?, ?, ?)",
                     (row[0], " ".join(reversed(str(row[1]).split())), row[2]))
    problems = store.verify()
    assert len(problems) == 1 and "full-text index does not match" in problems[0], problems
