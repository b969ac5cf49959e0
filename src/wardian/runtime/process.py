"""Portable process identity: a pid plus the process's start time, read with psutil.

A pid alone is not an identity: the operating system reuses pids. A pid together
with its creation time (``psutil.Process.create_time()``, seconds since the epoch)
names one process on Linux, macOS and Windows alike, so a capability bound to it
dies with that process, also after a crash (DESIGN.md "Identity and authority";
issue 2 point 6).

This is the one module that knows how to read process identities; everything else
asks here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import psutil

__all__ = [
    "START_TIME_TOLERANCE_S",
    "ProcessIdentity",
    "ancestors",
    "current",
    "identity_of",
    "is_alive",
]

START_TIME_TOLERANCE_S = 1.0
"""How far two readings of one process's start time may differ, in seconds.

psutil derives the start time from the boot time (whole seconds, recomputed by the
kernel when the wall clock is stepped) plus a tick count on Linux, so two readings can
differ slightly; a reused pid would need the whole pid space to wrap around within
this window.
"""


@dataclass(frozen=True)
class ProcessIdentity:
    """One process: `pid` and `started_at` (its creation time, seconds since the epoch)."""

    pid: int
    started_at: float

    def matches(self, other: ProcessIdentity) -> bool:
        """Whether `other` is the same process (same pid, start times within tolerance)."""
        return self.pid == other.pid and (
            abs(self.started_at - other.started_at) <= START_TIME_TOLERANCE_S
        )


def identity_of(pid: int) -> ProcessIdentity | None:
    """The identity of the live process `pid`, or None when there is no such process.

    A zombie (exited, not yet reaped) counts as gone.
    """
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return ProcessIdentity(pid, proc.create_time())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        # Another user's process: it exists, but it cannot be ours to trust.
        return None


def current() -> ProcessIdentity:
    """The identity of the calling process."""
    identity = identity_of(os.getpid())
    if identity is None:  # pragma: no cover - the caller is alive by definition
        raise RuntimeError("cannot read the identity of the current process")
    return identity


def is_alive(pid: int, started_at: float) -> bool:
    """Whether the process with this pid and start time (seconds since epoch) still runs.

    False when the pid is gone, is a zombie, or now belongs to a different process
    (its start time differs by more than `START_TIME_TOLERANCE_S`).
    """
    found = identity_of(pid)
    return found is not None and found.matches(ProcessIdentity(pid, started_at))


def ancestors(pid: int | None = None) -> Iterator[ProcessIdentity]:
    """The identities of the parent, grandparent, … of `pid` (default: this process)."""
    try:
        proc = psutil.Process(pid if pid is not None else os.getpid())
        parents = proc.parents()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return
    for parent in parents:
        try:
            yield ProcessIdentity(parent.pid, parent.create_time())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
