"""The SQLite plumbing: atomic() commits, rolls back, nests; migrations are all-or-nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from wardian._db import atomic, connect, migrate_component, migrate_user_version
from wardian.errors import StoreError


def test_connect_sets_wal_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000


def test_atomic_commits_and_rolls_back(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (v INTEGER)")
    with atomic(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(RuntimeError), atomic(conn):
        conn.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("boom")
    assert [r[0] for r in conn.execute("SELECT v FROM t")] == [1]
    assert not conn.in_transaction


def test_nested_atomic_rolls_back_only_the_savepoint(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE t (v INTEGER)")
    with atomic(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), atomic(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            raise ValueError
        conn.execute("INSERT INTO t VALUES (3)")
    assert [r[0] for r in conn.execute("SELECT v FROM t ORDER BY v")] == [1, 3]


def test_failed_migration_leaves_nothing_and_stays_pending(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    good = "CREATE TABLE a (v INTEGER);"
    bad = "CREATE TABLE b (v INTEGER); INSERT INTO missing VALUES (1);"
    with pytest.raises(StoreError, match="migration 2 failed"):
        migrate_user_version(conn, [good, bad])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "a" in tables and "b" not in tables
    assert migrate_user_version(conn, [good, "CREATE TABLE b (v INTEGER);"]) == 2


def test_newer_database_is_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    migrate_user_version(conn, ["CREATE TABLE a (v INTEGER);", "CREATE TABLE b (v INTEGER);"])
    with pytest.raises(StoreError, match="newer than this Wardian"):
        migrate_user_version(conn, ["CREATE TABLE a (v INTEGER);"])


def test_components_migrate_independently(tmp_path: Path) -> None:
    conn = connect(tmp_path / "state.db")
    migrate_component(conn, "one", ["CREATE TABLE one_t (v INTEGER);"])
    migrate_component(conn, "two", ["CREATE TABLE two_t (v INTEGER);", "ALTER TABLE two_t ADD w;"])
    rows = conn.execute(
        "SELECT component, version FROM schema_migrations ORDER BY component, version"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("one", 1), ("two", 1), ("two", 2)]
    # Re-running is a no-op.
    assert migrate_component(conn, "one", ["CREATE TABLE one_t (v INTEGER);"]) == 1


def test_unopenable_database_is_a_store_error(tmp_path: Path) -> None:
    not_db = tmp_path / "x.db"
    not_db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises((StoreError, sqlite3.DatabaseError)):
        conn = connect(not_db)
        migrate_user_version(conn, ["CREATE TABLE a (v INTEGER);"])
