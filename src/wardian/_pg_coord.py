"""Coordination between machines sharing one PostgreSQL database (issue 18).

What SQLite gets from one file on one machine (a write lock, a process table to ask
whether an owner lives, a queue read every few milliseconds), several machines get from
the server here:

* `row_transaction` — a narrow transaction (`wardian._pg.PgConnection.atomic` with no
  keys: the schema-wide writer lock only shared): for statements whose row locks are their
  whole concurrency story, such as a run claim with ``FOR UPDATE SKIP LOCKED``.
* `notify` / `Listener` — ``NOTIFY`` inside the writer's transaction (delivered at
  commit) and ``LISTEN`` on a connection of its own: wake-ups instead of polling.

Imported only when the installation uses PostgreSQL; SQLite never loads this module.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from wardian._pg import PgConnection, redact_url
from wardian.errors import StoreError

__all__ = [
    "EVENTS_CHANNEL",
    "Listener",
    "notify",
    "row_transaction",
]

EVENTS_CHANNEL = "wardian_session_events"
"""Notified when a session-close event is committed pending (payload: the event id)."""


@contextmanager
def row_transaction(conn: PgConnection) -> Iterator[PgConnection]:
    """A narrow transaction on `conn` whose row locks are its whole concurrency story
    (``atomic(locks=())``: the schema's writer lock shared, no key); inside an open one, a
    savepoint of it. Commits at the end; rolls back on any exception and re-raises it.

    Raises:
        sqlite3.Error: what the server said (as `PgConnection.execute` raises it).
    """
    with conn.atomic(()) as same:
        yield same


def notify(conn: sqlite3.Connection, channel: str, payload: str = "") -> None:
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
        url: the database. channel: e.g. `EVENTS_CHANNEL`.

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
