"""The PostgreSQL backend's foundation (issue 18): selection, atomic(), migrations, errors.

The placeholder translation is checked without a server; everything else runs against the session's
throwaway cluster (`tests.pg_cluster`, skipped locally without PostgreSQL binaries, failing
under CI).
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from wardian._backend import POSTGRES, Connection
from wardian._db import Database, NamedMigration, StateDB, atomic, migrate_component
from wardian._pg import configured_url, redact_url, translate
from wardian._util import utc_now_iso
from wardian.errors import StoreError, UsageError
from wardian.memory.db import MemoryDB


def test_translate_converts_placeholders_and_nothing_else() -> None:
    assert translate("SELECT a FROM t WHERE b = ? AND c LIKE '%?%'") == (
        "SELECT a FROM t WHERE b = %s AND c LIKE '%%?%%'")
    for sqlite_only in ("INSERT OR IGNORE INTO t (a) VALUES (1)",
                        "SELECT IFNULL(a, 0) FROM t INDEXED BY t_a WHERE b LIKE 'x'",
                        "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"):
        assert translate(sqlite_only) == sqlite_only.replace("%", "%%")


def test_url_validation_and_selection(wardian_home: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    assert configured_url() is None
    for bad in ("mysql://x/y", "postgresql://host:notaport/db"):
        monkeypatch.setenv("WARDIAN_DATABASE_URL", bad)
        with pytest.raises(UsageError) as caught:
            configured_url()
        assert caught.value.exit_code == 2 and "WARDIAN_DATABASE_URL" in str(caught.value)
    monkeypatch.setenv("WARDIAN_DATABASE_URL", "")
    assert configured_url() is None  # empty: the SQLite default
    monkeypatch.delenv("WARDIAN_DATABASE_URL")
    (wardian_home / "database.url").write_text("postgresql://u:s3cret@db.example/w\n")
    assert configured_url() == "postgresql://u:s3cret@db.example/w"
    assert redact_url("postgresql://u:s3cret@db.example/w") == "postgresql://u:***@db.example/w"
    assert redact_url("postgresql://u@db.example/w?sslmode=require&password=s3cret") == (
        "postgresql://u@db.example/w?sslmode=require&password=***")


def test_connect_failure_reads_libpq_reasons() -> None:
    from wardian._pg import connect_failure

    at = 'connection failed: connection to server at "controller.example", port 5432 failed: '
    assert connect_failure(at + "Connection refused\n\tIs the server running") == "reach"
    assert connect_failure("failed to resolve host 'db': Name or service not known") == "reach"
    assert connect_failure(at + 'FATAL:  password authentication failed for user "u"') == "auth"
    assert connect_failure(at + 'FATAL:  role "ghost" does not exist') == "auth"
    assert connect_failure(at + 'FATAL:  role "u" is not permitted to log in') == "auth"
    assert connect_failure(at + "fe_sendauth: no password supplied") == "auth"
    assert connect_failure(at + 'FATAL:  no pg_hba.conf entry for host "10.0.0.2"') == "auth"
    assert connect_failure(at + 'FATAL:  database "w" does not exist') == "database"
    assert connect_failure(at + "FATAL:  permission denied for database \"w\"") == "denied"


def test_unreachable_server_is_a_clear_store_error(wardian_home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("psycopg")
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("WARDIAN_DATABASE_URL",
                       f"postgresql://nobody:pw@127.0.0.1:{port}/none?connect_timeout=2")
    with pytest.raises(StoreError) as caught:
        MemoryDB.open(wardian_home / "memory.db")
    assert caught.value.exit_code == 1 and "pw@" not in str(caught.value)
    assert "cannot connect to PostgreSQL" in str(caught.value)
    assert not (wardian_home / "memory.db").exists()


def test_one_database_two_schemas(pg_url: str, wardian_home: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    memory = MemoryDB.open(wardian_home / "memory.db")
    state = StateDB.open(wardian_home / "state.db")
    assert (memory.dialect, state.dialect) == ("postgres", "postgres")
    assert memory is MemoryDB.open(wardian_home / "memory.db")  # one per process and thread
    assert memory.path == wardian_home / "memory.db"  # what lives beside it stays there
    assert not (wardian_home / "memory.db").exists()
    tables = {(r[0], r[1]) for r in memory.conn.execute(
        "SELECT table_schema, table_name FROM information_schema.tables"
        " WHERE table_schema IN ('memory', 'state')")}
    assert ("memory", "records") in tables and ("memory", "record_vectors") in tables
    schemas = {r[0] for r in state.conn.execute("SELECT nspname FROM pg_namespace")}
    assert {"memory", "state"} <= schemas


def test_atomic_commits_rolls_back_and_nests_as_savepoints(pg_url: str) -> None:
    db = StateDB.open_at(pg_url)
    migrate_component(db.conn, "t_atomic", [
        NamedMigration("create_t_atomic", "CREATE TABLE t_atomic (n INTEGER PRIMARY KEY)")])
    with db.atomic():
        db.conn.execute("INSERT INTO t_atomic (n) VALUES (?)", (1,))
        with pytest.raises(ValueError), atomic(db.conn):
            db.conn.execute("INSERT INTO t_atomic (n) VALUES (?)", (2,))
            raise ValueError("inner block fails: only its savepoint rolls back")
        assert db.conn.in_transaction
    with pytest.raises(KeyboardInterrupt), db.atomic():
        db.conn.execute("INSERT INTO t_atomic (n) VALUES (?)", (3,))
        raise KeyboardInterrupt
    assert not db.conn.in_transaction
    assert [r["n"] for r in db.conn.execute("SELECT n FROM t_atomic ORDER BY n")] == [1]
    with pytest.raises(db.backend.IntegrityError) as refused, db.atomic():
        db.conn.execute("INSERT INTO t_atomic (n) VALUES (?)", (1,))
    db.conn.execute("INSERT INTO t_atomic (n) VALUES (?) ON CONFLICT DO NOTHING", (1,))
    assert db.conn.execute("SELECT COUNT(*) FROM t_atomic").fetchone()[0] == 1
    # The driver's own class, not one posing as sqlite3's.
    import psycopg

    assert isinstance(refused.value, psycopg.errors.UniqueViolation)
    assert not isinstance(refused.value, sqlite3.Error)


def test_each_backend_names_its_drivers_error_classes(backend: str, wardian_home: Path
                                                      ) -> None:
    db = StateDB.open_at(configured_url() or wardian_home / "state.db")
    migrate_component(db.conn, "t_refusals", [NamedMigration(
        "create_t_refusals", "CREATE TABLE t_refusals (n INTEGER PRIMARY KEY)")])
    db.conn.execute("INSERT INTO t_refusals (n) VALUES (?)", (1,))
    with pytest.raises(db.backend.IntegrityError):
        db.conn.execute("INSERT INTO t_refusals (n) VALUES (?)", (1,))
    with pytest.raises(db.backend.OperationalError):  # a table that is not there
        db.conn.execute("SELECT n FROM t_not_there")
    with pytest.raises(db.backend.Error):
        db.conn.execute("INSERT INTO t_refusals (n) VALUES (?)", (1,))
    driver = "sqlite3" if backend == "sqlite" else "psycopg"
    for refusal in (db.backend.Error, db.backend.IntegrityError, db.backend.OperationalError):
        classes = refusal if isinstance(refusal, tuple) else (refusal,)
        assert {c.__module__.split(".")[0] for c in classes} == {driver}


def test_migrations_record_when_they_ran_in_one_text_form(backend: str, wardian_home: Path
                                                          ) -> None:
    # The time comes from Python on both backends, in the millisecond form the rows
    # recorded before it already have.
    db = StateDB.open(wardian_home / "state.db")
    before = utc_now_iso()[:23] + "Z"
    migrate_component(db.conn, "t_applied", [
        NamedMigration("create_t_applied", "CREATE TABLE t_applied (n INTEGER)")])
    after = utc_now_iso()[:23] + "Z"
    stamp = db.conn.execute("SELECT applied_at FROM schema_migrations WHERE component = ?",
                            ("t_applied",)).fetchone()[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    assert before <= stamp <= after


def test_only_writes_count_as_changes(pg_url: str) -> None:
    # `total_changes` keys recall's caches (vectors, BM25 totals): a read that moved it
    # threw them away after every query (a recall at 5k records took ~150 ms).
    db = StateDB.open_at(pg_url)
    migrate_component(db.conn, "t_changes", [
        NamedMigration("create_t_changes", "CREATE TABLE t_changes (n INTEGER)")])
    with db.atomic():
        db.conn.executemany("INSERT INTO t_changes (n) VALUES (?)", [(1,), (2,), (3,)])
    before = db.conn.total_changes
    assert len(db.conn.execute("SELECT n FROM t_changes").fetchall()) == 3
    assert db.conn.execute("SELECT COUNT(*) FROM t_changes").fetchone()[0] == 3
    assert db.conn.total_changes == before
    with db.atomic():
        db.conn.execute("UPDATE t_changes SET n = n + 1 WHERE n > ?", (1,))
    assert db.conn.total_changes == before + 2


def test_migrations_run_once_and_a_failed_one_leaves_nothing(pg_url: str) -> None:
    db = Database.open_at(pg_url)
    calls: list[int] = []

    def second(conn: Connection) -> None:
        calls.append(1)
        conn.execute("INSERT INTO t_mig (n) VALUES (?)", (7,))

    steps = [NamedMigration("create_t_mig", "CREATE TABLE t_mig (n INTEGER)"),
             NamedMigration("fill_t_mig", second)]
    assert migrate_component(db.conn, "t_mig", steps) == 2
    assert migrate_component(db.conn, "t_mig", steps) == 2 and calls == [1]
    with pytest.raises(StoreError, match="t_mig migration 3 failed"):
        migrate_component(db.conn, "t_mig", [*steps, NamedMigration(
            "broken", "INSERT INTO t_mig VALUES (8); SELECT * FROM no_such_table")])
    assert [r[0] for r in db.conn.execute("SELECT n FROM t_mig")] == [7]
    with pytest.raises(StoreError, match="newer than this Wardian"):
        migrate_component(db.conn, "t_mig", steps[:1])


def test_every_state_component_migrates_on_postgres(pg_url: str, wardian_home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Every state component's PostgreSQL migrations apply."""
    # Every state store, so each component's migrations run.
    code = (
        "from wardian.config import SettingsStore, open_state_db\n"
        "from wardian.engine.runs import RunStore\n"
        "from wardian.invokers.drain import FireLog\n"
        "from wardian.invokers.slots import SlotStore\n"
        "from wardian.invokers.store import InvokerStore\n"
        "from wardian.memory.maintenance.previews import PreviewCache\n"
        "from wardian.providers.catalog import ModelCatalog\n"
        "from wardian.runtime.agents import AgentRegistry\n"
        "from wardian.runtime.archives import ArchiveStore\n"
        "from wardian.runtime.recovery import _conn\n"
        "from wardian.runtime.session_events import SessionEventQueue\n"
        "for store in (SettingsStore, RunStore, FireLog, SlotStore, InvokerStore,"
        " PreviewCache, ModelCatalog, AgentRegistry, ArchiveStore, SessionEventQueue):\n"
        "    store(open_state_db())\n"
        "conn = _conn(open_state_db())\n"
        "print(sorted({r[0] for r in conn.execute("
        "'SELECT component FROM schema_migrations')}))\n"
    )
    env = {"WARDIAN_DATABASE_URL": pg_url, "WARDIAN_HOME": str(wardian_home),
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    for component in ("agents", "archives", "invokers", "model_catalog", "recovery", "runs",
                      "schedule_slots", "session_close_fires", "session_events", "settings"):
        assert repr(component) in done.stdout


def _waits(holder: object, waiter: object, held: tuple[str, ...] | None,
           wanted: tuple[str, ...] | None, *, upgrade: bool = False) -> bool:
    """Whether a write block asking for `wanted` locks (None: the exclusive schema lock)
    waits while another connection's block holds `held`. The waiter's ``lock_timeout``
    makes a wait an error at once: a block that needs no lock never waits for one."""
    from wardian._pg import PgConnection

    assert isinstance(holder, PgConnection) and isinstance(waiter, PgConnection)
    with holder.atomic(held):
        if upgrade:  # a default block nested in a narrow one: the exclusive lock now
            with holder.atomic():
                pass
        try:
            with waiter.atomic(wanted):
                return False
        except POSTGRES.OperationalError as exc:
            assert "lock timeout" in str(exc)
            return True


def test_narrow_blocks_run_side_by_side_and_default_ones_alone(pg_url: str) -> None:
    from wardian._pg import PgConnection

    holder, waiter = PgConnection(pg_url, "state"), PgConnection(pg_url, "state")
    waiter.execute("SET lock_timeout = '150ms'")
    try:
        assert not _waits(holder, waiter, (), ())  # row locks only: side by side
        assert not _waits(holder, waiter, ("run:a",), ("run:b",))  # other keys
        assert _waits(holder, waiter, ("run:a",), ("run:a", "run:c"))  # one key in common
        assert _waits(holder, waiter, (), None)  # a default block waits for narrow ones
        assert _waits(holder, waiter, None, ())  # and they for it
        assert _waits(holder, waiter, (), (), upgrade=True)  # a nested default block
        with holder.atomic(()):
            with pytest.raises(ValueError), holder.atomic():  # an upgrade rolled back ...
                raise ValueError
            with waiter.atomic(()):  # ... gave the exclusive lock back
                pass
            # ... and the next default block takes it again.
            with holder.atomic(), pytest.raises(POSTGRES.OperationalError,
                                                match="lock timeout"), waiter.atomic(()):
                pass
        memory = PgConnection(pg_url, "memory")
        try:
            assert not _waits(memory, waiter, None, None)  # schemas lock apart
        finally:
            memory.close()
        assert not holder.in_transaction and not waiter.in_transaction
    finally:
        waiter.execute("RESET lock_timeout")
        holder.close()
        waiter.close()


def test_a_triggers_raise_is_an_integrity_error_only(pg_url: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A trigger's RAISE EXCEPTION is what SQLite's RAISE(ABORT) is: an integrity refusal,
    never mistaken for the missing table or column `OperationalError` stands for."""
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    db = StateDB.open_at(pg_url)
    migrate_component(db.conn, "t_guarded", [NamedMigration("create_t_guarded", """
        CREATE TABLE t_guarded (n INTEGER);
        CREATE FUNCTION t_guarded_refuse() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN RAISE EXCEPTION 't_guarded is append-only'; END $$;
        CREATE TRIGGER t_guarded_no_delete BEFORE DELETE ON t_guarded
            FOR EACH ROW EXECUTE FUNCTION t_guarded_refuse();""")])
    db.conn.execute("INSERT INTO t_guarded (n) VALUES (?)", (1,))
    with pytest.raises(Exception) as raised:
        db.conn.execute("DELETE FROM t_guarded")
    assert "append-only" in str(raised.value)
    assert isinstance(raised.value, db.backend.IntegrityError)
    assert not isinstance(raised.value, db.backend.OperationalError)
    with pytest.raises(db.backend.OperationalError):  # a column that is not there
        db.conn.execute("SELECT no_such_column FROM t_guarded")
