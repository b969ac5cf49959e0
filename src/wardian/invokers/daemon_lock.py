"""The ``wardian serve`` lock holder description and ``serve --status``.

The lock itself is `wardian.runtime.session_events.daemon_lock` (an OS file lock on
``<data dir>/locks/serve.lock``, dropped by the OS when the holder dies, also on kill -9): the
session-event writers check the same lock to know that a daemon drains. The holder writes
``<data dir>/locks/serve.json`` (pid, since) right after taking it, so a refused second
``serve`` and ``serve --status`` can name it.

Spec: DESIGN.md "Invokers"; issue 8 point 4.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wardian.config import data_dir
from wardian.errors import ConflictError

__all__ = [
    "DaemonAlreadyRunning",
    "DaemonStatus",
    "acquire_daemon_lock",
    "daemon_status",
]

# --- lock and status --------------------------------------------------------------------


def _holder_file() -> Path:
    return data_dir() / "locks" / "serve.json"


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


def _alive(pid: int) -> bool:
    import psutil

    return pid != os.getpid() and psutil.pid_exists(pid)


def _read_holder(wait_s: float = 0.0) -> tuple[int | None, str | None]:
    """The live holder's (pid, since) from ``serve.json``; waits up to `wait_s` for it to
    appear (the holder writes it right after taking the lock). A stale file left by a
    killed daemon names a dead pid and is ignored."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            info = json.loads(_holder_file().read_text())
            pid = int(info["pid"])
            if _alive(pid):
                return pid, str(info["since"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if time.monotonic() >= deadline:
            return None, None
        time.sleep(0.02)


def _lock_file_pid() -> int | None:
    from wardian.runtime.session_events import daemon_lock

    try:
        text = daemon_lock().path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and _alive(int(text)) else None


def acquire_daemon_lock(wait_s: float = 1.0) -> Any:
    """Take the daemon lock for this process's lifetime; returns the held `FileLock`.

    A failed attempt is retried until a live ``wardian serve`` has described itself in
    ``serve.json`` or `wait_s` has passed (the holder writes it right after taking the lock;
    probes by event writers no longer take it, `wardian._lock`).

    Raises:
        DaemonAlreadyRunning: another ``wardian serve`` holds it (names its pid and since).
    """
    from wardian.runtime.session_events import daemon_lock

    lock = daemon_lock()
    deadline = time.monotonic() + wait_s
    while True:
        if lock.acquire():
            return lock
        pid, since = _read_holder()
        if pid is not None:
            raise DaemonAlreadyRunning(DaemonStatus(True, pid, since))
        if time.monotonic() >= deadline:
            raise DaemonAlreadyRunning(DaemonStatus(True, _lock_file_pid(), None))
        time.sleep(0.02)


def daemon_status() -> DaemonStatus:
    """Whether a ``wardian serve`` holds the daemon lock now (read-only; never blocks long)."""
    from wardian.runtime.session_events import daemon_lock

    if not daemon_lock().held_elsewhere():
        return DaemonStatus(running=False)
    pid, since = _read_holder(wait_s=1.0)
    if pid is None and not daemon_lock().held_elsewhere():
        return DaemonStatus(running=False)  # it was a writer probing the lock
    return DaemonStatus(running=True, pid=pid or _lock_file_pid(), since=since)
