"""`MemoryStore.verify()` and the doctor's ``memory-history`` check (issue 13): a record that
drifted from its latest revision, or a full-text index out of step, is reported by id."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore


def _store_with_records(home: Path) -> tuple[MemoryStore, list[str]]:
    store = MemoryStore()
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


def test_on_postgres_drift_and_an_index_out_of_step_are_named(pg_url: str, wardian_home: Path,
                                                             monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store, ids = _store_with_records(wardian_home)
    assert store.verify() == []
    with store.db.atomic():
        # Writes that bypassed the store: no revision, and (trigger off) no index update.
        store.conn.execute("UPDATE records SET text = 'Use spaces.' WHERE id = ?", (ids[0],))
        store.conn.execute("ALTER TABLE records DISABLE TRIGGER records_fts_sync")
        store.conn.execute("UPDATE records SET evidence = 'by hand' WHERE id = ?", (ids[1],))
        store.conn.execute("ALTER TABLE records ENABLE TRIGGER records_fts_sync")
    problems = store.verify()
    assert any(p.startswith(f"record {ids[0]}: differs from its latest revision")
               for p in problems), problems
    assert any(p.startswith(f"record {ids[1]}: its text or evidence is not in the full-text")
               for p in problems), problems
    assert len(problems) == 3, problems  # ids[1] also differs from its revision
