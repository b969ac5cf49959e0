"""The ``wardian serve`` lock holder description and ``serve --status``.

The lock itself is `wardian.runtime.session_events.daemon_lock` (an OS file lock on
``<data dir>/locks/serve.lock``, dropped by the OS when the holder dies, also on kill -9): the
session-event writers probe the same lock to know that a daemon drains. Taking it writes the
holder's record (pid, start time, since: `wardian._lock.FileLock.holder`), so a second
``serve`` (waiting as its standby, `ScheduleDaemon.wait_for_locks`, or refused by
`acquire_daemon_lock`) and ``serve --status`` can name it; a record left by a killed daemon
names a dead process or a recycled pid and is ignored.

On PostgreSQL one ``serve`` runs across every machine sharing the database: the one holding
the database's scheduler lock is **active**; every other waits as a standby, holding its
own machine's lock. Each names its lock session (`serve_session_name`: pid, since, host),
so ``serve --status`` on any machine reads who is active and who stands by from the
server (`wardian._pg_coord.lock_sessions`), not from its own machine's lock, which a
standby holds too.

Spec: DESIGN.md "Invokers".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wardian.errors import ConflictError

if TYPE_CHECKING:
    from wardian._lock import FileLock, LockHolder

__all__ = [
    "DaemonAlreadyRunning",
    "DaemonStatus",
    "ServeInstance",
    "acquire_daemon_lock",
    "daemon_status",
    "serve_session_name",
]

_SESSION_PREFIX = "wardian serve "
"""How a ``serve``'s PostgreSQL lock session's name starts (`serve_session_name`)."""


@dataclass(frozen=True)
class ServeInstance:
    """One ``wardian serve`` seen on the database: its pid and host (None when its session
    carries no name, e.g. an older Wardian), since when it is active or waits, and whether
    it is this data directory's."""

    pid: int | None
    host: str | None
    since: str | None
    here: bool = False

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"pid": self.pid, "host": self.host, "since": self.since, "here": self.here}


@dataclass(frozen=True)
class DaemonStatus:
    """Whether a daemon runs, and who (pid, since UTC ISO) when known.

    On SQLite: the holder of this data directory's lock. On PostgreSQL (`database` set,
    redacted): the **active** ``serve`` across every machine sharing the database
    (`host`: its machine), the `standbys` waiting to take over, and `here`: whether
    this data directory's ``serve`` is the ``"active"`` one or a ``"standby"`` (None when
    it runs none).
    """

    running: bool
    pid: int | None = None
    since: str | None = None
    host: str | None = None
    here: str | None = None
    standbys: tuple[ServeInstance, ...] = ()
    database: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (on PostgreSQL also ``host``, ``here``, ``standbys``,
        ``database``)."""
        out: dict[str, Any] = {"running": self.running, "pid": self.pid, "since": self.since}
        if self.database is not None:
            out.update(host=self.host, here=self.here,
                       standbys=[s.to_json() for s in self.standbys], database=self.database)
        return out


def _host() -> str:
    from wardian._util import host_name

    return host_name()


def serve_session_name(since: datetime) -> str:
    """The name this ``serve`` gives its PostgreSQL lock session, active or waiting since
    `since`: ``wardian serve <pid> <since, epoch s> <host>``, the host cut to fit
    PostgreSQL's 63 bytes."""
    head = f"{_SESSION_PREFIX}{os.getpid()} {int(since.timestamp())} "
    room = 63 - len(head.encode())
    return head + _host().encode()[:room].decode(errors="ignore")


def _instance(session_name: str) -> ServeInstance:
    from wardian._util import format_utc

    parts = session_name[len(_SESSION_PREFIX):].split(" ", 2)
    if not session_name.startswith(_SESSION_PREFIX) or len(parts) != 3 or not (
            parts[0].isdigit() and parts[1].isdigit()):
        return ServeInstance(None, None, None)
    since = format_utc(datetime.fromtimestamp(int(parts[1]), UTC))
    return ServeInstance(int(parts[0]), parts[2], since)


class DaemonAlreadyRunning(ConflictError):
    """Another ``wardian serve`` holds the daemon lock (exit 4)."""

    def __init__(self, status: DaemonStatus, *, elsewhere: str | None = None) -> None:
        self.status = status
        if elsewhere is not None:
            from wardian._pg import redact_url

            super().__init__(
                "wardian serve is already running on another machine that shares the "
                f"database {redact_url(elsewhere)}; only one daemon may run",
                hint="stop that one first (SIGTERM stops it cleanly), or let it serve"
                " every machine: events recorded here are drained there")
            return
        who = f"pid {status.pid}" if status.pid else "another process"
        since = f", running since {status.since}" if status.since else ""
        # There is no stop command: say how a daemon is stopped (daemon.py handles both
        # signals, letting in-flight runs finish).
        if status.pid:
            how = (f"stop it with Ctrl-C in its terminal or `kill {status.pid}`: "
                   "SIGTERM stops it cleanly")
        else:
            how = ("stop it with Ctrl-C in its terminal, or find its pid with "
                   "`wardian serve --status` and `kill` it: SIGTERM stops it cleanly")
        super().__init__(
            f"wardian serve is already running ({who}{since}); only one daemon may run",
            hint=how,
        )


def _status(holder: LockHolder | None) -> DaemonStatus:
    if holder is None:
        return DaemonStatus(True, None, None)
    return DaemonStatus(True, holder.pid, holder.since)


def acquire_daemon_lock() -> FileLock:
    """Take the daemon lock for this process's lifetime; returns the held `FileLock`.

    No timed retry: probes by event writers do not take the lock (`wardian._lock`), and a
    refused attempt reads the holder's record, waiting on the lock's gate until a holder
    that has just taken the lock has written it. A holder that let go in between is simply
    followed by one more attempt.

    Raises:
        DaemonAlreadyRunning: another ``wardian serve`` holds it (names its pid and since
            when its record names a live process).
    """
    from wardian.runtime.session_events import daemon_lock

    lock = daemon_lock()
    if lock.acquire():
        return lock
    holder = lock.holder()
    if holder is None and lock.acquire():  # it was released between the two looks
        return lock
    raise DaemonAlreadyRunning(_status(holder))


def daemon_status() -> DaemonStatus:
    """Whether a ``wardian serve`` runs now, and who (read-only; waits only on the lock's
    gate, for microseconds). On PostgreSQL: the active one across machines, its standbys,
    and which of them is this data directory's (`DaemonStatus`).

    Raises:
        StoreError: the PostgreSQL server cannot be reached.
    """
    from wardian._db import configured_database_url
    from wardian.runtime.session_events import daemon_lock

    lock = daemon_lock()
    local = DaemonStatus(running=False)
    if lock.held_elsewhere():
        holder = lock.holder()
        if holder is not None or lock.held_elsewhere():  # else it stopped while we looked
            local = _status(holder)
    url = configured_database_url()
    if url is None:
        return local
    return _database_status(url, local)


def _database_status(url: str, local: DaemonStatus) -> DaemonStatus:
    """`daemon_status` on PostgreSQL: from the server's lock table and session names."""
    from wardian._pg import redact_url
    from wardian._pg_coord import lock_sessions

    sessions = lock_sessions(url, "serve", prefix=_SESSION_PREFIX)
    host = _host()

    def seen(session_name: str) -> ServeInstance:
        instance = _instance(session_name)
        # Its name may cut the host short.
        here = (instance.pid is not None and instance.pid == local.pid
                and bool(instance.host) and host.startswith(instance.host or ""))
        return replace(instance, here=here)

    active = next((seen(s.application_name) for s in sessions if s.holds), None)
    standbys = tuple(seen(s.application_name) for s in sessions if not s.holds)
    here = "active" if active is not None and active.here else (
        "standby" if any(s.here for s in standbys) else None)
    if active is None:
        return DaemonStatus(False, here=here, standbys=standbys, database=redact_url(url))
    return DaemonStatus(True, active.pid, active.since, active.host, here, standbys,
                        redact_url(url))
