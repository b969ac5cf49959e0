"""The durable queue of session lifecycle events (``state.db`` component ``session_events``).

A session-close event is identified by ``(agent_id, session_id, boundary)``: re-delivering the
same close (a hook that fires twice, `session close` retried) finds the same row and only
counts the delivery. The row is committed **before anything else happens**; only then does the
writer start a detached drain worker (``wardian session _drain``), unless a ``wardian serve``
daemon holds the daemon lock, in which case the daemon drains. The runtime never imports
``wardian.invokers`` (DESIGN.md "Layout"): the worker is a separate process.

Locks are advisory file locks (``fcntl.flock`` / ``msvcrt.locking``) in ``<data dir>/locks``:
the operating system drops them when the holder dies, also on ``kill -9``, so a crashed
worker never blocks the next one.

Spec: DESIGN.md "Invokers".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian._backend import Connection, Row
from wardian._db import (
    Migrations,
    NamedMigration,
    StateDB,
    atomic,
    has_table,
    migrate_component,
)
from wardian._lock import FileLock
from wardian._process import keep
from wardian._util import host_name, new_id, utc_now_iso
from wardian.config import data_dir, open_state_db
from wardian.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BOUNDARIES",
    "DAEMON_LOCK_FILE",
    "DRAIN_LOCK_FILE",
    "EVENTS_CHANNEL",
    "SOURCES",
    "FileLock",
    "SessionEvent",
    "SessionEventQueue",
    "daemon_lock",
    "daemon_running",
    "drain_command",
    "drain_lock",
    "mark_standby",
    "record_session_close",
    "set_session_close_subscribers_in_transaction",
    "start_drain_worker",
    "waiting_for_their_machines",
    "worker_env",
]

BOUNDARIES = ("clear", "shutdown", "provider_source_changed", "worktree_switch", "recovered")
"""Session-close boundary reasons (DESIGN.md "Invokers"); ``recovered`` = a session no hook
reported, found by `wardian.runtime.recovery`."""

SOURCES = ("exec", "launch", "hook", "cli", "recovery")
"""Where an event came from."""

LOGGING_DISABLED = "conversation logging disabled"
"""The archive reason when ``conversation_logging.enabled`` was off at close time."""

EVENTS_CHANNEL = "wardian_session_events"
"""The channel notified (`wardian._backend.Backend.notify`) when a session-close event is
committed pending (payload: the event id), and when a drain commits a queued run for one
(payload ``run:<run id>``), so that idle workers claim it while the worker firing the
event goes on firing it. Only PostgreSQL delivers notifications; SQLite's drains poll."""

DRAIN_LOCK_FILE = "drain.lock"
"""Held by the one running drain worker (``<data dir>/locks/drain.lock``)."""

DAEMON_LOCK_FILE = "serve.lock"
"""Held by ``wardian serve`` for its lifetime; while held, writers start no drain worker."""

STANDBY_FILE = "serve.standby"
"""Present while this data directory's ``wardian serve`` holds `DAEMON_LOCK_FILE` only as a
standby (PostgreSQL: another machine's serve is active); writers then start drain workers
as without a daemon, for the closes whose transcripts only this machine can read."""

def _create_session_close_subscribers(conn: Connection) -> None:
    """Migration 2: the runtime's own copy of which agents have an enabled session-close
    invoker (the invokers component keeps it, `set_session_close_subscribers_in_transaction`).

    Until the invokers component first writes it the copy is *unknown* (no row in
    ``session_close_subscribers_synced``) and every close is left pending for the drain,
    which then decides as before; a file where invokers were never set up starts known
    and empty.
    """
    conn.execute("CREATE TABLE session_close_subscribers (agent_id TEXT PRIMARY KEY)")
    conn.execute("CREATE TABLE session_close_subscribers_synced"
                 " (synced INTEGER PRIMARY KEY CHECK (synced = 1))")
    if not has_table(conn, "invokers"):
        conn.execute("INSERT INTO session_close_subscribers_synced (synced) VALUES (1)")


_MIGRATIONS = Migrations(sqlite=[
    NamedMigration("create_session_events", """
    CREATE TABLE session_events (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        boundary TEXT NOT NULL,
        provider TEXT,
        workspace TEXT,
        transcript_path TEXT,
        source TEXT NOT NULL,
        logging_enabled INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        deliveries INTEGER NOT NULL DEFAULT 1,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processed')),
        processed_at TEXT,
        archive_status TEXT,
        archive_detail TEXT,
        conversation_id TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        UNIQUE (agent_id, session_id, boundary)
    );
    CREATE INDEX session_events_pending ON session_events (status, created_at);
    """),
    NamedMigration("create_session_close_subscribers", _create_session_close_subscribers),
    # The machine that recorded the close (`wardian._util.host_name`): its transcript is a
    # file there, so only a worker on that machine imports it (`SessionEventQueue.pending`).
    NamedMigration("add_session_events_recorded_host", """
    ALTER TABLE session_events ADD COLUMN recorded_host TEXT;
    """),
], postgres=[
    NamedMigration("create_session_events", """
    CREATE TABLE session_events (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        boundary TEXT NOT NULL,
        provider TEXT,
        workspace TEXT,
        transcript_path TEXT,
        source TEXT NOT NULL,
        logging_enabled BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        deliveries BIGINT NOT NULL DEFAULT 1,
        status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processed')),
        processed_at TEXT,
        archive_status TEXT,
        archive_detail TEXT,
        conversation_id TEXT,
        attempts BIGINT NOT NULL DEFAULT 0,
        last_error TEXT,
        UNIQUE (agent_id, session_id, boundary),
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY
    );
    CREATE INDEX session_events_pending ON session_events (status, created_at);
    """),
    NamedMigration("create_session_close_subscribers", _create_session_close_subscribers),
    NamedMigration("add_session_events_recorded_host", """
    ALTER TABLE session_events ADD COLUMN recorded_host TEXT;
    """),
])


def set_session_close_subscribers_in_transaction(
    conn: Connection, agent_ids: Iterable[str]
) -> None:
    """Replace the set of agents that have an enabled session-close invoker.

    The invokers component calls this inside every transaction that enables, disables or
    removes an invoker, so the event writer's check (`SessionEventQueue.append`) reads the
    set in its own write transaction and an invoker enabled concurrently is ordered after
    the event, as when it read the invokers themselves. Creates the runtime's tables first
    when this file lacks them. Expects an open transaction (``atomic``).

    Args:
        conn: a connection to ``state.db`` inside a write transaction.
        agent_ids: every agent id with at least one enabled session-close invoker.
    """
    migrate_component(conn, "session_events", _MIGRATIONS.on(conn))
    conn.execute("DELETE FROM session_close_subscribers")
    conn.executemany("INSERT INTO session_close_subscribers (agent_id) VALUES (?)",
                     [(agent_id,) for agent_id in sorted(set(agent_ids))])
    conn.execute("INSERT INTO session_close_subscribers_synced (synced) VALUES (1)"
                 " ON CONFLICT DO NOTHING")


class SessionEvent(NamedTuple):
    """One session lifecycle event.

    Attributes:
        id: UUID4; also the *boundary id* in idempotency keys.
        agent_id, session_id, boundary: the identity of the event.
        provider, workspace, transcript_path: what the closing session reported (or None).
        source: ``exec`` | ``launch`` | ``hook`` | ``cli``.
        logging_enabled: ``conversation_logging.enabled`` for the agent at close time.
        created_at: first delivery, UTC ISO-8601 ``Z``; deliveries counts re-deliveries.
        status: ``pending`` until every matching invoker has a run, then ``processed``.
        archive_status: None (not decided yet), ``available`` or ``unavailable``;
        archive_detail: the reason when unavailable; conversation_id when available.
        recorded_host: the machine whose hook or CLI recorded it (`wardian._util.host_name`;
            None for an event recorded before Wardian kept it).
    """

    id: str
    agent_id: str
    session_id: str
    boundary: str
    provider: str | None
    workspace: str | None
    transcript_path: str | None
    source: str
    logging_enabled: bool
    created_at: str
    deliveries: int
    status: str
    processed_at: str | None
    archive_status: str | None
    archive_detail: str | None
    conversation_id: str | None
    attempts: int
    last_error: str | None
    recorded_host: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON-ready dict."""
        return self._asdict()


def _row(row: Row) -> SessionEvent:
    data = dict(row)
    data["logging_enabled"] = bool(data["logging_enabled"])
    return SessionEvent(**data)


class SessionEventQueue:
    """The ``session_events`` table: append (idempotently), read pending, mark processed.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("session_events", _MIGRATIONS)
        self.conn: Connection = self.db.conn

    def append(
        self,
        *,
        agent_id: str,
        boundary: str,
        session_id: str,
        source: str,
        logging_enabled: bool,
        provider: str | None = None,
        workspace: str | None = None,
        transcript_path: str | None = None,
    ) -> tuple[SessionEvent, bool]:
        """Store an event, or count a re-delivery of the same ``(agent, session, boundary)``.

        A re-delivery fills in a transcript path/provider/workspace the first delivery lacked
        while the event is still pending; it never changes anything else. Atomic.

        Returns:
            (event, created) — created is False for a re-delivery.
        """
        # Narrow on PostgreSQL: the key's lock orders two deliveries of one close (the
        # second counts as a re-delivery); the subscriber read below still sees invoker
        # changes whole, as those writers take the schema's writer lock exclusively.
        with atomic(self.conn, locks=(f"session-event:{agent_id}:{session_id}:{boundary}",)):
            row = self.conn.execute(
                "SELECT id FROM session_events WHERE agent_id = ? AND session_id = ?"
                " AND boundary = ?",
                (agent_id, session_id, boundary),
            ).fetchone()
            if row is None:
                event_id = new_id()
                self.conn.execute(
                    "INSERT INTO session_events (id, agent_id, session_id, boundary, provider,"
                    " workspace, transcript_path, source, logging_enabled, created_at,"
                    " recorded_host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (event_id, agent_id, session_id, boundary, provider, workspace,
                     transcript_path, source, 1 if logging_enabled else 0, utc_now_iso(),
                     host_name()),
                )
                if not logging_enabled and not self._has_enabled_invoker(agent_id):
                    # Nothing can come of this close: no archive to import and no invoker
                    # to fire (checked in this same write transaction, so an invoker
                    # enabled concurrently is ordered after the event). Settle it now and
                    # spare a drain worker's start-up.
                    self.conn.execute(
                        "UPDATE session_events SET status = 'processed', processed_at = ?,"
                        " archive_status = 'unavailable', archive_detail = ? WHERE id = ?",
                        (utc_now_iso(), LOGGING_DISABLED, event_id),
                    )
                else:
                    # Wakes every machine's listening drain when this commits (a rollback
                    # sends nothing): LISTEN/NOTIFY instead of polling the queue.
                    self.db.backend.notify(self.conn, EVENTS_CHANNEL, event_id)
                created = True
            else:
                event_id = row["id"]
                self.conn.execute(
                    "UPDATE session_events SET deliveries = deliveries + 1,"
                    " transcript_path = CASE WHEN status = 'pending'"
                    "   THEN COALESCE(transcript_path, ?) ELSE transcript_path END,"
                    " provider = COALESCE(provider, ?), workspace = COALESCE(workspace, ?)"
                    " WHERE id = ?",
                    (transcript_path, provider, workspace, event_id),
                )
                created = False
        return self.get(event_id), created

    def _has_enabled_invoker(self, agent_id: str) -> bool:
        """Whether the agent may have an enabled session-close invoker: it is in the
        subscriber set the invokers component keeps, or that set is not known yet (see
        `set_session_close_subscribers_in_transaction`). Read inside the caller's
        transaction."""
        if self.conn.execute("SELECT 1 FROM session_close_subscribers_synced").fetchone() is None:
            return True
        row = self.conn.execute(
            "SELECT 1 FROM session_close_subscribers WHERE agent_id = ?", (agent_id,)
        ).fetchone()
        return row is not None

    def get(self, event_id: str) -> SessionEvent:
        """One event by full id. Read-only.

        Raises:
            NotFoundError: no such event.
        """
        row = self.conn.execute(
            "SELECT * FROM session_events WHERE id = ?", (event_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no session event {event_id!r}")
        return _row(row)

    def _workable(self) -> tuple[str, tuple[Any, ...]]:
        """On PostgreSQL, where workers on several machines share the queue: the condition
        leaving out the events this machine cannot work on, those whose transcript is
        still to be imported from another machine (it is a file there). SQLite: none."""
        if not self.db.backend.shared_across_machines:
            return "", ()
        return (" AND (recorded_host IS NULL OR recorded_host = ? OR archive_status IS NOT"
                " NULL OR transcript_path IS NULL OR logging_enabled = 0)", (host_name(),))

    def pending(self, limit: int | None = None) -> list[SessionEvent]:
        """Pending events this machine can work on (`_workable`), oldest first (at most
        `limit`). Read-only."""
        where, params = self._workable()
        sql = f"SELECT * FROM session_events WHERE status = 'pending'{where}" \
              " ORDER BY created_at, id"
        if limit is not None:
            sql += " LIMIT ?"
            params = (*params, limit)
        return [_row(r) for r in self.conn.execute(sql, params).fetchall()]

    def has_pending(self) -> bool:
        """Whether any event this machine can work on is pending. Read-only."""
        where, params = self._workable()
        return self.conn.execute(
            f"SELECT 1 FROM session_events WHERE status = 'pending'{where} LIMIT 1", params
        ).fetchone() is not None

    def list(self, *, agent_id: str | None = None, limit: int = 100) -> list[SessionEvent]:
        """Recent events, newest first. Read-only."""
        where, params = ("", []) if agent_id is None else (" WHERE agent_id = ?", [agent_id])
        rows = self.conn.execute(
            f"SELECT * FROM session_events{where} ORDER BY created_at DESC, id LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [_row(r) for r in rows]

    @contextmanager
    def processing(self, event: SessionEvent) -> Iterator[SessionEvent | None]:
        """Claim `event` for processing for the block: the event as it is now, or None when
        another worker is processing it or has processed it since it was read.

        PostgreSQL, where workers on several machines share the queue: a session advisory
        lock on the event (`wardian._pg_coord.try_session_lock`, never waited for), so
        one worker fires its invokers while the others go on to other events and runs;
        a killed worker's claim ends with its connection. SQLite: `event` as given (one
        machine's drain; exactly-once rests on the runs' idempotency keys on both).
        """
        if not self.db.backend.shared_across_machines:
            yield event
            return
        from wardian._pg_coord import try_session_lock

        with try_session_lock(self.conn, f"session-event:{event.id}") as held:  # type: ignore[arg-type]
            if not held:
                yield None
                return
            now = self.get(event.id)  # it may have been processed since the pass read it
            yield now if now.status == "pending" else None

    def set_archive(
        self, event_id: str, status: str, detail: str | None, conversation_id: str | None
    ) -> SessionEvent:
        """Record the archive outcome once; a later call keeps the first outcome. Atomic.

        Args:
            status: ``available`` or ``unavailable``.
            detail: the reason when unavailable.
        """
        with atomic(self.conn, locks=()):  # narrow: one guarded row update
            self.conn.execute(
                "UPDATE session_events SET archive_status = ?, archive_detail = ?,"
                " conversation_id = ? WHERE id = ? AND archive_status IS NULL",
                (status, detail, conversation_id, event_id),
            )
        return self.get(event_id)

    def mark_processed(self, event_id: str, *, error: str | None = None) -> None:
        """Mark an event processed (idempotent; atomic; narrow: one guarded row update)."""
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "UPDATE session_events SET status = 'processed', processed_at = ?,"
                " last_error = COALESCE(?, last_error) WHERE id = ? AND status = 'pending'",
                (utc_now_iso(), error, event_id),
            )

    def record_failure(self, event_id: str, error: str) -> int:
        """Count a failed processing attempt and keep its message; returns attempts. Atomic;
        narrow (the update's row lock holds until the count is read back)."""
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "UPDATE session_events SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error[:2000], event_id),
            )
            row = self.conn.execute(
                "SELECT attempts FROM session_events WHERE id = ?", (event_id,)
            ).fetchone()
        return int(row["attempts"]) if row else 0


def waiting_for_their_machines(conn: Connection, older_than: str
                                ) -> list[tuple[str, int, str]]:
    """Pending closes whose transcript only the machine that recorded them can import
    (`SessionEventQueue.pending` on PostgreSQL), recorded before `older_than` (UTC ISO):
    (machine, how many, the oldest's time) per machine. Read-only; for ``wardian doctor``
    on any connection to the state schema (a read-only one too); [] before migration 3."""
    has_column = any(str(r[1]) == "recorded_host" for r in conn.execute(
        "SELECT 0, column_name FROM information_schema.columns WHERE table_schema ="
        " current_schema() AND table_name = 'session_events'"))
    if not has_column:
        return []
    return [(str(host), int(n), str(oldest)) for host, n, oldest in conn.execute(
        "SELECT recorded_host, COUNT(*), MIN(created_at) FROM session_events"
        " WHERE status = 'pending' AND archive_status IS NULL AND logging_enabled = 1"
        " AND transcript_path IS NOT NULL AND recorded_host IS NOT NULL"
        " AND created_at < ? GROUP BY recorded_host ORDER BY recorded_host", (older_than,))]


# --- locks ------------------------------------------------------------------------------


def _locks_dir() -> Path:
    return data_dir() / "locks"


def drain_lock() -> FileLock:
    """The lock one drain worker holds while it drains."""
    return FileLock(_locks_dir() / DRAIN_LOCK_FILE)


def daemon_lock() -> FileLock:
    """The lock ``wardian serve`` holds for its lifetime (`acquire()` it at start-up)."""
    return FileLock(_locks_dir() / DAEMON_LOCK_FILE)


def daemon_running() -> bool:
    """Whether a ``wardian serve`` daemon currently holds the daemon lock and drains (not
    as a standby: `STANDBY_FILE`)."""
    return daemon_lock().held_elsewhere() and not (_locks_dir() / STANDBY_FILE).exists()


def mark_standby(standby: bool) -> None:
    """Say (`STANDBY_FILE`) whether the holder of the daemon lock, the caller, is only a
    standby; call it holding the lock. Best effort: a file that cannot be written leaves
    the writers trusting the daemon, as before."""
    path = _locks_dir() / STANDBY_FILE
    try:
        if standby:
            path.touch(mode=0o600)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


# --- writing events ---------------------------------------------------------------------


DRAIN_ARGV = ("session", "_drain")
"""The CLI command a detached drain worker runs (``wardian session _drain``)."""


def drain_command() -> list[str]:
    """The argv of one detached drain worker: ``python -P -m wardian session _drain``.

    ``wardian`` itself (DESIGN.md "Layout": the runtime never imports ``wardian.invokers``);
    ``python -m wardian`` runs that command without loading the CLI first (`wardian.__main__`).
    ``-P`` keeps the writer's working directory (a hook's project) off ``sys.path``, so no
    project file can shadow a module the worker imports.
    """
    return [os.path.abspath(sys.executable), "-P", "-m", "wardian", *DRAIN_ARGV]


def worker_env() -> dict[str, str]:
    """The drain worker's environment: this one without a managed agent's variables.

    The worker runs every agent's automations for the operator; it must not carry the
    capability, agent id or context of the managed session whose hook started it (a
    curator provider it runs for another agent would inherit them).
    """
    from wardian.memory.principal import MANAGED_ENV

    return {k: v for k, v in os.environ.items() if k not in MANAGED_ENV}


def start_drain_worker() -> int | None:
    """Start a detached drain worker unless a daemon drains; returns its pid or None.

    The worker is its own session/process group with no terminal and stdio to
    ``<data dir>/logs/drain.log``, so it outlives the hook that started it; its environment
    is `worker_env`. Never raises
    for a failed start: the event is already stored and the next writer or the daemon
    picks it up.
    """
    import subprocess  # here, not at the top: most writers never start a worker

    if daemon_running():
        return None
    if drain_lock().held_elsewhere():
        # A worker is draining; it re-checks the queue after releasing its lock.
        return None
    logs = data_dir() / "logs"
    try:
        from wardian._fs import open_private, private_dir

        private_dir(logs)
        log = open_private(logs / "drain.log", "ab")  # handed to the child
    except OSError:
        log = None
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":  # pragma: no cover
        kwargs["creationflags"] = (
            subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        )
    else:
        kwargs["start_new_session"] = True
    try:
        proc = subprocess.Popen(
            drain_command(),
            stdin=subprocess.DEVNULL,
            stdout=log if log is not None else subprocess.DEVNULL,
            stderr=log if log is not None else subprocess.DEVNULL,
            close_fds=True,
            env=worker_env(),
            **kwargs,
        )
    except OSError:
        return None
    finally:
        if log is not None:
            log.close()
    return keep(proc)


def record_session_close(
    agent_id: str,
    boundary: str = "shutdown",
    session_id: str | None = None,
    transcript_path: str | None = None,
    provider: str | None = None,
    workspace: str | None = None,
    source: str = "cli",
    start_drain: bool = True,
    state: StateDB | None = None,
) -> str:
    """Store a session-close event durably, then start a drain worker; returns the event id.

    The event is committed before anything else. Re-delivering the same
    ``(agent_id, session_id, boundary)`` returns the same event id. Without a session id,
    every call is its own session (a fresh id is allocated). Whether conversation logging
    is on for the agent is read now, at close time.

    Args:
        agent_id: the agent's full id.
        boundary: one of `BOUNDARIES`.
        session_id: the provider's session id, if known.
        transcript_path: the session transcript (made absolute).
        provider, workspace: what the session ran with.
        source: one of `SOURCES`.
        start_drain: start a detached drain worker (False in tests and from a daemon).
        state: the open state database the event is stored in (default: the
            installation's, `wardian.config.open_state_db`).

    Raises:
        UsageError: unknown boundary or source.
    """
    if boundary not in BOUNDARIES:
        raise UsageError(
            f"unknown boundary {boundary!r}", hint=f"use one of: {', '.join(BOUNDARIES)}"
        )
    if source not in SOURCES:
        raise UsageError(f"unknown event source {source!r}", hint=f"use one of {SOURCES}")
    from wardian.config import SettingsStore

    queue = SessionEventQueue(state or open_state_db())
    settings = SettingsStore(queue.db)
    logging_enabled = bool(
        settings.get("conversation_logging.enabled", agent_id=agent_id)
    )
    if transcript_path:
        transcript_path = str(Path(transcript_path).expanduser().absolute())
    if workspace:
        workspace = str(Path(workspace).expanduser().absolute())
    event, _created = queue.append(
        agent_id=agent_id,
        boundary=boundary,
        session_id=session_id or new_id(),
        source=source,
        logging_enabled=logging_enabled,
        provider=provider,
        workspace=workspace,
        transcript_path=transcript_path,
    )
    if start_drain and event.status == "pending":
        start_drain_worker()
    return event.id
