"""``wardian serve``: the long-running daemon that fires schedule invokers and drains
session-close events (CLI.md "serve"; DESIGN.md "Invokers").

Only one daemon runs per data directory (`DaemonStatus` names the holder); the daemon
itself is `wardian.invokers.daemon.ScheduleDaemon`.
"""

from __future__ import annotations

from dataclasses import dataclass

from wardian.invokers.daemon import DaemonStatus

__all__ = ["DaemonStatus", "Served", "daemon_status", "serve"]


@dataclass(frozen=True)
class Served:
    """How a daemon ended: its exit code (0 after SIGTERM/SIGINT) and how many runs still
    execute in this process (runs that ignored their cancel: their worker threads would
    keep the process alive, so the caller should leave with ``os._exit``)."""

    code: int
    runs_left: int


def daemon_status() -> DaemonStatus:
    """Whether a daemon holds this data directory's lock, with its pid and start (UTC ISO)
    when known; on PostgreSQL the active serve across machines, its standbys and which is
    this data directory's (`DaemonStatus`). Read-only: the locks are probed, not taken.

    Raises:
        StoreError (exit 1): the PostgreSQL server cannot be reached.
    """
    from wardian.invokers.daemon import daemon_status as status

    return status()


def serve(*, poll_s: float = 0.1, shutdown_timeout_s: float = 30.0) -> Served:
    """Run the daemon in this process until SIGTERM or SIGINT.

    Args:
        poll_s: longest wait between loop passes, seconds (0.01 to 2).
        shutdown_timeout_s: on a signal, seconds running runs get to finish before they
            are asked to cancel.

    Raises:
        DaemonAlreadyRunning (exit 4): another daemon holds the lock (named).
        UsageError (exit 2): `poll_s` out of range.
    """
    from wardian.invokers.daemon import ScheduleDaemon

    daemon = ScheduleDaemon(poll_s=poll_s, shutdown_timeout_s=shutdown_timeout_s)
    code = daemon.serve()
    return Served(code, daemon.runs_left())
