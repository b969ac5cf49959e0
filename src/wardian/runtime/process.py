"""Portable process identity: a pid plus the process's start time, read with psutil.

A pid alone is not an identity: the operating system reuses pids. A pid together
with its creation time (``psutil.Process.create_time()``, seconds since the epoch)
names one process on Linux, macOS and Windows alike, so a capability bound to it
dies with that process, also after a crash (DESIGN.md "Identity and authority";
issue 2 point 6).

This is the one module that knows how to read process identities; everything else
asks here. psutil is imported only when needed: on Linux `ancestors` reads
``/proc/<pid>/stat`` itself (the same numbers psutil reads), so a provider hook's ancestry
check does not pay psutil's import.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass

__all__ = [
    "START_TIME_TOLERANCE_S",
    "ProcessIdentity",
    "ancestors",
    "ancestry_to",
    "become_subreaper",
    "current",
    "die_with_parent",
    "end_descendants",
    "identity_of",
    "is_alive",
    "lineage",
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

    A zombie (exited, not yet reaped) counts as gone. On Linux read from ``/proc`` (as
    `lineage` does; psutil's import alone costs a hook ~20 ms), else with psutil.
    """
    if sys.platform.startswith("linux"):
        found = _proc_identity(pid)
        if not isinstance(found, bool):
            return found
    import psutil

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
    """The identities of the parent, grandparent, … of `pid` (default: this process).

    On Linux read from ``/proc`` directly (`_proc_ancestors`); elsewhere, or when ``/proc``
    cannot be read, with psutil. Both give the same start times (psutil computes them from
    ``/proc`` the same way).
    """
    if sys.platform.startswith("linux"):
        found = _proc_ancestors(pid if pid is not None else os.getpid())
        if found is not None:
            yield from found
            return
    import psutil

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


def lineage() -> list[ProcessIdentity]:
    """This process's own identity followed by its ancestors' (nearest first).

    The caller's real ancestry, read from the kernel (``/proc`` on Linux, psutil elsewhere),
    never from its environment: what a capability check compares the holder against.
    """
    if sys.platform.startswith("linux"):
        boot = _boot_time_s()
        own = _proc_stat(os.getpid())
        found = _proc_ancestors(os.getpid())
        if boot is not None and own is not None and found is not None:
            try:
                ticks = os.sysconf("SC_CLK_TCK")
            except (ValueError, OSError):
                ticks = 0
            if ticks:
                return [ProcessIdentity(os.getpid(), boot + own[1] / ticks), *found]
    return [current(), *ancestors()]


PR_SET_CHILD_SUBREAPER = 36
"""``prctl`` option of Linux >= 3.4 (``<linux/prctl.h>``)."""


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER, 1)``).

    An orphaned descendant (its parent exited: ``setsid -f``, a double fork, a daemon) is
    then re-parented to this process instead of to pid 1, so it stays inside this
    process's tree and the ancestry checks still see the launch above it.

    Returns:
        True when set; False where the platform has no such call (macOS, Windows, a
        kernel or sandbox refusing it) — there, a detached descendant leaves the tree
        (docs/threat-model.md says so).
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


PR_SET_PDEATHSIG = 1
"""``prctl`` option of Linux (``<linux/prctl.h>``): a signal sent when the parent dies."""


def die_with_parent(parent_pid: int) -> bool:
    """Have the kernel SIGKILL this process when its parent (thread) ends (Linux
    ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, kept across ``execve``).

    Args:
        parent_pid: the pid the caller expects as its parent; when the parent is already
            another process (it died before the call), this process exits at once with
            code 125 rather than run unsupervised.

    Returns:
        True when set; False where the platform has no such call (elsewhere a process
        whose parent crashed keeps running until it ends on its own).
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent_pid:
        os._exit(125)
    return done


def end_descendants(
    started_after: float, *, spare: Collection[int] = (), grace_s: float = 2.0
) -> int:
    """End every process still below this one that started at or after `started_after`
    (seconds since the epoch): SIGTERM, then SIGKILL after `grace_s` seconds for those
    still running; reap the ones that are our children.

    Args:
        started_after: processes older than this were not the runtime's.
        spare: pids of children this process started itself (a detached drain worker);
            they and their descendants are left running.

    Called by a launch supervisor once its runtime has ended, so no agent process outlives
    the capability (with `become_subreaper`, detached descendants are below it too).

    Returns:
        How many processes were still running.
    """
    if not spare and _childless():
        return 0  # nothing below: a process below us would have a child of ours above it
    import psutil

    try:
        me = psutil.Process()
        below = me.children(recursive=True)
    except psutil.Error:
        return 0
    spared: set[int] = set()
    for pid in spare:
        try:
            spared.add(pid)
            spared.update(p.pid for p in psutil.Process(pid).children(recursive=True))
        except psutil.Error:
            continue
    left = []
    for proc in below:
        # Only the runtime's processes: not one this process started itself or before it.
        try:
            if (proc.pid not in spared
                    and proc.create_time() >= started_after - START_TIME_TOLERANCE_S):
                left.append(proc)
        except psutil.Error:
            continue
    for proc in left:
        try:
            proc.terminate()
        except psutil.Error:
            continue
    _gone, alive = psutil.wait_procs(left, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(alive, timeout=grace_s)
    _reap_children()
    return len(left)


def _reap_children() -> None:
    """Collect exit statuses of any finished children (orphans re-parented to a subreaper
    stay zombies until their new parent waits for them)."""
    if not hasattr(os, "waitpid") or sys.platform == "win32":
        return
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _proc_stat(pid: int) -> tuple[int, int] | None:
    """``(ppid, starttime in clock ticks since boot)`` of `pid` from ``/proc/<pid>/stat``,
    or None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return int(fields[1]), int(fields[19])  # fields 4 (ppid) and 22 (starttime)
    except (IndexError, ValueError):
        return None


def _childless() -> bool:
    """Whether this process has no child at all, from ``/proc/self/task/*/children``
    (Linux); False when that cannot be read. Lets a launch that ended cleanly skip
    psutil's import (~20 ms of `agent exec`)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        tasks = os.listdir("/proc/self/task")
        for task in tasks:
            with open(f"/proc/self/task/{task}/children", "rb") as f:
                if f.read().strip():
                    return False
    except OSError:
        return False
    return bool(tasks)


def _proc_identity(pid: int) -> ProcessIdentity | bool | None:
    """`identity_of` from ``/proc``: the identity, None when `pid` is gone or a zombie, or
    False when ``/proc`` cannot answer (the caller asks psutil)."""
    if pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except OSError:
        return False
    fields = data[data.rfind(b")") + 2:].split()
    boot = _boot_time_s()
    try:
        state, ticks = fields[0], int(fields[19])  # fields 3 (state) and 22 (starttime)
        per_second = os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError, OSError):
        return False
    if boot is None or not per_second:
        return False
    if state == b"Z":
        return None
    return ProcessIdentity(pid, boot + ticks / per_second)


def _boot_time_s() -> float | None:
    """The boot time (``btime`` of ``/proc/stat``, seconds since the epoch), or None."""
    try:
        with open("/proc/stat", "rb") as f:
            for line in f:
                if line.startswith(b"btime"):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _proc_ancestors(pid: int) -> list[ProcessIdentity] | None:
    """The ancestors of `pid` as psutil's ``Process.parents()`` gives them, read from
    ``/proc`` (``create_time = btime + starttime / CLK_TCK``, as psutil computes it); None
    when ``/proc`` cannot be used, so the caller falls back to psutil.

    Like psutil, the walk stops at pid 0 and at a "parent" started after its child (its
    pid was reused after the real parent ended).
    """
    boot = _boot_time_s()
    own = _proc_stat(pid)
    if boot is None or own is None:
        return None
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        return None
    found: list[ProcessIdentity] = []
    ppid, started = own
    seen = {pid}
    while ppid > 0 and ppid not in seen:
        parent = _proc_stat(ppid)
        if parent is None or parent[1] > started:
            break
        seen.add(ppid)
        found.append(ProcessIdentity(ppid, boot + parent[1] / ticks))
        ppid, started = parent
    return found


def ancestry_to(holder_pid: int) -> tuple[tuple[int, int], ...] | None:
    """This process's ancestors from its parent up to `holder_pid`, as ``(pid, start time in
    clock ticks)`` read from ``/proc``; None when `holder_pid` is not among them, or off
    Linux, or when ``/proc`` cannot be read.

    Two equal results name the same processes (a reused pid gets another start time), so
    when the result equals one taken while `holder_pid` was a verified ancestor, it still
    is, and alive: a long-running server (``wardian mcp``) checks this on every call
    instead of re-reading its whole lineage (issue 16). Read-only.
    """
    if not sys.platform.startswith("linux"):
        return None
    own = _proc_stat(os.getpid())
    if own is None:
        return None
    chain: list[tuple[int, int]] = []
    ppid, started = own
    while ppid > 0 and len(chain) < 1024:
        parent = _proc_stat(ppid)
        if parent is None or parent[1] > started:
            return None
        chain.append((ppid, parent[1]))
        if ppid == holder_pid:
            return tuple(chain)
        ppid, started = parent
    return None
