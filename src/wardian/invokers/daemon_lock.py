"""The ``wardian serve`` lock holder description, ``serve --status``, and the daemon's clock.

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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from wardian._util import utc_now
from wardian.config import data_dir
from wardian.errors import ConflictError

__all__ = [
    "CLOCK_FILE_ENV",
    "DaemonAlreadyRunning",
    "DaemonStatus",
    "daemon_status",
    "make_clock",
]

CLOCK_FILE_ENV = "WARDIAN_TEST_CLOCK_FILE"
"""Test-only: a file holding a clock offset in seconds added to the real UTC time."""

def make_clock() -> Callable[[], datetime]:
    """The daemon's clock: real UTC, plus the offset in `CLOCK_FILE_ENV`'s file when set."""
    path = os.environ.get(CLOCK_FILE_ENV)
    if not path:
        return utc_now
    cache: dict[str, Any] = {"mtime": None, "offset": 0.0}

    def now() -> datetime:
        try:
            mtime = os.stat(path).st_mtime_ns
            if mtime != cache["mtime"]:
                cache["offset"] = float(Path(path).read_text().strip() or 0)
                cache["mtime"] = mtime
        except (OSError, ValueError):
            pass
        return utc_now() + timedelta(seconds=cache["offset"])

    return now


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

    def __init__(self, status: DaemonStatus) -> None:
        self.status = status
        who = f"pid {status.pid}" if status.pid else "another process"
        since = f", running since {status.since}" if status.since else ""
        super().__init__(
            f"wardian serve is already running ({who}{since}); only one daemon may run",
            hint="stop it first, or check it with `wardian serve --status`",
        )


def _read_holder(wait_s: float = 0.0) -> tuple[int | None, str | None]:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            info = json.loads(_holder_file().read_text())
            return int(info["pid"]), str(info["since"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)  # the holder writes this file right after taking the lock
    try:
        from wardian.runtime.session_events import daemon_lock

        text = daemon_lock().path.read_text().strip()
        return (int(text) if text.isdigit() else None), None
    except OSError:
        return None, None


def daemon_status() -> DaemonStatus:
    """Whether a ``wardian serve`` holds the daemon lock now (read-only; never blocks)."""
    from wardian.runtime.session_events import daemon_lock

    if not daemon_lock().held_elsewhere():
        return DaemonStatus(running=False)
    pid, since = _read_holder()
    return DaemonStatus(running=True, pid=pid, since=since)


