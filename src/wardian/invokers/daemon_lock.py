"""The ``wardian serve`` lock holder description and ``serve --status``.

The lock itself is `wardian.runtime.session_events.daemon_lock` (an OS file lock on
``<data dir>/locks/serve.lock``, dropped by the OS when the holder dies, also on kill -9): the
session-event writers probe the same lock to know that a daemon drains. Taking it writes the
holder's record (pid, start time, since: `wardian._lock.FileLock.holder`), so a second
``serve`` (waiting as its standby, `ScheduleDaemon.wait_for_locks`, or refused by
`acquire_daemon_lock`) and ``serve --status`` can name it; a record left by a killed daemon
names a dead process or a recycled pid and is ignored.

Spec: DESIGN.md "Invokers"; issue 8 point 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wardian.errors import ConflictError

if TYPE_CHECKING:
    from wardian._lock import FileLock, LockHolder

__all__ = [
    "DaemonAlreadyRunning",
    "DaemonStatus",
    "acquire_daemon_lock",
    "daemon_status",
]

@dataclass(frozen=True)
class DaemonStatus:
    """Whether a daemon holds the lock, and who (pid, since UTC ISO) when known."""

    running: bool
    pid: int | None = None
    since: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"running": self.running, "pid": self.pid, "since": self.since}


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
    """Whether a ``wardian serve`` holds the daemon lock now, and who (read-only; waits only
    on the lock's gate, for microseconds)."""
    from wardian.runtime.session_events import daemon_lock

    lock = daemon_lock()
    if not lock.held_elsewhere():
        return DaemonStatus(running=False)
    holder = lock.holder()
    if holder is None and not lock.held_elsewhere():
        return DaemonStatus(running=False)  # it stopped while we looked (or it was a probe)
    return _status(holder)
