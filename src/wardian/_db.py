"""SQLite plumbing shared by every store: connections, one `atomic()` helper, migrations.

Connections are opened in autocommit mode (``isolation_level=None``) so Python's
implicit transactions never surprise us; every write goes through `atomic`,
which issues ``BEGIN IMMEDIATE`` (or a SAVEPOINT when nested). WAL journal,
``busy_timeout`` and foreign keys are always on (DESIGN.md "Storage").

Two migration styles exist because two kinds of files exist:

* `migrate_user_version` — a database owned by one package (``memory.db``):
  ``PRAGMA user_version`` counts the applied migrations.
* `migrate_component` — a shared database (``state.db``) where several packages
  own tables: a ``schema_migrations(component, version)`` bookkeeping row per
  migration. Each package passes its own ordered lists, one per backend (`Migrations`):
  on PostgreSQL its own DDL runs as written, never a rewrite of the SQLite script.

Each migration is applied with its bookkeeping inside one transaction, so a
failed migration leaves nothing behind and stays pending.

Every migration is a `NamedMigration`: a stable name recorded with its number in
``schema_migrations`` (both files have the table; in ``memory.db`` it only names what
``user_version`` counts). A database whose recorded name for a number differs from the
code's (another build appended a different migration N) is refused instead of being
silently mis-migrated. Rows written before names existed are named on the next open.

`Database` is the unit of work over one file (like sqlite-utils' ``Database``): one
connection per file per process (and per thread: a sqlite3 connection is not shared by
threads that write), its migrations run once when it is opened, `Database.atomic` as a
method, usable as a context manager. Stores are thin views over one: `StateDB` for
``state.db`` (each store makes sure of its component's migrations with `StateDB.require`)
and ``MemoryDB`` (in `wardian.memory.db`) for ``memory.db``. Nothing else calls
`sqlite3.connect`. SQL dialect specifics (pragmas, ``BEGIN IMMEDIATE``, savepoints, the
migration bookkeeping) stay in this module, so another backend replaces one class.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import sqlite3
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NamedTuple

from wardian._backend import Backend, Connection, backend_of
from wardian._util import utc_now_iso
from wardian.errors import StoreError, WardianError

if TYPE_CHECKING:
    from typing import TypeVar

__all__ = [
    "BUSY_TIMEOUT_MS",
    "ENV_DATABASE_URL",
    "URL_FILE",
    "Database",
    "Migration",
    "Migrations",
    "NamedMigration",
    "StateDB",
    "atomic",
    "backup",
    "check_component",
    "close_databases",
    "configured_database_url",
    "configured_url_for",
    "connect",
    "connections_opened",
    "database_exists",
    "has_table",
    "in_this_scope",
    "lock_holders",
    "lock_timeout_ms",
    "migrate_component",
    "migrate_user_version",
    "open_readonly",
    "read_as_immutable",
    "table_columns",
]

ENV_DATABASE_URL = "WARDIAN_DATABASE_URL"
"""Set to a ``postgresql://`` URL, memory and state live in that database (`wardian._pg`)."""
URL_FILE = "database.url"
"""The same URL as a file in the data directory (first line), for a whole installation."""

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for the write lock before failing, in milliseconds (default;
``WARDIAN_LOCK_TIMEOUT`` sets it in seconds, `lock_timeout_ms`)."""
ENV_LOCK_TIMEOUT = "WARDIAN_LOCK_TIMEOUT"
"""Seconds a writer waits for a SQLite file's write lock (0.1 to 3600; default 30)."""
LOCK_NOTICE_S = 1.0
"""After this long waiting for a write lock, a writer says on stderr what it waits for."""


def lock_timeout_ms() -> int:
    """How long a writer waits for a SQLite write lock: ``WARDIAN_LOCK_TIMEOUT`` seconds
    (0.1 to 3600), else `BUSY_TIMEOUT_MS`. An unusable value falls back to the default."""
    raw = os.environ.get(ENV_LOCK_TIMEOUT, "")
    try:
        value = float(raw) if raw else BUSY_TIMEOUT_MS / 1000
    except ValueError:
        return BUSY_TIMEOUT_MS
    return int(value * 1000) if 0.1 <= value <= 3600 else BUSY_TIMEOUT_MS

Migration = str | Callable[[Connection], None]
"""A migration is a SQL script or a function that runs inside the open transaction."""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class NamedMigration(NamedTuple):
    """One forward-only migration: its stable `name` and what it does (`apply`).

    Args:
        name: lower-case letters, digits and ``_`` (at most 64), unique within its list,
            e.g. ``"create_agents"``; recorded with the migration's number and never changed.
        apply: a SQL script, or a function run inside the migration's transaction.

    Raises (when its list is migrated, `migrate_component` / `migrate_user_version`):
        ValueError: the name is not of that form.

    A named tuple, not a dataclass: every hot command imports migrations, and the
    dataclass machinery alone costs such a process a noticeable share of its CPU budget.
    """

    name: str
    apply: Migration


class Migrations(NamedTuple):
    """One ``state.db`` component's migrations, a list per backend: each backend owns its
    SQL, so neither list is rewritten for the other.

    Args:
        sqlite: the migrations of a SQLite file, in SQLite's SQL.
        postgres: the migrations of the PostgreSQL ``state`` schema, in PostgreSQL's DDL.

    Each list is forward-only on its own: version N of the component is the Nth migration
    of its backend's list, recorded in ``schema_migrations`` under its name.

    The PostgreSQL tables hold what the SQLite ones do: ``INTEGER`` is ``BIGINT`` (pids,
    byte offsets and epoch milliseconds outgrow 32 bits), ``REAL`` is ``DOUBLE PRECISION``
    (process start times need all 53 bits), ``BLOB`` is ``BYTEA``, an ``INTEGER PRIMARY
    KEY`` an identity ``BIGINT`` key; a table without one has SQLite's implicit ``rowid``
    as an identity column of its own (hidden from ``keys()``, `wardian._pg.PgRow`). An
    append-only guard is a PL/pgSQL trigger raising SQLite's message (caught as
    `Backend.IntegrityError`).
    """

    sqlite: Sequence[NamedMigration]
    postgres: Sequence[NamedMigration]

    def on(self, conn: Connection) -> Sequence[NamedMigration]:
        """The list for `conn`'s backend (`postgres` for a `wardian._pg.PgConnection`)."""
        return self.sqlite if type(conn) is sqlite3.Connection else self.postgres


def _steps(conn: Connection,
           migrations: Migrations | Sequence[NamedMigration]) -> Sequence[NamedMigration]:
    """`conn`'s list of `migrations`; a plain sequence runs as written on either backend."""
    return migrations.on(conn) if isinstance(migrations, Migrations) else migrations


_savepoints = itertools.count()
_write_locks: dict[int, threading.RLock] = {}
"""id(connection) -> the lock its `Database` serialises transactions with."""
_local = threading.local()
_opened: dict[Path, int] = {}
_opened_lock = threading.Lock()


def connections_opened(path: Path | None = None) -> int:
    """How many SQLite connections this process has opened (to `path`, or in all).

    A count for tests and benchmarks of the one-connection-per-file rule.
    """
    with _opened_lock:
        if path is None:
            return sum(_opened.values())
        return _opened.get(Path(os.path.abspath(path)), 0)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the SQLite file at `path` with Wardian's pragmas.

    Args:
        path: the database file; it and its parent directory are created private
            (0600 / 0700, `wardian._fs`), and an existing wider file is tightened.

    Returns:
        A connection in autocommit mode with rows as `sqlite3.Row`.

    Raises:
        StoreError: the file cannot be opened (permissions, not a database).
    """
    from wardian._fs import FILE_MODE, make_private, private_dir

    try:
        private_dir(path.parent)
        if not path.exists():
            # Created here, 0600, before SQLite creates it with the umask's mode; SQLite
            # gives its -wal and -shm files the database file's mode.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        for suffix in ("", "-wal", "-shm"):  # tighten files an older Wardian left wider
            make_private(Path(f"{path}{suffix}"))
        timeout_ms = lock_timeout_ms()
        conn = sqlite3.connect(
            str(path), timeout=timeout_ms / 1000, isolation_level=None,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {timeout_ms}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(
            f"cannot open database {path}: {_why_not_writable(path) or exc}",
            hint="check the file's permissions, or move WARDIAN_HOME to a writable folder",
        ) from exc
    with _opened_lock:
        key = Path(os.path.abspath(path))
        _opened[key] = _opened.get(key, 0) + 1
    return conn


def open_readonly(path: Path, *, timeout_s: float = 5.0) -> sqlite3.Connection:
    """A read-only connection to the existing SQLite file at `path` (``mode=ro``).

    For readers that must write nothing: no file is created, no migration runs, no pragma
    is set (``wardian doctor``, the per-hook check of managed ancestors). Rows are
    `sqlite3.Row`. Counted by `connections_opened` like every other connection. Close it
    (``contextlib.closing``).

    Args:
        path: the database file. timeout_s: how long to wait on a locked file, in seconds.

    On a read-only mount or folder a WAL file is read as immutable (`read_as_immutable`),
    unless its -wal holds changes not yet checkpointed (then the error stands: those
    changes would be missed).

    Raises:
        sqlite3.Error: the file is absent, unreadable or not a database (readers decide
            whether that is a finding, a fallback or an error).
    """
    key = Path(os.path.abspath(path))
    conn = sqlite3.connect(f"{key.as_uri()}?mode=ro", uri=True, timeout=timeout_s)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError:
        # A WAL file whose -shm is absent where it cannot be created (a read-only mount or
        # folder): SQLite can read it only as immutable (sqlite.org/wal.html "Read-Only
        # Databases"), which is exact while no -wal holds changes not yet checkpointed.
        conn.close()
        wal = Path(f"{key}-wal")
        if not _cannot_create_beside(key) or (wal.exists() and wal.stat().st_size > 0):
            raise
        conn = sqlite3.connect(f"{key.as_uri()}?mode=ro&immutable=1", uri=True,
                               timeout=timeout_s)
        with _opened_lock:
            _immutable.add(key)
    conn.row_factory = sqlite3.Row
    with _opened_lock:
        _opened[key] = _opened.get(key, 0) + 1
    return conn


_immutable: set[Path] = set()


def _cannot_create_beside(path: Path) -> bool:
    """Whether no file can be created next to `path` (read-only mount or folder)."""
    folder = path.parent
    try:
        if os.name != "nt" and os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(folder, os.W_OK)


def read_as_immutable(path: Path) -> bool:
    """Whether `open_readonly` had to read `path` as immutable in this process (its folder
    cannot hold the -shm file SQLite's WAL readers need); ``wardian doctor`` says so."""
    with _opened_lock:
        return Path(os.path.abspath(path)) in _immutable


def has_table(conn: Connection, table: str) -> bool:
    """Whether `table` exists in `conn`'s main database (on PostgreSQL: its schema).
    Read-only."""
    if type(conn) is not sqlite3.Connection:
        return conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
            " AND table_name = ?", (table,)).fetchone() is not None
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return row is not None


def table_columns(conn: Connection, table: str) -> set[str]:
    """The column names of `table` in `conn`'s main database (on PostgreSQL: its schema);
    empty when there is no such table. Read-only."""
    if type(conn) is not sqlite3.Connection:
        return {str(r[0]) for r in conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = ?", (table,))}
    return {str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")')}


def backup(source: Path, target: Path) -> None:
    """Copy the SQLite file `source` to `target` with SQLite's online backup API.

    The source is opened read-only (nothing is written to it, a live writer is not
    disturbed); `target` is created or overwritten.

    Raises:
        sqlite3.Error: the source cannot be opened or read, or the target written.
    """
    src = open_readonly(source)
    try:
        dst = sqlite3.connect(str(target))
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


def _why_not_writable(path: Path) -> str | None:
    """A plain reason why `path` (a database file) cannot be opened for writing, if one is
    visible: a read-only file system, folder or file. SQLite only says "unable to open"."""
    folder = path.parent
    try:
        if os.name != "nt" and os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"the file system holding {folder} is mounted read-only"
    except OSError:
        return None
    if not os.access(folder, os.W_OK):
        return f"the folder {folder} is read-only for you (SQLite needs to create files there)"
    for suffix in ("", "-wal", "-shm"):
        candidate = Path(f"{path}{suffix}")
        if candidate.exists() and not os.access(candidate, os.W_OK):
            return f"{candidate} is read-only for you"
    return None


@contextmanager
def atomic(conn: Connection, *,
           locks: Sequence[str] | None = None) -> Iterator[Connection]:
    """Run the block in one write transaction (``BEGIN IMMEDIATE``), or a savepoint if nested.

    Commits when the block ends normally; rolls back on any exception (including
    `KeyboardInterrupt`) and re-raises it unchanged.

    Args:
        locks: None: the block writes alone (SQLite's one writer; on PostgreSQL the
            schema's exclusive writer lock). A sequence of keys: the block is *narrow* —
            correct beside other narrow blocks through its row locks, unique constraints
            and one lock per key (e.g. an idempotency key), so PostgreSQL runs narrow
            blocks of several workers at once (`wardian._pg.PgConnection.atomic`). SQLite
            has one writer anyway and ignores the keys.

    Raises:
        StoreError: the write lock could not be taken within `lock_timeout_ms` (after
            `LOCK_NOTICE_S` the wait is announced on stderr, naming file and holders).
    """
    if type(conn) is not sqlite3.Connection:  # a `wardian._pg.PgConnection`
        with conn.atomic(locks) as same:  # type: ignore[attr-defined]
            yield same
        return
    lock = _write_locks.get(id(conn))
    if lock is not None:
        # A shared connection (see `Database`): one thread's transaction at a time, as two
        # connections would have had it from SQLite's write lock.
        with lock:
            yield from _atomic(conn)
        return
    yield from _atomic(conn)


def _atomic(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """The transaction or savepoint of `atomic`, with sqlite-utils' two guards: an error
    that already ended the whole transaction (a ``RAISE(ROLLBACK)`` trigger) is re-raised
    as it is, not hidden behind "no such savepoint"; a COMMIT that fails (a deferred
    foreign key, a trigger) rolls back, so the connection is left usable and nothing of
    the block is written."""
    if conn.in_transaction:
        name = f"sp_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")
        return
    _begin_immediate(conn)
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _begin_immediate(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``, waiting up to `lock_timeout_ms` for the write lock; after
    `LOCK_NOTICE_S` one stderr line names the file and the processes holding it.

    Raises:
        StoreError: still locked when the time is up (names the file, the holders and what
            to do). Other SQLite errors (read-only, disk I/O, …) as they are: `wardian.oserrors`
            words those.
    """
    total = lock_timeout_ms()
    first = min(total, int(LOCK_NOTICE_S * 1000))
    conn.execute(f"PRAGMA busy_timeout = {first}")
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
            if first >= total:
                raise _locked(conn, total) from exc
        path = _file_of(conn)
        holders = lock_holders(path) if path else []
        print(f"wardian: waiting for the write lock on {path or 'the database'}"
              + (f" (held by {', '.join(holders)})" if holders else "")
              + f"; giving up after {total / 1000:g} s", file=sys.stderr, flush=True)
        conn.execute(f"PRAGMA busy_timeout = {total - first}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
            raise _locked(conn, total) from exc
    finally:
        conn.execute(f"PRAGMA busy_timeout = {total}")


def _file_of(conn: sqlite3.Connection) -> str:
    """The file behind `conn`'s main database ('' for an in-memory one)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(row[2] or "")
    return ""


def _locked(conn: sqlite3.Connection, waited_ms: int) -> StoreError:
    path = _file_of(conn) or "the database"
    holders = lock_holders(path) if path != "the database" else []
    held = f" by {', '.join(holders)}" if holders else " by another process"
    return StoreError(
        f"{path} stayed locked{held} for {waited_ms / 1000:g} s; nothing was written",
        hint="let that process finish (or stop it) and run the command again; "
             f"{ENV_LOCK_TIMEOUT}=SECONDS waits longer")


def lock_holders(path: str | Path) -> list[str]:
    """Other processes holding a POSIX lock on the SQLite file `path` or its ``-shm``
    (where SQLite keeps a WAL database's write lock), as ``pid N (command)``; Linux only
    (``/proc/locks``), empty where unknown. Best effort: never raises."""
    try:
        inodes = set()
        for suffix in ("", "-shm"):
            with contextlib.suppress(OSError):
                st = os.stat(f"{path}{suffix}")
                inodes.add((os.major(st.st_dev), os.minor(st.st_dev), st.st_ino))
        pids: list[int] = []
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 6 or parts[1] != "POSIX" or not parts[4].lstrip("-").isdigit():
                    continue
                major, minor, inode = parts[5].split(":")
                pid = int(parts[4])
                if ((int(major, 16), int(minor, 16), int(inode)) in inodes
                        and pid > 0 and pid != os.getpid() and pid not in pids):
                    pids.append(pid)
    except (OSError, ValueError):
        return []
    return [_describe_pid(pid) for pid in pids[:3]]


def _describe_pid(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
        command = " ".join(w.decode("utf-8", "replace") for w in words if w)[:80]
    except OSError:
        command = ""
    return f"pid {pid} ({command})" if command else f"pid {pid}"


def _apply(conn: Connection, migration: Migration) -> None:
    if callable(migration):
        migration(conn)
        return
    if type(conn) is not sqlite3.Connection:  # PostgreSQL: its own DDL, run whole
        conn.run_script(migration)  # type: ignore[attr-defined]
        return
    # executescript would COMMIT our transaction; run statements one by one instead.
    for statement in _split_sql(migration):
        conn.execute(statement)


def _split_sql(script: str) -> list[str]:
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


_BOOKKEEPING = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " component TEXT NOT NULL, version INTEGER NOT NULL, applied_at TEXT NOT NULL,"
    " name TEXT, PRIMARY KEY (component, version))"
)
"""``name`` came later (appended with ``ALTER TABLE``); ``applied_at`` of a row named after
the fact is when its name was recorded."""


def _failed(message: str, exc: BaseException) -> WardianError:
    """`message` and the driver's reason for `exc` as one error: the kind, exit code and
    hint `wardian.oserrors.translate` gives a condition the user can fix (a role without
    rights, a read-only session, a held lock, …), else a `StoreError`."""
    from wardian.oserrors import one_line, translate

    ours = translate(exc)
    if ours is None:
        return StoreError(f"{message}: {one_line(exc)}")
    return type(ours)(f"{message}: {ours.message}", hint=ours.hint)


def _names(component: str, migrations: Sequence[NamedMigration]) -> list[str]:
    names = [m.name for m in migrations]
    for name in names:
        if not _NAME.match(name):
            raise ValueError(f"{component}: migration name {name!r} must match {_NAME.pattern}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{component}: migration names used twice: {twice}")
    return names


def _ensure_bookkeeping(conn: Connection) -> None:
    """Create ``schema_migrations`` (with ``name``), or add ``name`` to an older one."""
    try:
        conn.execute("SELECT name FROM schema_migrations LIMIT 0")
        return
    except backend_of(conn).OperationalError:
        pass
    with atomic(conn):
        conn.execute(_BOOKKEEPING)
        if type(conn) is not sqlite3.Connection:
            return  # PostgreSQL: no schema predates names
        columns = {r[1] for r in conn.execute("PRAGMA table_info(schema_migrations)")}
        if "name" not in columns:
            conn.execute("ALTER TABLE schema_migrations ADD COLUMN name TEXT")


def _recorded(conn: Connection, component: str) -> dict[int, str | None]:
    rows = conn.execute(
        "SELECT version, name FROM schema_migrations WHERE component = ?", (component,)
    ).fetchall()
    return {int(r[0]): r[1] for r in rows}


def _applied_at() -> str:
    """Now, as ``schema_migrations.applied_at`` holds it: `utc_now_iso` to the millisecond
    (``2026-01-31T12:00:00.123Z``), the form every recorded migration already has."""
    return utc_now_iso()[:23] + "Z"


def _record(conn: Connection, component: str, version: int, name: str) -> None:
    conn.execute(
        "INSERT INTO schema_migrations (component, version, applied_at, name)"
        " VALUES (?, ?, ?, ?)"
        " ON CONFLICT (component, version) DO UPDATE SET name = excluded.name",
        (component, version, _applied_at(), name),
    )


def _check_names(conn: Connection, component: str, applied: int,
                 names: Sequence[str], recorded: dict[int, str | None],
                 *, record_unnamed: bool = True) -> None:
    """Refuse a database whose applied migrations carry other names than the code's; name
    the applied ones that have no name yet (written before names existed), unless
    `record_unnamed` is False (a read-only reader)."""
    for version in range(1, applied + 1):
        found = recorded.get(version)
        if found is not None and found != names[version - 1]:
            raise StoreError(
                f"{component} migration {version} was applied as {found!r}, but this Wardian"
                f" calls migration {version} {names[version - 1]!r}",
                hint="the database was migrated by another Wardian build; run that build,"
                " or restore a backup made before it",
            )
    unnamed = [v for v in range(1, applied + 1) if recorded.get(v) is None]
    if not unnamed or not record_unnamed:
        return
    try:
        with atomic(conn):
            for version in unnamed:
                _record(conn, component, version, names[version - 1])
    except backend_of(conn).OperationalError as exc:
        if "readonly" not in str(exc):
            raise  # a read-only file stays usable; its names are recorded on a later open


def migrate_user_version(conn: Connection, migrations: Sequence[NamedMigration],
                         *, component: str = "main") -> int:
    """Apply pending `migrations` in order, counting them in ``PRAGMA user_version``.

    Forward-only: a database newer than this code (user_version > len(migrations))
    is refused rather than written to. Each migration's name is recorded in
    ``schema_migrations`` under `component`.

    Returns:
        The schema version after migrating.

    Raises:
        StoreError: the database is newer than this Wardian, an applied migration carries
            another name than this code's, or a migration failed.
    """
    names = _names(component, migrations)
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > len(migrations):
        raise StoreError(
            f"database schema version {current} is newer than this Wardian "
            f"understands ({len(migrations)})",
            hint="upgrade wardian",
        )
    try:
        _ensure_bookkeeping(conn)
        _check_names(conn, component, current, names, _recorded(conn, component))
    except sqlite3.Error as exc:
        raise StoreError(f"cannot name the migrations of {component}: {exc}") from exc
    for version in range(current + 1, len(migrations) + 1):
        try:
            with atomic(conn):
                # Re-read inside the lock: another process may have migrated meanwhile.
                now = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if now >= version:
                    continue
                _apply(conn, migrations[version - 1].apply)
                _record(conn, component, version, names[version - 1])
                conn.execute(f"PRAGMA user_version = {version}")
        except sqlite3.Error as exc:
            raise StoreError(f"migration {version} failed: {exc}") from exc
    return len(migrations)


def migrate_component(
    conn: Connection, component: str, migrations: Sequence[NamedMigration]
) -> int:
    """Apply pending `migrations` of one `component` of a shared database.

    Args:
        component: a stable name such as ``"agents"`` or ``"runs"``.
        migrations: ordered; version N is ``migrations[N-1]``, recorded with its name.

    Returns:
        The component's schema version after migrating.

    Raises:
        StoreError: a migration failed, an applied migration carries another name than
            this code's, or the component is newer than this code.
    """
    names = _names(component, migrations)
    try:
        _ensure_bookkeeping(conn)
        recorded = _recorded(conn, component)
    except backend_of(conn).Error as exc:
        raise _failed(f"cannot read the migrations of {component}", exc) from exc
    current = max(recorded, default=0)
    _refuse_newer(component, current, len(migrations))
    try:
        _check_names(conn, component, current, names, recorded)
    except backend_of(conn).Error as exc:
        raise _failed(f"cannot name the migrations of {component}", exc) from exc
    for version in range(current + 1, len(migrations) + 1):
        try:
            with atomic(conn):
                if max(_recorded(conn, component), default=0) >= version:
                    continue
                _apply(conn, migrations[version - 1].apply)
                _record(conn, component, version, names[version - 1])
        except backend_of(conn).Error as exc:
            raise _failed(f"{component} migration {version} failed", exc) from exc
    return len(migrations)


def _refuse_newer(component: str, current: int, known: int) -> None:
    """Raise `StoreError` when the file's `component` schema (`current`) is newer than the
    `known` migrations of this code: a newer Wardian wrote it, and this one must not guess."""
    if current > known:
        raise StoreError(
            f"{component} schema version {current} is newer than this Wardian "
            f"understands ({known})",
            hint="upgrade wardian",
        )


def check_component(
    conn: Connection, component: str, migrations: Sequence[NamedMigration]
) -> int:
    """Check, writing nothing, that every one of `component`'s `migrations` has run on
    `conn`'s database: what a read-only reader does instead of `migrate_component`.

    Returns:
        The component's schema version: ``len(migrations)``, or 0 when the file has never
        held it (nothing to be behind; `StateDB.require` then reads it as empty).

    Raises:
        StoreError: the component's schema is older than this Wardian's (a reader that
            must not write cannot upgrade it; the hint says what does), newer, or its
            applied migrations carry other names than this code's.
    """
    names = _names(component, migrations)
    try:
        recorded = _recorded(conn, component) if has_table(conn, "schema_migrations") else {}
    except backend_of(conn).Error as exc:
        raise _failed(f"cannot read the migrations of {component}", exc) from exc
    current = max(recorded, default=0)
    _refuse_newer(component, current, len(migrations))
    _check_names(conn, component, current, names, recorded, record_unnamed=False)
    if 0 < current < len(migrations):
        raise StoreError(
            f"{component} schema version {current} is older than this Wardian's "
            f"({len(migrations)}), and this reader opens the file read-only",
            hint="any wardian command that uses it upgrades the file (for example "
            "`wardian agent list` or `wardian automation session-close list`); then "
            "run this one again",
        )
    return current


def _empty_in_temp(conn: sqlite3.Connection, component: str,
                   migrations: Sequence[NamedMigration]) -> None:
    """Create `component`'s schema, empty, in `conn`'s ``TEMP`` schema (a read-only file
    that never held the component then reads as holding none of its rows, as a fresh
    file would after migrating; the file itself is not touched).

    The schema is what the migrations build on an empty in-memory database, each object
    re-created as ``TEMP`` (an index follows its table there).

    Raises:
        StoreError: the migrations cannot be replayed on their own.
    """
    scratch = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for migration in migrations:
            _apply(scratch, migration.apply)
        rows = scratch.execute("SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL"
                               " ORDER BY rowid").fetchall()
        for _kind, sql in rows:
            conn.execute(re.sub(r"^CREATE (TABLE|VIEW|TRIGGER) ", r"CREATE TEMP \1 ", sql))
    except sqlite3.Error as exc:
        raise StoreError(f"{component} is not in this file yet, and its empty schema "
                         f"cannot be shown read-only: {exc}",
                         hint="any wardian command that uses it creates it") from exc
    finally:
        scratch.close()


if TYPE_CHECKING:
    _D = TypeVar("_D", bound="Database")
    _T = TypeVar("_T")

_scope: ContextVar[int | None] = ContextVar("wardian_db_scope", default=None)
"""Which thread's connections this thread uses (None: its own); see `in_this_scope`."""


def in_this_scope(call: Callable[[], _T]) -> Callable[[], _T]:
    """`call`, to run in another thread that uses this thread's connections.

    For a helper thread the caller waits on (a step run in a worker thread so a timeout or
    cancel can reach it): it is part of the caller's unit of work, so it shares the caller's
    one connection per file instead of opening its own.
    """
    scope = _scope.get() or threading.get_ident()

    def run() -> _T:
        token = _scope.set(scope)
        try:
            return call()
        finally:
            _scope.reset(token)

    return run


_cache: weakref.WeakValueDictionary[tuple[int, int, Path], Database] = (
    weakref.WeakValueDictionary())
"""(pid, thread, absolute path) -> the open database object; held by its stores."""
_recent: deque[Database] = deque(maxlen=8)
"""The last few used, held open after their stores let go (one connection per command)."""
_cache_lock = threading.Lock()


def _configured_url(path: Path) -> str | None:
    """The PostgreSQL URL the installation holding `path` uses, or None (SQLite).

    Checked on every `Database.open` (an environment read and one stat), so the SQLite
    path imports nothing of the PostgreSQL backend.
    """
    if os.environ.get(ENV_DATABASE_URL) is None and not os.path.exists(path.parent / URL_FILE):
        return None
    from wardian._pg import configured_url

    return configured_url(Path(path).parent)


def configured_url_for(data_dir: Path) -> str | None:
    """The PostgreSQL URL the installation in `data_dir` uses (``WARDIAN_DATABASE_URL``,
    or its ``database.url``), or None for its SQLite files; reads nothing else, creates
    nothing.

    Raises:
        UsageError: the configured URL is not a PostgreSQL URL, or psycopg is missing.
    """
    return _configured_url(data_dir / "state.db")


def configured_database_url() -> str | None:
    """The PostgreSQL URL this installation uses (``WARDIAN_DATABASE_URL``, or
    ``database.url`` in the data directory), or None for the SQLite files.

    Raises:
        UsageError: the configured URL is not a PostgreSQL URL.
    """
    from wardian.config import state_db_path

    return _configured_url(state_db_path())


def database_exists(path: Path) -> bool:
    """Whether the database `path` names holds anything yet: the SQLite file exists, or
    the installation uses PostgreSQL (its server is there; nothing is created to ask).

    For the read-only shortcuts that skip opening a database nobody has written ("no
    memory.db: no capability can exist"); on PostgreSQL they must open it.
    """
    return path.exists() or _configured_url(path) is not None


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class Database:
    """One SQLite file: one connection per process and thread, migrated once, `atomic()`.

    Get one with `open` (never the constructor): a second `open` of the same file in the same
    process and thread returns the same object, so stores that are views over it share one
    connection and one transaction. The object stays open while anything holds it, and the
    last few used stay open after that (a short CLI command or hook opens each file once);
    `close` ends it for everyone.

    Use as a context manager to close it at the end of a block.
    """

    schema: str = "main"
    """The PostgreSQL schema this database lives in when the installation uses one."""

    readonly: bool = False
    """True for the object of a `read_only` block: nothing is migrated or written."""

    def __init__(self, path: Path, conn: Connection) -> None:
        self.path = path
        self.conn = conn
        self.dialect = "sqlite" if type(conn) is sqlite3.Connection else "postgres"
        """``sqlite`` or ``postgres``: for the few places whose SQL cannot be shared
        (full-text search, schema introspection); everything else is `wardian._pg`'s."""
        self._migrated: set[str] = set()
        self._identity = _file_identity(path) if self.dialect == "sqlite" else (0, 0)
        _write_locks[id(conn)] = threading.RLock()
        weakref.finalize(self, _write_locks.pop, id(conn), None)

    @classmethod
    def open(cls: type[_D], path: Path) -> _D:
        """The database object for `path` in this process and thread (opened, migrated).

        When the installation uses PostgreSQL (``WARDIAN_DATABASE_URL``, or a
        ``database.url`` file beside `path`; `wardian._pg.configured_url`), that database's
        schema `schema` instead of the file.

        Raises:
            StoreError: the file or server cannot be opened or migrated.
            UsageError: the configured URL is not a PostgreSQL URL.
        """
        url = _configured_url(path)
        if url is None:
            return cls.open_at(path)
        return cls.open_at(url, stands_for=path)

    @classmethod
    def open_at(cls: type[_D], location: Path | str, *, stands_for: Path | None = None) -> _D:
        """The database object for an explicit SQLite file or PostgreSQL URL (opened,
        migrated), whatever the installation is configured to use; `open` otherwise.

        Args:
            location: a SQLite file, or a ``postgresql://`` URL.
            stands_for: for a URL, the file it replaces (``path`` then names it, so what
                lives beside the database, such as the model cache, stays in the data
                directory); default ``<data dir>/<schema>.db``.

        Raises:
            StoreError: the file or server cannot be opened or migrated.
        """
        if isinstance(location, str):
            key = (os.getpid(), _scope.get() or threading.get_ident(),
                   Path(f"{location}#{cls.schema}"))
        else:
            key = (os.getpid(), _scope.get() or threading.get_ident(),
                   Path(os.path.abspath(location)))
        with _cache_lock:
            found = _cache.get(key)
        if isinstance(found, cls) and found._same_file():
            cls._touch(found)
            return found
        if isinstance(location, str):
            from wardian._pg import PgConnection

            if stands_for is None:
                from wardian.config import data_dir

                stands_for = data_dir() / f"{cls.schema}.db"
            pg = PgConnection(location, cls.schema)
            db = cls(Path(os.path.abspath(stands_for)), pg)
        else:
            db = cls(key[2], connect(key[2]))
        try:
            db._migrate_on_open()
        except BaseException:
            db.close()
            raise
        with _cache_lock:
            _cache[key] = db
        cls._touch(db)
        return db

    @classmethod
    @contextmanager
    def read_only(cls: type[_D], path: Path) -> Iterator[_D]:
        """A read-only database object for the existing SQLite file `path` (``mode=ro``,
        `open_readonly`), closed when the block ends: no migration runs (`StateDB.require`
        checks that a component's schema is current instead) and a write fails with
        `sqlite3.OperationalError`. It is the block's own: `open` of `path` meanwhile
        returns the ordinary read-write object, so the reader passes this one to the
        stores it reads through.

        For readers that must leave a file as they found it, bytes and mtime included
        (``wardian doctor``), also a file they cannot write. When the installation uses
        PostgreSQL, the object is a connection of its own to that database whose every
        transaction is read-only (nothing is created or migrated there either).

        Raises:
            sqlite3.Error: the file is absent or not a database.
            StoreError: the PostgreSQL server cannot be reached.
        """
        url = _configured_url(path)
        absolute = Path(os.path.abspath(path))
        if url is not None:
            from wardian._pg import PgConnection

            pg = PgConnection(url, cls.schema, read_only=True)
            db = cls(absolute, pg)
        else:
            db = cls(absolute, open_readonly(absolute))
        db.readonly = True
        try:
            yield db
        finally:
            _write_locks.pop(id(db.conn), None)
            db.conn.close()

    def _same_file(self) -> bool:
        """Whether the path still names the file this connection has open (a file removed or
        replaced under us, e.g. a restored backup, gets a new connection, as before)."""
        if self.dialect != "sqlite":
            return True
        return self._identity is not None and _file_identity(self.path) == self._identity

    @classmethod
    def _touch(cls, db: Database) -> None:
        with _cache_lock:
            if db in _recent:
                _recent.remove(db)
            _recent.append(db)

    def _migrate_on_open(self) -> None:
        """Apply this file's migrations (subclasses say which)."""

    def atomic(self, *, locks: Sequence[str] | None = None
               ) -> AbstractContextManager[Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), or a savepoint when nested; `locks`
        makes it narrow on PostgreSQL; see `atomic`."""
        return atomic(self.conn, locks=locks)

    def close(self) -> None:
        """Close the connection for every holder and forget the object (idempotent)."""
        with _cache_lock:
            for key, db in list(_cache.items()):
                if db is self:
                    del _cache[key]
            if self in _recent:
                _recent.remove(self)
        _write_locks.pop(id(self.conn), None)
        self.conn.close()

    def __enter__(self: _D) -> _D:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def backend(self) -> Backend:
        """What this database's backend does differently from the other (row locks,
        notifications, JSON in SQL, whether machines share it): `wardian._backend`."""
        return backend_of(self.conn)


def close_databases(url: str) -> int:
    """Close every open database object on the PostgreSQL database `url` in this process
    (all threads), and its connection pool: before that database is dropped, or when a
    long-running process lets it go. Returns how many were closed."""
    with _cache_lock:
        found = {id(db): db for db in (*_cache.values(), *_recent)
                 if getattr(db.conn, "url", None) == url}
    for db in found.values():
        db.close()
    from wardian._pg import close_pools

    close_pools(url)
    return len(found)


class StateDB(Database):
    """``state.db``: the shared state file where each component owns its tables (on
    PostgreSQL, the ``state`` schema).

    Each store makes sure of its own component's migrations (`require`) when it attaches.
    """

    schema = "state"

    def require(self, component: str,
                migrations: Migrations | Sequence[NamedMigration]) -> None:
        """Make sure `component`'s migrations have run on this file (once per process); on
        a `read_only` object, check that they have (`check_component`), writing nothing.
        `migrations`: a list per backend (`Migrations`), or one list whose SQL both run.

        Raises:
            StoreError: a migration failed, the file is newer than this Wardian, or (read
                only) older.
        """
        if component in self._migrated:
            return
        steps = _steps(self.conn, migrations)
        if self.readonly:
            if (check_component(self.conn, component, steps) == 0
                    and isinstance(self.conn, sqlite3.Connection)):
                # On PostgreSQL a read-only transaction creates nothing, not even a
                # temporary table: reading an absent component's table fails instead.
                _empty_in_temp(self.conn, component, steps)
        else:
            migrate_component(self.conn, component, steps)
        self._migrated.add(component)
