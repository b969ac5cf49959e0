"""Coordination between machines sharing one PostgreSQL database.

What SQLite gets from one file on one machine (a write lock, a process table to ask
whether an owner lives, a queue read every few milliseconds), several machines get from
the server here:

* `row_transaction` — a narrow transaction (`wardian._pg.PgConnection.atomic` with no
  keys: the schema-wide writer lock only shared): for statements whose row locks are their
  whole concurrency story, such as a run claim with ``FOR UPDATE SKIP LOCKED``.
* `try_session_lock` — a session-level advisory lock taken only if free, held across the
  block's transactions: a worker's claim on a piece of work (an event it is firing) that
  the others skip instead of repeating, released by the server if the worker dies.
* `notify` / `Listener` — ``NOTIFY`` inside the writer's transaction (delivered at
  commit) and ``LISTEN`` on a connection of its own: wake-ups instead of polling.
* `lock_sessions` — who holds a `wardian._pg.SessionLock` and who waits for it, by the
  names their sessions carry (``wardian serve --status`` on any machine).

Imported only when the installation uses PostgreSQL; SQLite never loads this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from wardian._backend import Connection
from wardian._pg import PgConnection, redact_url
from wardian.errors import StoreError

__all__ = [
    "Listener",
    "LockSession",
    "lock_sessions",
    "notify",
    "row_transaction",
    "try_session_lock",
]

@contextmanager
def row_transaction(conn: PgConnection) -> Iterator[PgConnection]:
    """A narrow transaction on `conn` whose row locks are its whole concurrency story
    (``atomic(locks=())``: the schema's writer lock shared, no key); inside an open one, a
    savepoint of it. Commits at the end; rolls back on any exception and re-raises it.

    Raises:
        psycopg.Error: what the server said (as `PgConnection.execute` raises it).
    """
    with conn.atomic(()) as same:
        yield same


@contextmanager
def try_session_lock(conn: PgConnection, key: str) -> Iterator[bool]:
    """For the block, the session advisory lock on `key` (`wardian._pg.key_lock_key`
    under ``session:``, apart from transaction keys) if no other session holds it; never
    waits. Yields whether this session holds it. Held across the block's transactions and
    released at its end (the server releases it when a killed process's connection closes).

    Raises:
        psycopg.Error: what the server said.
    """
    from wardian._pg import key_lock_key

    number = key_lock_key(conn.schema, f"session:{key}")
    row = conn.execute("SELECT pg_try_advisory_lock(?)", (number,)).fetchone()
    held = bool(row and row[0])
    try:
        yield held
    finally:
        if held:
            conn.execute("SELECT pg_advisory_unlock(?)", (number,))


def notify(conn: Connection, channel: str, payload: str = "") -> None:
    """``NOTIFY channel, payload`` on `conn` (a `PgConnection`): inside a transaction the
    listeners hear it when it commits, never for one rolled back."""
    conn.execute("SELECT pg_notify(?, ?)", (channel, payload))


def _connect(url: str) -> Any:
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to PostgreSQL at {redact_url(url)}: "
            f"{redact_url(str(exc).strip())}",
            hint="check that the server runs and accepts this user (pg_isready)") from exc


class Listener:
    """``LISTEN channel`` on a connection of its own; `wait` returns on a notification.

    Args:
        url: the database. channel: e.g.
            `wardian.runtime.session_events.EVENTS_CHANNEL`.

    Raises:
        StoreError: the server cannot be reached.
    """

    def __init__(self, url: str, channel: str) -> None:
        self._conn = _connect(url)
        self._conn.execute(f'LISTEN "{channel}"'.encode())

    def wait(self, timeout_s: float) -> list[str]:
        """Wait up to `timeout_s` seconds for notifications; returns their payloads (empty
        on timeout). Everything already queued is returned at once."""
        got: list[str] = []
        for note in self._conn.notifies(timeout=timeout_s, stop_after=1):
            got.append(note.payload)
        # Whatever else arrived meanwhile, without waiting again.
        for note in self._conn.notifies(timeout=0):
            got.append(note.payload)
        return got

    def close(self) -> None:
        """End the connection (stops listening); idempotent."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LockSession(NamedTuple):
    """A session that holds a session lock or is named as waiting for it."""

    application_name: str
    holds: bool


def lock_sessions(url: str, name: str, *, prefix: str) -> list[LockSession]:
    """The sessions of the database `url` that hold the `wardian._pg.SessionLock` `name`
    (whatever they are called), or whose ``application_name`` starts with `prefix`
    (waiting for it, or about to), holders first. Read-only, on a connection of its own;
    ``pg_locks`` and the names in ``pg_stat_activity`` are readable by every role.

    Raises:
        StoreError: the server cannot be reached.
        psycopg.Error: what the server said.
    """
    from wardian._pg import _connect_own, schema_lock_key

    key = schema_lock_key(name) & 0xFFFFFFFFFFFFFFFF  # pg_locks splits it in two oids
    conn = _connect_own(url, read_only=True)
    try:
        rows = conn.execute(
            "SELECT a.application_name, EXISTS (SELECT 1 FROM pg_locks l WHERE"
            " l.pid = a.pid AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND l.database = a.datid AND l.classid = %s::oid AND l.objid = %s::oid) AS holds"
            " FROM pg_stat_activity a WHERE a.datname = current_database()"
            " AND a.pid <> pg_backend_pid()"
            " ORDER BY holds DESC, a.backend_start, a.pid",
            (key >> 32, key & 0xFFFFFFFF)).fetchall()
    finally:
        conn.close()
    return [LockSession(str(app or ""), bool(holds)) for app, holds in rows
            if holds or str(app or "").startswith(prefix)]
