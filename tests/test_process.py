"""Process identity at the bottom (`wardian._process`): pid + start time, one tolerance,
told apart from a dead owner and from a recycled pid with real child processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wardian._process import (
    START_TIME_TOLERANCE_S,
    ProcessIdentity,
    ancestors,
    current,
    identity_of,
    is_alive,
)


def test_current_process_is_alive_and_stable() -> None:
    me = current()
    assert me.pid == os.getpid()
    assert is_alive(me.pid, me.started_at)
    assert identity_of(me.pid) is not None
    assert identity_of(me.pid).matches(me)  # type: ignore[union-attr]


def test_another_start_time_is_another_process() -> None:
    me = current()
    assert not is_alive(me.pid, me.started_at - 3600)
    assert not ProcessIdentity(me.pid, me.started_at + 5).matches(me)


def test_ended_process_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    found = identity_of(child.pid)
    assert found is not None and is_alive(found.pid, found.started_at)
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=60)
    assert not is_alive(found.pid, found.started_at)


def _sleeper() -> subprocess.Popen[bytes]:
    """A live child that runs until its stdin closes."""
    return subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)


def _end(child: subprocess.Popen[bytes]) -> None:
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=60)


def test_live_dead_and_recycled_owners_are_told_apart() -> None:
    child = _sleeper()
    try:
        owner = identity_of(child.pid)
        assert owner is not None and owner.pid == child.pid
        assert is_alive(owner.pid, owner.started_at)  # live owner
        # A recycled pid: a record with the right pid but another process's start time.
        assert not is_alive(child.pid, owner.started_at - 10 * START_TIME_TOLERANCE_S)
        assert not is_alive(child.pid, owner.started_at + 10 * START_TIME_TOLERANCE_S)
        # Two readings of one process differ by less than the one tolerance.
        assert is_alive(child.pid, owner.started_at + START_TIME_TOLERANCE_S / 2)
    finally:
        _end(child)
    assert not is_alive(owner.pid, owner.started_at)  # dead owner
    assert not is_alive(None, owner.started_at) and not is_alive(owner.pid, None)


def test_the_start_time_is_the_kernels_not_a_guess() -> None:
    # The recorded start time is the child's own, from the kernel: it lies between the
    # moments just before and just after the child was started (wall clock, whole-second
    # boot time granularity allowed), and it is the same on every reading.
    import time

    before = time.time()
    child = _sleeper()
    try:
        after = time.time()
        first, second = identity_of(child.pid), identity_of(child.pid)
        assert first is not None and second is not None and first == second
        assert before - START_TIME_TOLERANCE_S <= first.started_at <= after + START_TIME_TOLERANCE_S
        assert not first.matches(current())
    finally:
        _end(child)


def test_the_sql_tolerance_is_the_same_one() -> None:
    # Capabilities are matched in SQL (`abs(process_started_at - ?) <= ?`) with the very
    # constant `ProcessIdentity.matches` uses: a start time inside it matches both ways,
    # one outside matches neither.
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    me = current()
    store = MemoryStore(open_memory_db())
    caps = CapabilityStore(store.conn)
    caps.mint("agent-1", pid=me.pid, started_at=me.started_at, workspace="/w")
    for offset, same in ((START_TIME_TOLERANCE_S / 2, True),
                         (START_TIME_TOLERANCE_S * 1.5, False)):
        other = ProcessIdentity(me.pid, me.started_at + offset)
        assert other.matches(me) is same
        found = caps.unrevoked_for_processes([(other.pid, other.started_at)])
        assert bool(found) is same, offset


def test_ancestors_include_the_parent() -> None:
    parents = [p.pid for p in ancestors()]
    assert parents and parents[0] == os.getppid()


def test_ancestors_read_from_proc_match_psutil() -> None:
    # On Linux the walk reads /proc itself; the identities must be psutil's exactly, or a
    # recorded launch (stored with psutil's start time) would stop being recognised.
    import psutil

    expected = [(p.pid, p.create_time()) for p in psutil.Process().parents()]
    found = [(p.pid, p.started_at) for p in ancestors()]
    assert [pid for pid, _ in found] == [pid for pid, _ in expected]
    assert all(abs(a - b) < 0.01 for (_, a), (_, b) in zip(found, expected, strict=True))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_hook_ancestry_check_needs_neither_psutil_nor_a_migration(wardian_home: Path) -> None:
    # The check runs in every provider hook (and operator command): importing psutil and
    # opening memory.db through MemoryStore (which migrates) cost it ~24 ms of ~60.
    from wardian.config import memory_db_path
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    MemoryStore(open_memory_db())
    db = memory_db_path()
    os.chmod(db, 0o444)  # read-only opening must be enough
    try:
        proc = subprocess.run(
            [sys.executable, "-P", "-c",
             "import sys; from wardian.runtime.hooks import managed_agent_id; "
             "print(managed_agent_id(), 'psutil' in sys.modules, "
             "'wardian.memory.store' in sys.modules)"],
            env={**os.environ, "WARDIAN_HOME": str(wardian_home)}, capture_output=True,
            text=True, timeout=60)
    finally:
        os.chmod(db, 0o644)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "False", "False"]


def test_identity_matches_psutil_and_a_zombie_counts_as_gone() -> None:
    # identity_of reads /proc on Linux (no psutil import in a hook); the start time must
    # be psutil's, and an exited child not yet reaped must count as gone.
    import psutil

    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    found = identity_of(child.pid)
    assert found is not None
    assert abs(found.started_at - psutil.Process(child.pid).create_time()) < 0.01
    assert child.stdin is not None
    child.stdin.close()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, still a zombie
    assert psutil.Process(child.pid).status() == psutil.STATUS_ZOMBIE
    assert identity_of(child.pid) is None
    child.wait(timeout=60)
    assert identity_of(child.pid) is None


def test_ending_descendants_with_none_left_needs_no_psutil() -> None:
    code = ("import sys; from wardian._process import end_descendants; "
            "print(end_descendants(0.0), 'psutil' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out == ["0", "False" if sys.platform.startswith("linux") else "True"]


@pytest.mark.parametrize("ends", [False, True])
def test_kept_workers_warn_at_exit_unless_ended(ends: bool) -> None:
    # The cause of pytest-xdist's "ResourceWarning: subprocess N is still running" at
    # worker exit: a detached worker's Popen held by `keep` until the interpreter ends.
    code = (
        "import subprocess, sys\n"
        "from wardian._process import end_kept, keep\n"
        "slow = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "keep(slow)\n"
        "print(slow.pid, flush=True)\n"
        + ("print(end_kept(timeout_s=0) == [slow.pid], slow.returncode is not None)\n"
           if ends else "")
    )
    done = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True,
                          text=True, timeout=120, check=True)
    pid = int(done.stdout.split()[0])
    if not ends:
        os.kill(pid, 9)  # what the test left behind
        assert f"ResourceWarning: subprocess {pid} is still running" in done.stderr
        return
    assert done.stdout.split()[1:] == ["True", "True"]
    assert "ResourceWarning" not in done.stderr, done.stderr
    assert identity_of(pid) is None


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
@pytest.mark.parametrize("grace_s", [0.0, 2.0])
def test_end_tree_ends_a_descendant_in_another_group_and_an_orphan_left_in_the_group(
        tmp_path: Path, grace_s: float) -> None:
    import psutil

    from tests.waits import wait_until
    from wardian._process import end_tree

    pids = tmp_path / "pids"
    # The root leads its group; `moved` is its child in a session of its own; `orphan` is
    # in the root's group, but its parent (a double fork) has exited.
    (tmp_path / "sleep.py").write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    (tmp_path / "middle.py").write_text(
        "import subprocess, sys\n"
        "print(subprocess.Popen([sys.executable, sys.argv[1]],"
        " stdout=subprocess.DEVNULL).pid)\n", encoding="utf-8")
    (tmp_path / "root.py").write_text(
        "import pathlib, subprocess, sys, time\n"
        "here = pathlib.Path(sys.argv[0]).parent\n"
        "sleep = str(here / 'sleep.py')\n"
        "moved = subprocess.Popen([sys.executable, sleep], start_new_session=True)\n"
        "middle = subprocess.run([sys.executable, str(here / 'middle.py'), sleep],"
        " stdout=subprocess.PIPE, text=True, check=True)\n"
        "(here / 'pids').write_text(f'{moved.pid} {int(middle.stdout)}')\n"
        "time.sleep(600)\n", encoding="utf-8")
    code = str(tmp_path / "root.py")
    root = subprocess.Popen([sys.executable, code], start_new_session=True)
    try:
        text = wait_until(lambda: pids.read_text() if pids.exists() else "",
                          what="the tree started", watch=[root])
        moved, orphan = (int(p) for p in text.split())
        assert orphan not in {c.pid for c in psutil.Process(root.pid).children(recursive=True)}
        signalled = end_tree(root.pid, grace_s=grace_s)
        assert {root.pid, moved, orphan} <= set(signalled)
        root.wait(timeout=30)

        def gone(pid: int) -> bool:
            try:
                return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return True

        wait_until(lambda: gone(moved) and gone(orphan), what="the whole tree ended")
    finally:
        if root.poll() is None:
            root.kill()
            root.wait()
