"""Processes we start and do not wait for (detached workers), at the bottom of the package.

A `subprocess.Popen` that is garbage-collected while its child still runs warns
(``ResourceWarning: subprocess N is still running``) and leaves the child a zombie once it
exits. A detached worker (the drain worker, a detached run) is meant to outlive the call that
started it, so `keep` holds its `Popen` for the life of this process and reaps those that
have exited on every later call: no warning, no zombie pile-up in a long-lived daemon.
"""

from __future__ import annotations

import subprocess
import threading

__all__ = ["keep", "kept_pids"]

_kept: list[subprocess.Popen[bytes]] = []
_lock = threading.Lock()


def keep(proc: subprocess.Popen[bytes]) -> int:
    """Hold `proc` (a detached child we never wait for) and reap exited ones; returns its pid."""
    with _lock:
        _kept[:] = [p for p in _kept if p.poll() is None]
        _kept.append(proc)
    return proc.pid


def kept_pids() -> set[int]:
    """Pids of the detached workers this process started that still run (a launch
    supervisor spares them when it ends what its runtime left behind)."""
    with _lock:
        _kept[:] = [p for p in _kept if p.poll() is None]
        return {p.pid for p in _kept}
