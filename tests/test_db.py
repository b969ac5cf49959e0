"""The SQLite plumbing: atomic() commits, rolls back, nests; migrations are all-or-nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from wardian._db import (
    Migration,
    NamedMigration,
    atomic,
    connect,
    migrate_component,
    migrate_user_version,
)
from wardian.errors import StoreError


def named(*scripts: Migration) -> list[NamedMigration]:
    """Migrations m1, m2, ... for these scripts (the names only need to be stable)."""
    return [NamedMigration(f"m{i}", script) for i, script in enumerate(scripts, 1)]


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


def _parent_child(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TABLE child (v INTEGER, parent_id INTEGER REFERENCES parent(id)"
                 " DEFERRABLE INITIALLY DEFERRED)")
    conn.execute("CREATE TABLE note (v INTEGER)")
    return conn


def test_a_failing_commit_rolls_back_and_leaves_the_connection_usable(
        tmp_path: Path) -> None:
    conn = _parent_child(tmp_path / "x.db")
    # The deferred foreign key is checked at COMMIT: the block itself runs to its end.
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), atomic(conn):
        conn.execute("INSERT INTO note VALUES (1)")
        conn.execute("INSERT INTO child VALUES (1, 42)")
    assert not conn.in_transaction
    with atomic(conn):  # usable: a new transaction begins and commits
        conn.execute("INSERT INTO note VALUES (2)")
    other = sqlite3.connect(tmp_path / "x.db")
    try:
        assert [r[0] for r in other.execute("SELECT v FROM note")] == [2]
        assert other.execute("SELECT count(*) FROM child").fetchone()[0] == 0
    finally:
        other.close()


def test_a_trigger_that_ends_the_transaction_raises_its_own_error_from_a_savepoint(
        tmp_path: Path) -> None:
    conn = _parent_child(tmp_path / "x.db")
    conn.execute("CREATE TRIGGER no_sevens BEFORE INSERT ON note WHEN NEW.v = 7"
                 " BEGIN SELECT RAISE(ROLLBACK, 'no sevens'); END")
    with pytest.raises(sqlite3.IntegrityError, match="no sevens"), atomic(conn):
        conn.execute("INSERT INTO note VALUES (1)")
        with atomic(conn):
            conn.execute("INSERT INTO note VALUES (7)")
    assert not conn.in_transaction
    with atomic(conn):
        conn.execute("INSERT INTO note VALUES (3)")
    assert [r[0] for r in conn.execute("SELECT v FROM note")] == [3]


def test_failed_migration_leaves_nothing_and_stays_pending(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    good = "CREATE TABLE a (v INTEGER);"
    bad = "CREATE TABLE b (v INTEGER); INSERT INTO missing VALUES (1);"
    with pytest.raises(StoreError, match="migration 2 failed"):
        migrate_user_version(conn, named(good, bad))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "a" in tables and "b" not in tables
    assert migrate_user_version(conn, named(good, "CREATE TABLE b (v INTEGER);")) == 2


def test_newer_database_is_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    migrate_user_version(conn, named("CREATE TABLE a (v INTEGER);", "CREATE TABLE b (v INTEGER);"))
    with pytest.raises(StoreError, match="newer than this Wardian"):
        migrate_user_version(conn, named("CREATE TABLE a (v INTEGER);"))


def test_components_migrate_independently(tmp_path: Path) -> None:
    conn = connect(tmp_path / "state.db")
    migrate_component(conn, "one", named("CREATE TABLE one_t (v INTEGER);"))
    migrate_component(conn, "two", named("CREATE TABLE two_t (v INTEGER);",
                                         "ALTER TABLE two_t ADD w;"))
    rows = conn.execute(
        "SELECT component, version FROM schema_migrations ORDER BY component, version"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("one", 1), ("two", 1), ("two", 2)]
    # Re-running is a no-op.
    assert migrate_component(conn, "one", named("CREATE TABLE one_t (v INTEGER);")) == 1


def test_unopenable_database_is_a_store_error(tmp_path: Path) -> None:
    not_db = tmp_path / "x.db"
    not_db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises((StoreError, sqlite3.DatabaseError)):
        conn = connect(not_db)
        migrate_user_version(conn, named("CREATE TABLE a (v INTEGER);"))


def test_each_migration_is_recorded_with_its_name(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db")
    migrate_user_version(conn, [NamedMigration("create_a", "CREATE TABLE a (v INTEGER);"),
                                NamedMigration("add_a_w", "ALTER TABLE a ADD w;")],
                         component="memory")
    migrate_component(conn, "things", [NamedMigration("create_things", "CREATE TABLE t (v);")])
    rows = conn.execute("SELECT component, version, name FROM schema_migrations"
                        " ORDER BY component, version").fetchall()
    assert [tuple(r) for r in rows] == [
        ("memory", 1, "create_a"), ("memory", 2, "add_a_w"), ("things", 1, "create_things")]


def test_a_database_migrated_before_names_existed_is_named_on_open(tmp_path: Path) -> None:
    # What the release before named migrations left: bookkeeping rows without a name
    # column (state.db) and a bare user_version (memory.db).
    state = connect(tmp_path / "state.db")
    state.executescript(
        "CREATE TABLE schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL,"
        " applied_at TEXT NOT NULL, PRIMARY KEY (component, version));"
        "CREATE TABLE t (v); INSERT INTO t VALUES (7);"
        "INSERT INTO schema_migrations VALUES ('things', 1, '2026-11-01T00:00:00Z');")
    assert migrate_component(state, "things", [
        NamedMigration("create_things", "CREATE TABLE t (v);"),
        NamedMigration("add_things_w", "ALTER TABLE t ADD w;")]) == 2
    rows = state.execute("SELECT version, name, applied_at FROM schema_migrations").fetchall()
    assert [tuple(r) for r in rows] == [
        (1, "create_things", "2026-11-01T00:00:00Z"), (2, "add_things_w", rows[1][2])]
    assert state.execute("SELECT v, w FROM t").fetchall()[0][0] == 7  # data kept

    memory = connect(tmp_path / "memory.db")
    memory.executescript("CREATE TABLE a (v); PRAGMA user_version = 1;")
    migrate_user_version(memory, [NamedMigration("create_a", "CREATE TABLE a (v);")],
                         component="memory")
    assert memory.execute("SELECT version, name FROM schema_migrations").fetchall()[0][:] == (
        1, "create_a")


def test_an_applied_migration_under_another_name_is_refused(tmp_path: Path) -> None:
    # Two builds each appended their own migration 2: the second must not skip its own.
    conn = connect(tmp_path / "state.db")
    first = NamedMigration("create_things", "CREATE TABLE t (v);")
    migrate_component(conn, "things", [first, NamedMigration("add_w", "ALTER TABLE t ADD w;")])
    with pytest.raises(StoreError, match="things migration 2 was applied as 'add_w', but this"
                       " Wardian calls migration 2 'add_x'"):
        migrate_component(conn, "things", [first, NamedMigration("add_x", "ALTER TABLE t ADD x;")])
    memory = connect(tmp_path / "memory.db")
    migrate_user_version(memory, [first], component="memory")
    with pytest.raises(StoreError, match="memory migration 1 was applied as 'create_things'"):
        migrate_user_version(memory, [NamedMigration("create_other", "CREATE TABLE o (v);")],
                             component="memory")


def test_migration_names_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must match"):
        migrate_component(connect(tmp_path / "y.db"), "c",
                          [NamedMigration("Create Things", "CREATE TABLE t (v);")])
    with pytest.raises(ValueError, match="used twice"):
        migrate_component(connect(tmp_path / "x.db"), "c",
                          [NamedMigration("same", ""), NamedMigration("same", "")])


def test_a_read_only_block_has_its_own_object_and_writes_nothing(tmp_path: Path) -> None:
    """`StateDB.read_only`: the block's object is its own (`open` still returns the
    read-write one); a current component is checked, one the file never held reads as
    empty (in TEMP), a write fails."""
    from wardian._db import StateDB

    path = tmp_path / "state.db"
    kept = named("CREATE TABLE kept (v INTEGER)")
    writable = StateDB.open(path)
    writable.require("ro_kept", kept)
    writable.conn.execute("INSERT INTO kept VALUES (7)")
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with StateDB.read_only(path) as ro:
        assert StateDB.open(path) is writable and ro is not writable and ro.readonly
        ro.require("ro_kept", kept)
        assert [tuple(r) for r in ro.conn.execute("SELECT v FROM kept")] == [(7,)]
        fresh = named("CREATE TABLE fresh (v INTEGER)", "CREATE INDEX fresh_v ON fresh (v)")
        ro.require("ro_fresh", fresh)  # never migrated into this file
        assert ro.conn.execute("SELECT count(*) FROM fresh").fetchone()[0] == 0
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro.conn.execute("INSERT INTO kept VALUES (8)")
    assert StateDB.open(path) is writable
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert not writable.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'fresh'").fetchall()
    writable.close()


def test_a_read_only_reader_refuses_a_component_behind_it(tmp_path: Path) -> None:
    from wardian._db import StateDB, check_component

    path = tmp_path / "state.db"
    conn = connect(path)
    migrate_component(conn, "ro_old", named("CREATE TABLE old (v INTEGER)"))
    conn.close()
    with StateDB.read_only(path) as ro:
        newer = named("CREATE TABLE old (v INTEGER)", "ALTER TABLE old ADD COLUMN w TEXT")
        with pytest.raises(StoreError, match="ro_old schema version 1 is older"):
            ro.require("ro_old", newer)
        assert check_component(ro.conn, "ro_absent", newer) == 0
