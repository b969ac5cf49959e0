"""Containment that forks cannot escape: when a launch's runtime ends, nothing it started is
left running — not a child whose SIGTERM handler starts a detached (``setsid``) grandchild,
not a process that forks and exits every few milliseconds.

Real supervisors (`wardian agent exec`, and a bare child subreaper calling
`end_descendants`, the path without cgroup v2), real escaping children. Each escaper writes
the pid of every process it becomes into a file before it goes on; the test waits for that
and then checks that none of them still runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import invoke
from tests.waits import wait_until
from typer.testing import CliRunner

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="child subreaper and /proc are Linux features")

ESCAPER = r"""
import os, signal, sys, time
kind, pidfile = sys.argv[1], sys.argv[2]

def note(pid):
    with open(pidfile, "a") as f:
        f.write(f"{pid}\n")

def detach_output():
    # Hold no pipe of the supervisor's caller open: only the process itself is at stake.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)

if kind == "term-fork":
    # A process that, asked to end, starts a detached grandchild first.
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        os.close(ready_r)
        def on_term(signum, frame):
            done_r, done_w = os.pipe()
            if os.fork() == 0:
                os.setsid()
                detach_output()
                note(os.getpid())
                os.write(done_w, b"x")
                while True:
                    time.sleep(1000)
            os.read(done_r, 1)
            os._exit(0)
        signal.signal(signal.SIGTERM, on_term)
        detach_output()
        note(os.getpid())
        os.write(ready_w, b"x")
        while True:
            time.sleep(1000)
    os.close(ready_w)
    os.read(ready_r, 1)
elif kind == "fork-loop":
    # A process that ignores SIGTERM and forks and exits every few milliseconds, forever.
    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        os.close(ready_r)
        detach_output()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        first = True
        while True:
            note(os.getpid())
            if first:
                os.write(ready_w, b"x")
                first = False
            time.sleep(0.002)
            if os.fork() != 0:
                os._exit(0)
    os.close(ready_w)
    os.read(ready_r, 1)
sys.exit(0)  # the runtime ends; what it started must not outlive it
"""

SUBREAPER = r"""
import subprocess, sys, time
from wardian._process import become_subreaper, end_descendants
assert become_subreaper()
started = time.time()
subprocess.run([sys.executable, *sys.argv[1:]], check=True)
print(end_descendants(started, grace_s=0.5), flush=True)
"""


@pytest.fixture
def escaper(tmp_path: Path) -> Path:
    path = tmp_path / "escaper.py"
    path.write_text(ESCAPER, encoding="utf-8")
    return path


@pytest.fixture
def pidfile(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pids"
    path.touch()
    yield path
    for pid in noted(path):  # whatever escaped: end it, it would run forever
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def noted(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


def still_running(pids: list[int]) -> list[int]:
    from wardian._process import identity_of

    return [pid for pid in pids if identity_of(pid) is not None]


def run_to_end(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a supervisor in a session of its own; afterwards end that whole session (an
    escaper that kept it) so a failing test leaves nothing behind."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def expect_none_left(pidfile: Path, kind: str) -> None:
    pids = noted(pidfile)
    if kind == "term-fork":  # the handler's grandchild was noted before its parent ended
        assert len(pids) == 2, pids
    else:
        assert pids, "the forker never ran"
    assert still_running(pids) == [], f"{kind}: processes outlived the runtime"


@pytest.mark.parametrize("kind", ["term-fork", "fork-loop"])
def test_a_subreaper_ends_what_forks_while_it_ends_the_tree(
    kind: str, escaper: Path, pidfile: Path, tmp_path: Path
) -> None:
    script = tmp_path / "subreaper.py"
    script.write_text(SUBREAPER, encoding="utf-8")
    done = run_to_end([sys.executable, str(script), str(escaper), kind, str(pidfile)])
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 1
    expect_none_left(pidfile, kind)


def _cgroup2_mount_point() -> str | None:
    from wardian._process import _cgroup2_mount

    return _cgroup2_mount()


def without_cgroups(argv: list[str]) -> list[str]:
    """`argv` run in a mount namespace of its own where the cgroup v2 hierarchy is
    read-only — as in a container that mounts ``/sys/fs/cgroup`` read-only — so a launch
    cannot make its cgroup and falls back to the subreaper alone. Needs root (CI runs as
    root); elsewhere the test is skipped, and under ``CI=true`` it fails instead."""
    mount = _cgroup2_mount_point()
    if os.geteuid() != 0 or mount is None or not _have("unshare"):
        if os.environ.get("CI") == "true":
            pytest.fail("the no-cgroup containment tests need root, unshare and cgroup v2")
        pytest.skip("needs root, unshare(1) and a cgroup v2 mount")
    return ["unshare", "-m", "--propagation", "private", "sh", "-c",
            f'mount -o remount,bind,ro "{mount}" && exec "$@"', "sh", *argv]


def _have(program: str) -> bool:
    import shutil

    return shutil.which(program) is not None


@pytest.mark.parametrize("cgroups", ["as the machine has them", "read-only"])
@pytest.mark.parametrize("kind", ["term-fork", "fork-loop"])
def test_agent_exec_leaves_nothing_running(
    kind: str, cgroups: str, escaper: Path, pidfile: Path, cli: CliRunner
) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    argv = [sys.executable, "-m", "wardian", "agent", "exec", "ada", "--",
            sys.executable, str(escaper), kind, str(pidfile)]
    done = run_to_end(without_cgroups(argv) if cgroups == "read-only" else argv)
    assert done.returncode == 0, done.stderr
    expect_none_left(pidfile, kind)


def _launch_cgroups_work() -> bool:
    from wardian._process import LaunchCgroup

    probe = LaunchCgroup.create(f"probe-{os.getpid()}")
    if probe is None:
        return False
    probe.end()
    return True


cgroup_v2 = pytest.mark.skipif(not sys.platform.startswith("linux")
                               or not _launch_cgroups_work(),
                               reason="needs a cgroup v2 this user may create cgroups in")

IN_CGROUP = r"""
import os, sys
with open("/proc/self/cgroup") as f:
    line = next(l for l in f if l.startswith("0::"))
print(os.environ["WARDIAN_LAUNCH_ID"], line[3:].strip(), flush=True)
"""

KILLS_ITS_SUPERVISOR = r"""
import json, os, select, signal, subprocess, sys
result = sys.argv[1]
supervisor = os.getppid()
watch = os.pidfd_open(supervisor)  # readable once the supervisor has ended
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # the survivor: detached, outputs closed
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        select.select([watch], [], [])
        env = {"WARDIAN_HOME": os.environ["WARDIAN_HOME"], "PATH": os.environ["PATH"]}
        done = subprocess.run([sys.executable, "-m", "wardian", "settings", "set",
                               "agent_memory.enabled", "false"], env=env,
                              capture_output=True, text=True)
        with open("/proc/self/cgroup") as f:
            cgroup = next(l for l in f if l.startswith("0::"))[3:].strip()
        with open(result + ".tmp", "w") as f:
            json.dump({"rc": done.returncode, "err": done.stderr, "ppid": os.getppid(),
                       "cgroup": cgroup}, f)
        os.rename(result + ".tmp", result)
        os._exit(0)
    os._exit(0)
os.wait()
os.kill(supervisor, signal.SIGKILL)
"""


@cgroup_v2
def test_a_launch_runs_in_a_cgroup_of_its_own_that_ends_with_it(
    tmp_path: Path, cli: CliRunner
) -> None:
    from wardian._process import _cgroup2_mount

    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    script = tmp_path / "in_cgroup.py"
    script.write_text(IN_CGROUP, encoding="utf-8")
    done = run_to_end([sys.executable, "-m", "wardian", "agent", "exec", "ada", "--",
                       sys.executable, str(script)])
    assert done.returncode == 0, done.stderr
    launch_id, cgroup = done.stdout.split()
    assert cgroup.endswith(f"/wardian-launch-{launch_id}"), cgroup
    mount = _cgroup2_mount()
    assert mount is not None
    assert not Path(mount, cgroup.lstrip("/")).exists()  # removed once the launch ended


@cgroup_v2
def test_survivors_of_a_supervisor_killed_by_its_agent_stay_refused(
    tmp_path: Path, cli: CliRunner, wardian_home: Path
) -> None:
    import json

    from wardian._process import LaunchCgroup, _cgroup2_mount

    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    script = tmp_path / "kills.py"
    script.write_text(KILLS_ITS_SUPERVISOR, encoding="utf-8")
    result = tmp_path / "result.json"
    done = run_to_end([sys.executable, "-m", "wardian", "agent", "exec", "ada", "--",
                       sys.executable, str(script), str(result)])
    assert done.returncode == -signal.SIGKILL, done.stderr
    wait_until(result.exists, what="the survivor's operator command")
    answer = json.loads(result.read_text())
    try:
        assert answer["rc"] == 3, answer
        assert "operator command refused inside a managed process (it runs in the cgroup " \
            "of launch" in answer["err"], answer
        assert "wardian-launch-" in answer["cgroup"]
    finally:
        mount = _cgroup2_mount()
        assert mount is not None
        home = str(Path(mount, answer["cgroup"].lstrip("/")).parent)
        LaunchCgroup(str(Path(mount, answer["cgroup"].lstrip("/"))), home).end()
    assert invoke(cli, "settings", "get", "agent_memory.enabled").stdout.strip() == "true"


SURVIVOR_SAVES = r"""
import json, os, select, signal, subprocess, sys
result = sys.argv[1]
supervisor = os.getppid()
watch = os.pidfd_open(supervisor)  # readable once the supervisor has ended
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # the survivor: detached, outputs closed, the launch's environment kept
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        select.select([watch], [], [])
        done = subprocess.run([sys.executable, "-m", "wardian", "memory", "save",
                               "--evidence", "the user said so",
                               "--", "Deploys go out on Tuesdays"],
                              capture_output=True, text=True)
        with open("/proc/self/cgroup") as f:
            cgroup = next(l for l in f if l.startswith("0::"))[3:].strip()
        with open(result + ".tmp", "w") as f:
            json.dump({"rc": done.returncode, "err": done.stderr, "cgroup": cgroup,
                       "capability": bool(os.environ.get("WARDIAN_CAPABILITY"))}, f)
        os.rename(result + ".tmp", result)
        os._exit(0)
    os._exit(0)
os.wait()
os.kill(supervisor, signal.SIGKILL)
"""


def test_without_a_cgroup_a_supervisor_killed_by_its_agent_takes_the_capability_along(
    tmp_path: Path, cli: CliRunner, wardian_home: Path
) -> None:
    """No launch cgroup: the agent kills its own supervisor; a detached survivor that kept
    the launch's environment (token included) can no longer save — the capability was
    bound to the dead supervisor's pid + start time, which no process can take over."""
    import json

    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    script = tmp_path / "kills.py"
    script.write_text(SURVIVOR_SAVES, encoding="utf-8")
    result = tmp_path / "result.json"
    done = run_to_end(without_cgroups([sys.executable, "-m", "wardian", "agent", "exec",
                                       "ada", "--", sys.executable, str(script),
                                       str(result)]))
    assert done.returncode == -signal.SIGKILL, done.stderr
    wait_until(result.exists, what="the survivor's memory save")
    answer = json.loads(result.read_text())
    assert "wardian-launch-" not in answer["cgroup"], answer  # really without a cgroup
    assert answer["capability"], answer
    assert answer["rc"] == 3, answer
    assert "memory capability expired: its runtime" in answer["err"], answer
    listed = invoke(cli, "garden", "memory", "list", "--agent", "ada", "--json")
    assert listed.exit_code == 0, listed.output
    assert "Deploys go out on Tuesdays" not in listed.stdout
