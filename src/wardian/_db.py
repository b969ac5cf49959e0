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
  migration. Each package passes its own ordered list.

Each migration is applied with its bookkeeping inside one transaction, so a
failed migration leaves nothing behind and stays pending.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from wardian.errors import StoreError

__all__ = [
    "BUSY_TIMEOUT_MS",
    "Migration",
    "atomic",
    "connect",
    "migrate_component",
    "migrate_user_version",
]

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for the write lock before failing, in milliseconds."""

Migration = str | Callable[[sqlite3.Connection], None]
"""A migration is a SQL script or a function that runs inside the open transaction."""

_savepoints = itertools.count()
_local = threading.local()


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
        conn = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(
            f"cannot open database {path}: {_why_not_writable(path) or exc}",
            hint="check the file's permissions, or move WARDIAN_HOME to a writable folder",
        ) from exc
    return conn


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
def atomic(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run the block in one write transaction (``BEGIN IMMEDIATE``), or a savepoint if nested.

    Commits when the block ends normally; rolls back on any exception (including
    `KeyboardInterrupt`) and re-raises it unchanged.

    Raises:
        StoreError: the write lock could not be taken within `BUSY_TIMEOUT_MS`.
    """
    if conn.in_transaction:
        name = f"sp_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise  # read-only, disk I/O, …: `wardian.oserrors` words those
        raise StoreError(
            f"database is busy: {exc}", hint="another Wardian process holds the write lock; retry"
        ) from exc
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _apply(conn: sqlite3.Connection, migration: Migration) -> None:
    if callable(migration):
        migration(conn)
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


def migrate_user_version(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> int:
    """Apply pending `migrations` in order, counting them in ``PRAGMA user_version``.

    Forward-only: a database newer than this code (user_version > len(migrations))
    is refused rather than written to.

    Returns:
        The schema version after migrating.

    Raises:
        StoreError: the database is newer than this Wardian, or a migration failed.
    """
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current > len(migrations):
        raise StoreError(
            f"database schema version {current} is newer than this Wardian "
            f"understands ({len(migrations)})",
            hint="upgrade wardian",
        )
    for version in range(current + 1, len(migrations) + 1):
        try:
            with atomic(conn):
                # Re-read inside the lock: another process may have migrated meanwhile.
                now = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if now >= version:
                    continue
                _apply(conn, migrations[version - 1])
                conn.execute(f"PRAGMA user_version = {version}")
        except sqlite3.Error as exc:
            raise StoreError(f"migration {version} failed: {exc}") from exc
    return len(migrations)


def migrate_component(
    conn: sqlite3.Connection, component: str, migrations: Sequence[Migration]
) -> int:
    """Apply pending `migrations` of one `component` of a shared database.

    Args:
        component: a stable name such as ``"agents"`` or ``"runs"``.
        migrations: ordered; version N is ``migrations[N-1]``.

    Returns:
        The component's schema version after migrating.

    Raises:
        StoreError: a migration failed, or the component is newer than this code.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " component TEXT NOT NULL, version INTEGER NOT NULL, applied_at TEXT NOT NULL,"
        " PRIMARY KEY (component, version))"
    )

    def applied() -> int:
        row = conn.execute(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE component = ?",
            (component,),
        ).fetchone()
        return int(row[0])

    current = applied()
    if current > len(migrations):
        raise StoreError(
            f"{component} schema version {current} is newer than this Wardian "
            f"understands ({len(migrations)})",
            hint="upgrade wardian",
        )
    for version in range(current + 1, len(migrations) + 1):
        try:
            with atomic(conn):
                if applied() >= version:
                    continue
                _apply(conn, migrations[version - 1])
                conn.execute(
                    "INSERT INTO schema_migrations (component, version, applied_at)"
                    " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                    (component, version),
                )
        except sqlite3.Error as exc:
            raise StoreError(f"{component} migration {version} failed: {exc}") from exc
    return len(migrations)
