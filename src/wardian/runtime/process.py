"""Process-tree control for a managed runtime: become its subreaper, die with the parent,
and end what the runtime left behind.

Process *identities* (pid + start time, the one tolerance, ancestry) are read by
`wardian._process` at the bottom of the package; this module uses them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection

from wardian._process import START_TIME_TOLERANCE_S

__all__ = [
    "become_subreaper",
    "die_with_parent",
    "end_descendants",
]


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
