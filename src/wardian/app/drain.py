"""The drain worker's entry point: the detached process a session-event writer starts
(``python -m wardian session _drain``; `wardian.runtime.session_events.drain_command`).

It starts the runs that pending session-close events call for (`wardian.invokers.drain`)
and exits.
Imported by `wardian.__main__` before any CLI code: keep this module's own imports none.
"""

from __future__ import annotations

__all__ = ["drain_worker"]


def drain_worker() -> int:
    """Drain the pending session events once, as the detached worker; returns the exit code
    (always 0: every failure is recorded on the event or run it concerns, and its message
    goes to stderr, the worker's log file)."""
    from wardian.invokers.drain import worker_main

    return worker_main()
