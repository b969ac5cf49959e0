"""Process identity and the processes we start without waiting for, at the bottom of the
package: the one place that reads process identities (DESIGN.md "Identity and authority":
one process-identity/lock module at the bottom).

Identity
    A pid alone is not an identity: the operating system reuses pids. A pid together with
    its start time (seconds since the epoch, what ``psutil.Process.create_time()`` gives)
    names one process on Linux, macOS and Windows alike, also across reboots (a process of
    an earlier boot started at an earlier wall-clock time). A capability bound to it dies
    with that process, also after a crash; a lock holder record or a run owner naming a dead
    process, or a pid since given to another process (a *recycled* pid: same pid, another
    start time), is recognised as stale. Two readings of one process's start time are
    equal within `START_TIME_TOLERANCE_S`, the one tolerance every comparison uses (Python
    via `ProcessIdentity.matches` / `is_alive`, SQL via the constant).

    On Linux identities are read from ``/proc`` (the numbers psutil reads, computed the way
    psutil computes them), so a provider hook's ancestry check does not pay psutil's import;
    elsewhere, or when ``/proc`` cannot answer, with psutil.

Namespaces
    A pid names a process only within one pid namespace, and ``/proc`` shows the pids of
    the namespace it was mounted in. A process in a child pid namespace that still sees its
    parent's ``/proc`` (``unshare --pid --fork`` without ``--mount-proc``) is pid 1 to
    itself while ``/proc/1`` is the host's init: every identity read there would name
    another process. So on Linux every reading first checks that ``/proc/self`` is this
    process's own pid; when it is not, `IdentityUnavailable` (exit 3) is raised and no
    other source (psutil reads the same ``/proc``) is asked. `namespaces` gives the pid
    and user namespace of this process (the inode numbers of ``/proc/self/ns/pid`` and
    ``/proc/self/ns/user``); what is bound to a process identity compares them with the
    data directory owner's (`wardian.config.namespace_mismatch`).

Detached workers
    A `subprocess.Popen` that is garbage-collected while its child still runs warns
    (``ResourceWarning: subprocess N is still running``) and leaves the child a zombie once
    it exits. A detached worker (the drain worker, a detached run) is meant to outlive the
    call that started it, so `keep` holds its `Popen` for the life of this process and reaps
    those that have exited on every later call: no warning, no zombie pile-up in a
    long-lived daemon. A process that must not leave its workers running past its own end
    (a test session) calls `end_kept`: the `Popen` objects still held at interpreter exit
    are what warns otherwise.

Process-tree control
    Becoming a child subreaper, dying with the parent (``PR_SET_PDEATHSIG``) and ending what
    a process left below it: used by a managed launch's supervisor
    (`wardian.runtime.launch`), an agent step's holder (`wardian.runtime.step_launch`) and
    the supervisor every provider CLI runs under (`wardian.providers.supervisor`), so they
    sit here, below all three. Linux has the calls; elsewhere they report False and the
    callers fall back to what the platform can do (docs/threat-model.md). `end_tree` is
    the one function that ends a process tree from outside it (a provider call on timeout
    or cancel, a detached worker that outlasts its starter). Those three programs start
    as one launcher (`launcher_argv`, `wardian.runtime.launcher`).

Launch cgroups
    On Linux with cgroup v2, a launch's runtime runs in a cgroup of its own,
    ``wardian-launch-<launch id>`` below the supervisor's cgroup (`LaunchCgroup`): every
    process it starts is in it whatever it forks or detaches, it is ended at once with
    ``cgroup.kill``, and a process in it — also after its supervisor was killed — is
    recognised as the launch's (`launch_cgroup_of_self`). Where the cgroup cannot be
    created (no cgroup v2, no ``cgroup.kill``, a cgroup the user may not write), the
    launch runs without one and `end_descendants` is what ends its tree.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from wardian.errors import IdentityUnavailable

if TYPE_CHECKING:  # annotations only: memory save/recall never start a process
    import subprocess

__all__ = [
    "LAUNCH_CGROUP_PREFIX",
    "START_TIME_TOLERANCE_S",
    "LaunchCgroup",
    "Namespaces",
    "ProcessIdentity",
    "ancestors",
    "ancestry_to",
    "become_subreaper",
    "boot_time",
    "current",
    "die_with_parent",
    "end_descendants",
    "end_kept",
    "end_tree",
    "identity_of",
    "is_alive",
    "keep",
    "kept_pids",
    "launch_cgroup_of_self",
    "launcher_argv",
    "lineage",
    "namespaces",
    "open_files",
]

START_TIME_TOLERANCE_S = 1.0
"""How far two readings of one process's start time may differ, in seconds: the one
tolerance for telling a live owner from a recycled pid.

On Linux the start time is the boot time (``btime``, whole seconds, recomputed by the kernel
when the wall clock is stepped) plus a tick count, so two readings of one process can differ
by up to about a second; psutil computes it the same way. A recycled pid would need the whole
pid space to wrap around within this window to be mistaken for its predecessor.
"""


class ProcessIdentity(NamedTuple):
    """One process: `pid` and `started_at` (its creation time, seconds since the epoch)."""

    pid: int
    started_at: float

    def matches(self, other: ProcessIdentity) -> bool:
        """Whether `other` is the same process (same pid, start times within tolerance)."""
        return self.pid == other.pid and (
            abs(self.started_at - other.started_at) <= START_TIME_TOLERANCE_S
        )


class Namespaces(NamedTuple):
    """The pid and user namespace a process runs in (Linux): the inode numbers of its
    ``/proc/<pid>/ns/pid`` and ``/proc/<pid>/ns/user``, equal for two processes exactly when
    they share the namespace."""

    pid: int
    user: int


def namespaces() -> Namespaces | None:
    """The pid and user namespace of this process; None off Linux or when
    ``/proc/self/ns`` cannot be read. Read-only."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return Namespaces(os.stat("/proc/self/ns/pid").st_ino,
                          os.stat("/proc/self/ns/user").st_ino)
    except OSError:
        return None


_FOREIGN_PROC_HINT = ("run wardian from your own shell, in the namespace the data directory "
                      "was set up in (not under `unshare --pid`, nor in a container that "
                      "shares another namespace's /proc)")


def _check_own_proc() -> None:
    """Raise `IdentityUnavailable` unless ``/proc`` shows this process under its own pid
    (Linux): else every pid read there is another namespace's."""
    try:
        seen = os.readlink("/proc/self")
    except OSError as exc:
        raise IdentityUnavailable(
            f"process identity cannot be read: /proc/self is unreadable ({exc.strerror})",
            hint=_FOREIGN_PROC_HINT) from None
    if seen != str(os.getpid()):
        raise IdentityUnavailable(
            f"process identity cannot be read: this process is pid {os.getpid()} in its "
            f"own pid namespace, but /proc belongs to another one (it shows pid {seen[:20]})",
            hint=_FOREIGN_PROC_HINT)


def identity_of(pid: int) -> ProcessIdentity | None:
    """The identity of the live process `pid`, or None when there is no such process.

    A zombie (exited, not yet reaped) counts as gone. On Linux read from ``/proc`` (as
    `lineage` does; psutil's import is a large share of a hook's budget), else with psutil.

    Raises:
        IdentityUnavailable: (Linux) ``/proc`` is another pid namespace's.
    """
    if sys.platform.startswith("linux"):
        _check_own_proc()
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


def is_alive(pid: int | None, started_at: float | None) -> bool:
    """Whether the process with this pid and start time (seconds since epoch) still runs.

    False when the pid is gone, is a zombie, or now belongs to a different process (a
    recycled pid: its start time differs by more than `START_TIME_TOLERANCE_S`), and when
    either is None (an owner that was never recorded). Read-only.
    """
    if pid is None or started_at is None:
        return False
    found = identity_of(pid)
    return found is not None and found.matches(ProcessIdentity(pid, started_at))


def ancestors(pid: int | None = None) -> Iterator[ProcessIdentity]:
    """The identities of the parent, grandparent, … of `pid` (default: this process).

    On Linux read from ``/proc`` directly (`_proc_ancestors`); elsewhere, or when ``/proc``
    cannot be read, with psutil. Both give the same start times (psutil computes them from
    ``/proc`` the same way).

    Raises:
        IdentityUnavailable: (Linux) ``/proc`` is another pid namespace's.
    """
    if sys.platform.startswith("linux"):
        _check_own_proc()
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

    Raises:
        IdentityUnavailable: (Linux) ``/proc`` is another pid namespace's.
    """
    if sys.platform.startswith("linux"):
        _check_own_proc()
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


def boot_time() -> float | None:
    """When this machine booted, in seconds since the epoch (``btime``), or None where
    ``/proc/stat`` cannot tell: no process of this boot started before it."""
    return _boot_time_s()


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
    instead of re-reading its whole lineage. Read-only.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        _check_own_proc()
    except IdentityUnavailable:
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


# --- detached workers ------------------------------------------------------------------

_kept: list[subprocess.Popen[bytes]] = []
_lock = threading.Lock()


def keep(proc: subprocess.Popen[bytes]) -> int:
    """Hold `proc` (a detached child we never wait for) and reap exited ones; returns its pid."""
    with _lock:
        _kept[:] = [p for p in _kept if p.poll() is None]
        _kept.append(proc)
    return proc.pid


def end_kept(timeout_s: float = 30.0) -> list[int]:
    """Wait for the detached workers this process started, and end those that outlast it.

    Each still-running worker gets until `timeout_s` seconds (shared) from the call to exit;
    then it and its session (it leads one: POSIX ``start_new_session``) get SIGKILL. All
    are reaped and forgotten, so none warns at interpreter exit.

    Returns:
        The pids that had to be killed.
    """
    import subprocess
    import time

    with _lock:
        held, _kept[:] = list(_kept), []
    deadline = time.monotonic() + timeout_s
    killed = []
    for proc in held:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            continue
        except subprocess.TimeoutExpired:
            pass
        killed.append(proc.pid)
        end_tree(proc.pid, grace_s=0.0)  # its session (it leads one): what it started too
        proc.wait()
    return killed


def kept_pids() -> set[int]:
    """Pids of the detached workers this process started that still run (a launch
    supervisor spares them when it ends what its runtime left behind)."""
    with _lock:
        _kept[:] = [p for p in _kept if p.poll() is None]
        return {p.pid for p in _kept}


# --- process-tree control --------------------------------------------------------------

LAUNCH_CGROUP_PREFIX = "wardian-launch-"
"""Name of a launch's cgroup: this prefix and the launch id."""


def _cgroup2_mount() -> str | None:
    """Where the cgroup v2 hierarchy is mounted (``/proc/self/mountinfo``), or None."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                left, _sep, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return left.split(" ")[4]
    except OSError:
        return None
    return None


def _own_cgroup() -> str | None:
    """This process's cgroup v2 path (the ``0::`` line of ``/proc/self/cgroup``), or None."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        return None
    return None


def launch_cgroup_of_self() -> str | None:
    """The launch id whose cgroup this process runs in (a ``wardian-launch-<id>``
    component of its cgroup v2 path), or None: the mark of a launch's process that no
    change of environment, session or parent removes. Read-only."""
    if not sys.platform.startswith("linux"):
        return None
    own = _own_cgroup()
    if not own:
        return None
    for part in reversed(own.split("/")):
        if part.startswith(LAUNCH_CGROUP_PREFIX):
            return part[len(LAUNCH_CGROUP_PREFIX):]
    return None


class LaunchCgroup:
    """A launch's own cgroup v2 (see the module docstring, "Launch cgroups").

    `create` makes it; `spawn` starts the runtime inside it (the supervisor joins it for
    the ``fork`` only, so it stays outside); `end` kills everything in it
    (``cgroup.kill``), waits until it is empty and removes it.
    """

    def __init__(self, path: str, home: str) -> None:
        self.path = path
        self.home = home

    @classmethod
    def create(cls, launch_id: str) -> LaunchCgroup | None:
        """Make ``wardian-launch-<launch_id>`` below this process's cgroup; None where it
        cannot be made (no cgroup v2 or ``cgroup.kill``, no permission, off Linux)."""
        if not sys.platform.startswith("linux"):
            return None
        mount, own = _cgroup2_mount(), _own_cgroup()
        if mount is None or own is None:
            return None
        home = os.path.join(mount, own.lstrip("/"))
        path = os.path.join(home, LAUNCH_CGROUP_PREFIX + launch_id)
        try:
            os.mkdir(path)
        except OSError:
            return None
        if not os.path.exists(os.path.join(path, "cgroup.kill")):
            with contextlib.suppress(OSError):
                os.rmdir(path)
            return None
        return cls(path, home)

    def _move(self, where: str) -> None:
        with open(os.path.join(where, "cgroup.procs"), "w", encoding="ascii") as f:
            f.write(str(os.getpid()))

    def spawn(self, start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        """Run `start` (it forks the runtime) with this process inside the cgroup, so the
        child is born in it; this process is back in its own cgroup on return.

        Where this process cannot join the cgroup, the child is started outside it and
        the cgroup is dropped; where it cannot leave it again, the cgroup is kept as the
        launch's mark but never killed from here (`end` would end this process too).

        Raises:
            OSError: what `start` raised.
        """
        try:
            self._move(self.path)
        except OSError:
            self.end()
            return start()
        try:
            return start()
        finally:
            try:
                self._move(self.home)
            except OSError:
                self.path = ""

    def end(self) -> None:
        """Kill everything in the cgroup, wait until it is empty, remove it. Never raises:
        what cannot be done is left (a cgroup of the user's, empty or not)."""
        import time

        if not self.path:
            return
        with (contextlib.suppress(OSError),
              open(os.path.join(self.path, "cgroup.kill"), "w", encoding="ascii") as f):
            f.write("1")
        for _round in range(_END_ROUNDS):
            _reap_children()
            try:
                with open(os.path.join(self.path, "cgroup.procs"), "rb") as f:
                    if not f.read().strip():
                        break
            except OSError:
                break
            time.sleep(0.001)  # the kernel delivers SIGKILL asynchronously
        with contextlib.suppress(OSError):
            os.rmdir(self.path)


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


def die_with_parent(parent_pid: int, *, signum: int | None = None) -> bool:
    """Have the kernel signal this process when its parent (thread) ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``, kept across ``execve``).

    Args:
        parent_pid: the pid the caller was started by: its parent, or its grandparent when
            a provider supervisor (`wardian.providers.supervisor`) stands between them.
            When it is neither any more (it died before the call, so this process was
            re-parented), this process exits at once with code 125 rather than run
            unsupervised. Checked *after* the signal is set, which closes the race.
        signum: the signal sent (default SIGKILL); a supervisor asks for a signal it can
            catch, to end its tree before it exits.

    The signal fires when the *thread* that started this process ends, so the caller's
    starter must wait for it in that same thread (`run_process` does).

    Returns:
        True when set; False where the platform has no such call (elsewhere a process
        whose parent crashed keeps running until it ends on its own).
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    chosen = int(signal.SIGKILL) if signum is None else int(signum)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = int(libc.prctl(PR_SET_PDEATHSIG, chosen, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
    parent = os.getppid()
    if parent != parent_pid:
        above = _proc_stat(parent)
        if above is None or above[0] != parent_pid:
            os._exit(125)
    return done


def open_files(pid: int) -> tuple[str, ...]:
    """The regular files process `pid` and its descendants hold open (absolute paths as the
    kernel reports them, symlinks resolved; each once). What cannot be read (a process gone
    meanwhile, another user's) is left out. Read-only.

    Used to name a provider call's transcript when the call is ended before it printed its
    session id: by the engine (`wardian.providers.process`, timeout and cancel) and by the
    provider supervisor when the engine died (`wardian.providers.supervisor`).
    """
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return ()
    found: dict[str, None] = {}
    for proc in procs:
        try:
            for handle in proc.open_files():
                found[handle.path] = None
        except (psutil.Error, OSError):
            continue
    return tuple(found)


def end_tree(pid: int, *, grace_s: float = 2.0, wait_s: float = 2.0) -> list[int]:
    """End process `pid`, every process below it and (POSIX) every process left in the
    group `pid` leads; returns the pids signalled. All are collected before any is
    signalled (a dying parent orphans its children), so one that moved to another group,
    or whose parent already exited, ends too. Never raises for a process already gone.

    Args:
        grace_s: seconds between SIGTERM and SIGKILL; 0: SIGKILL at once.
        wait_s: seconds to wait, after SIGKILL, for the killed to be gone.
    """
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        procs = []
    if sys.platform != "win32":
        seen = {proc.pid for proc in procs}
        for candidate in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                if candidate.pid not in seen and os.getpgid(candidate.pid) == pid:
                    procs.append(candidate)
    _terminate_then_kill(procs, grace_s, wait_s, group=pid)
    return [proc.pid for proc in procs]


def _terminate_then_kill(procs: list[Any], grace_s: float, wait_s: float, *,
                         group: int | None = None) -> None:
    """SIGTERM `procs` (psutil processes), SIGKILL those left after `grace_s` (and the
    process `group`, POSIX: a member forked meanwhile), wait up to `wait_s` for them."""
    import psutil

    alive = procs
    if grace_s > 0:
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        _, alive = psutil.wait_procs(procs, timeout=grace_s)
    if group is not None and sys.platform != "win32":
        import signal

        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=wait_s)


LAUNCHER_MAIN = ("import sys; from wardian.runtime.launcher import main; "
                 "sys.exit(main(sys.argv[1:]))")
"""The ``-c`` program of every small program Wardian starts in a fresh interpreter."""


def launcher_argv(program: str, *args: str) -> list[str]:
    """The argv that runs launcher `program` (``supervise``, ``hold``, ``provider``) with
    `args` in a fresh interpreter: this interpreter by absolute path, ``-P`` (the
    working directory is not importable), `LAUNCHER_MAIN`."""
    return [os.path.abspath(sys.executable), "-P", "-c", LAUNCHER_MAIN, program, *args]


def end_descendants(
    started_after: float, *, spare: Collection[int] = (), grace_s: float = 2.0
) -> int:
    """End every process still below this one that started at or after `started_after`
    (seconds since the epoch): SIGTERM, and after up to `grace_s` seconds SIGKILL for
    those still running — including every process started meanwhile — and reap the ones
    that become our children.

    On Linux (``/proc/<pid>/task/<tid>/children``) the second phase stops (SIGSTOP) every
    process below, scanning again until a scan finds none still running — a stopped
    process cannot fork, so a process that forks and exits in a loop, or whose SIGTERM
    handler starts a detached grandchild, is caught — then SIGKILLs them all and reaps
    until nothing is left below (with `become_subreaper`, detached descendants are below
    this process too). Elsewhere one snapshot (psutil) is ended.

    Args:
        started_after: processes older than this were not the runtime's.
        spare: pids of children this process started itself (a detached drain worker);
            they and their descendants are left running.
        grace_s: how long the SIGTERMed processes get to exit, in seconds.

    Called by a launch supervisor once its runtime has ended, so no agent process outlives
    the capability, and by the provider supervisor.

    Returns:
        How many processes were still running at the first scan.
    """
    if not spare and _childless():
        return 0  # nothing below: a process below us would have a child of ours above it
    if sys.platform.startswith("linux") and _below(spare, started_after) is not None:
        return _end_below(started_after, set(spare), grace_s)
    return _end_snapshot(started_after, spare, grace_s)


def _below(spare: Collection[int], started_after: float) -> list[tuple[int, bool]] | None:
    """``(pid, running)`` of every process below this one (children first), except `spare`
    and their subtrees and those started before `started_after` (their subtrees are still
    walked); `running` is False for a zombie or a stopped process. None when
    ``/proc/<pid>/task/<tid>/children`` cannot be read."""
    boot = _boot_time_s()
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        return None
    if boot is None or not ticks:
        return None
    found: list[tuple[int, bool]] = []
    seen = {os.getpid()}
    todo = [os.getpid()]
    first = True
    while todo:
        pid = todo.pop()
        kids = _children_of(pid)
        if kids is None:
            if first:
                return None
            continue  # gone meanwhile
        first = False
        for kid in kids:
            if kid in seen or kid in spare:
                continue
            seen.add(kid)
            todo.append(kid)
            stat = _proc_state(kid)
            if stat is None:
                continue
            state, started = stat
            if boot + started / ticks >= started_after - START_TIME_TOLERANCE_S:
                found.append((kid, state not in (b"Z", b"T", b"t", b"X")))
    return found


def _children_of(pid: int) -> list[int] | None:
    """The child pids of every thread of `pid` (``/proc/<pid>/task/*/children``), or None
    when they cannot be read."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        kids: list[int] = []
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                kids.extend(int(k) for k in f.read().split())
    except (OSError, ValueError):
        return None
    return kids


def _proc_state(pid: int) -> tuple[bytes, int] | None:
    """``(state letter, starttime in clock ticks)`` of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


_END_ROUNDS = 100_000
"""Most scans one `end_descendants` makes per phase: a bound, never reached while stopped
processes cannot fork."""


def _end_below(started_after: float, spare: set[int], grace_s: float) -> int:
    """`end_descendants` on Linux: SIGTERM, wait, stop until nothing below runs, kill, reap."""
    import signal
    import time

    first = _below(spare, started_after) or []
    for pid, alive in first:
        if alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap_children()
        if not any(live for _pid, live in _below(spare, started_after) or []):
            break
        time.sleep(0.01)  # polling the processes' exit: they are not all our children
    for _round in range(_END_ROUNDS):  # freeze: what is stopped cannot fork
        running = [pid for pid, live in _below(spare, started_after) or [] if live]
        if not running:
            break
        for pid in running:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + max(grace_s, 1.0)
    for _round in range(_END_ROUNDS):  # then kill everything below and reap it
        left = _below(spare, started_after) or []
        if not left or time.monotonic() > deadline:
            break  # (past the deadline only zombies of processes spared are left)
        for pid, _live in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap_children()
        if _below(spare, started_after):
            time.sleep(0.001)  # the kernel delivers SIGKILL asynchronously
    _reap_children()
    return len(first)


def _end_snapshot(started_after: float, spare: Collection[int], grace_s: float) -> int:
    """`end_descendants` from one psutil snapshot (where ``/proc`` has no children
    lists): SIGTERM, SIGKILL after `grace_s`, reap."""
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
    _terminate_then_kill(left, grace_s, grace_s)
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
    psutil's import in `agent exec`."""
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
