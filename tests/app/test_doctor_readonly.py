"""`wardian doctor` only reads: the real CLI in a child process leaves ``state.db`` as it
found it (bytes and mtime), also a file written by an older Wardian that a read-write open
would migrate, and says what upgrades such a file instead of upgrading it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from tests.app.test_doctor import write_tick
from tests.conftest import invoke
from typer.testing import CliRunner


def _installation(cli: CliRunner, home: Path) -> None:
    """An agent, a session-close invoker on it and a recorded run, all connections closed."""
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick()
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "tick",
                 "--name", "t", "--agent", "ada", "--assignments", "{}")
    assert res.exit_code == 0, res.output
    for db in (StateDB.open(home / "state.db"), MemoryDB.open(home / "memory.db")):
        db.close()  # checkpointed: the file holds everything, nothing waits in a -wal


def _snapshot(home: Path) -> dict[str, tuple[bytes, int, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode)
            for p in sorted(home.glob("*.db"))}


def _doctor(home: Path, *args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "wardian", "doctor", "--json", *args],
                          env={**os.environ, "WARDIAN_HOME": str(home)}, capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, json.loads(proc.stdout)


def _findings(doc: dict[str, Any], check: str) -> list[dict[str, Any]]:
    (entry,) = [c for c in doc["checks"] if c["name"] == check]
    return list(entry["findings"])


def test_doctor_leaves_the_databases_as_it_found_them(
        cli: CliRunner, wardian_home: Path) -> None:
    _installation(cli, wardian_home)
    before = _snapshot(wardian_home)
    assert {"state.db", "memory.db"} <= set(before)
    code, doc = _doctor(wardian_home)
    assert code == 0, doc
    (ok,) = _findings(doc, "invokers")
    assert ok["status"] == "ok" and "1 invoker(s)" in ok["message"]
    assert _snapshot(wardian_home) == before


def test_a_component_the_file_never_held_reads_as_empty_and_is_not_created(
        cli: CliRunner, wardian_home: Path) -> None:
    # As an installation that never refreshed a catalog with an older Wardian leaves it:
    # no model_catalog table. A read-write open (what the invokers and catalog checks once
    # did) creates it; the doctor reads it as empty and writes nothing.
    _installation(cli, wardian_home)
    with closing(sqlite3.connect(wardian_home / "state.db")) as conn, conn:
        conn.execute("DROP TABLE model_catalog")
        conn.execute("DELETE FROM schema_migrations WHERE component = 'model_catalog'")
    before = _snapshot(wardian_home)
    code, doc = _doctor(wardian_home)
    assert code == 0, doc
    assert _snapshot(wardian_home) == before
    with closing(sqlite3.connect(wardian_home / "state.db")) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'model_catalog'"
                            ).fetchone()[0] == 0


def test_a_component_behind_this_wardian_is_reported_not_migrated(
        cli: CliRunner, wardian_home: Path) -> None:
    _installation(cli, wardian_home)
    with closing(sqlite3.connect(wardian_home / "state.db")) as conn, conn:
        conn.execute("DELETE FROM schema_migrations WHERE component = 'invokers'"
                     " AND version >= 2")  # as if migrated by a Wardian with one migration
    before = _snapshot(wardian_home)
    code, doc = _doctor(wardian_home)
    assert _snapshot(wardian_home) == before  # not migrated, nothing written
    assert code == 1
    (problem,) = [f for f in _findings(doc, "invokers") if f["status"] == "problem"]
    assert "invokers schema version 1 is older than this Wardian's (3)" in problem["message"]
    assert "wardian automation session-close list" in problem["fix"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes read-only files")
def test_doctor_checks_a_state_db_it_cannot_write(
        cli: CliRunner, wardian_home: Path) -> None:
    _installation(cli, wardian_home)
    for db in wardian_home.glob("*.db"):
        db.chmod(0o444)
    try:
        before = _snapshot(wardian_home)
        code, doc = _doctor(wardian_home)
        assert code == 0, doc
        assert _snapshot(wardian_home) == before
    finally:
        for db in wardian_home.glob("*.db"):
            db.chmod(0o600)


def _doctor_on_a_read_only_mount(home: Path) -> tuple[int, dict[str, Any]] | None:
    """`wardian doctor --json` in a child whose view of `home` is a read-only bind mount
    (a user and mount namespace of its own: `unshare -rm`); None when this system offers
    no such namespace."""
    import shutil

    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    script = ('mount --bind -o ro "$1" "$1" || exit 99; shift; exec "$@"')
    proc = subprocess.run([unshare, "-rm", "sh", "-c", script, "sh", str(home),
                           sys.executable, "-m", "wardian", "doctor", "--json"],
                          env={**os.environ, "WARDIAN_HOME": str(home)},
                          capture_output=True, text=True, timeout=120)
    if proc.returncode == 99 or (proc.returncode != 0 and not proc.stdout.strip()):
        return None
    return proc.returncode, json.loads(proc.stdout)


def test_doctor_reads_wal_databases_on_a_read_only_mount(
        cli: CliRunner, wardian_home: Path) -> None:
    # Both files in WAL mode, cleanly closed: no -shm beside them, and none can be created.
    _installation(cli, wardian_home)
    assert not list(wardian_home.glob("*-shm"))
    answer = _doctor_on_a_read_only_mount(wardian_home)
    if answer is None:
        pytest.skip("no user/mount namespace here (unshare -rm) to mount a folder read-only")
    code, doc = answer
    assert code == 1  # the read-only mount itself is a problem: nothing can be saved
    problems = [(c["name"], f) for c in doc["checks"] for f in c["findings"]
                if f["status"] == "problem"]
    assert [name for name, _ in problems] == ["data-dir"], problems
    assert "mounted read-only" in problems[0][1]["message"]
    data = _findings(doc, "data-dir")
    assert sum("read as immutable" in f["message"] for f in data) == 2, data
    (invokers,) = _findings(doc, "invokers")
    assert invokers["status"] == "ok" and "1 invoker(s)" in invokers["message"]
