"""Operator commands refuse a caller that runs in a live launch's cgroup even when nothing
else marks it: no managed variable in its environment, its own session, and a parent chain
that does not reach the launch's supervisor.

A process of the launch cannot leave the supervisor's tree by forking: the supervisor is
a child subreaper, so a double-forked, ``setsid`` grandchild is adopted by it, and both the
ancestry check and the cgroup refuse it (the first test shows that). A process whose
parent chain never reaches the supervisor but whose cgroup is the launch's is what the
cgroup check alone stands for: the test starts it outside the launch and moves it into the
launch's cgroup by writing its pid to ``cgroup.procs`` (as root may; the kernel then keeps
its children there), while the launch is live.

Real parts: a real ``wardian agent exec`` supervisor and its cgroup v2, the real CLI in
child processes (`tests.e2e._support.W`), the test's SQLite data directory. Skipped where
this user may not create a launch cgroup — the same probe as tests/runtime/test_containment.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e._support import W
from tests.waits import wait_until


def _launch_cgroups_work() -> bool:
    """Whether a launch cgroup can be made here (test_containment.py's probe)."""
    if not sys.platform.startswith("linux"):
        return False
    from wardian._process import LaunchCgroup

    probe = LaunchCgroup.create(f"probe-{os.getpid()}")
    if probe is None:
        return False
    probe.end()
    return True


pytestmark = pytest.mark.skipif(not _launch_cgroups_work(),
                                reason="needs a cgroup v2 this user may create cgroups in")

# Each caller runs these with an environment of WARDIAN_HOME, PATH (and PYTHONPATH, so the
# code under test is the one run) only: no managed variable is left to give it away.
CALLER = r"""
import json, os, subprocess, sys

def run_all(plan, result):
    env = {k: os.environ[k] for k in ("WARDIAN_HOME", "PATH", "PYTHONPATH") if k in os.environ}
    out = {}
    for name, argv in (
            ("garden memory list", ["garden", "memory", "list", "--agent", "ada"]),
            ("settings get", ["settings", "get", "agent_memory.enabled"]),
            ("settings set", ["settings", "set", "agent_memory.enabled", "false"]),
            ("garden maintain apply", ["garden", "maintain", "apply", plan,
                                       "--agent", "ada"])):
        done = subprocess.run([sys.executable, "-m", "wardian", *argv], env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        out[name] = {"rc": done.returncode, "out": done.stdout, "err": done.stderr}
    with open("/proc/self/cgroup") as f:
        cgroup = next(l for l in f if l.startswith("0::"))[3:].strip()
    chain, pid = [], os.getpid()
    while pid > 1:
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rpartition(")")[2].split()[1])
        chain.append(pid)
    with open(result + ".tmp", "w") as f:
        json.dump({"commands": out, "cgroup": cgroup, "chain": chain, "sid": os.getsid(0),
                   "pid": os.getpid()}, f)
    os.rename(result + ".tmp", result)
"""

RUNTIME = CALLER + r"""
# The launch's runtime: say who it is, double-fork a setsid grandchild that runs the
# operator commands (unless told to "stay" only), then stay until the test closes stdin
# (the launch stays live).
plan, result, what = sys.argv[1], sys.argv[2], sys.argv[3]
with open("/proc/self/cgroup") as f:
    cgroup = next(l for l in f if l.startswith("0::"))[3:].strip()
print(json.dumps({"launch": os.environ["WARDIAN_LAUNCH_ID"], "cgroup": cgroup,
                  "supervisor": os.getppid()}), flush=True)
if what == "fork":
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            run_all(plan, result)
            os._exit(0)
        os._exit(0)
    os.wait()
sys.stdin.read()
"""

OUTSIDER = CALLER + r"""
# Started outside the launch; waits until the test has moved it into the launch's cgroup.
go, plan, result = int(sys.argv[1]), sys.argv[2], sys.argv[3]
os.read(go, 1)
run_all(plan, result)
"""


class Launch:
    """A live ``wardian agent exec ada -- python RUNTIME`` in a session of its own."""

    def __init__(self, w: W, runtime: Path, plan: Path, result: Path, what: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wardian", "agent", "exec", "ada", "--", sys.executable,
             str(runtime), str(plan), str(result), what],
            env=w.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else "no output"
        self.hello: dict[str, Any] = json.loads(line)

    def end(self) -> int:
        """Close the runtime's stdin: it exits, the supervisor ends the launch's cgroup."""
        try:
            _out, _err = self.proc.communicate(input="", timeout=120)
        finally:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        return self.proc.returncode


@pytest.fixture
def setup(wardian_home: Path, tmp_path: Path) -> Iterator[tuple[W, str, Path]]:
    """Agent ada with one record and a conflict-free retire plan for it."""
    w = W(wardian_home)
    w.run("settings", "set", "agent_memory.enabled", "true")
    w.run("agent", "add", "ada", "--provider", "claude", "--workspace", str(tmp_path))
    w.run("agent", "exec", "ada", "--", sys.executable, "-m", "wardian", "memory", "save",
          "Deploys go out on Tuesdays", "--evidence", "the user said so", "--scope", "agent")
    [record] = w.records("ada")
    plan = tmp_path / "retire.json"
    w.run("garden", "memory", "retire", str(record["id"]), "--agent", "ada", "--reason",
          "done", "--output", str(plan))
    yield w, str(record["id"]), plan


def _expect_refused(w: W, answer: dict[str, Any], launch: str, record_id: str) -> None:
    commands = answer["commands"]
    assert sorted(commands) == sorted(["garden memory list", "settings get", "settings set",
                                       "garden maintain apply"]), commands
    for name, done in commands.items():
        assert done["rc"] == 3, (name, done)
        assert "operator command refused inside a managed process" in done["err"], (name, done)
        assert "Deploys go out on Tuesdays" not in done["out"] + done["err"], (name, done)
    # Nothing it asked for happened.
    assert w.run("settings", "get", "agent_memory.enabled").stdout.strip() == "true"
    [record] = w.records("ada")
    assert (record["id"], record["status"]) == (record_id, "active")
    assert answer["cgroup"].endswith(f"/wardian-launch-{launch}"), answer


def test_a_double_forked_setsid_grandchild_of_a_live_launch_is_refused(
    setup: tuple[W, str, Path], tmp_path: Path
) -> None:
    w, record_id, plan = setup
    runtime = tmp_path / "runtime.py"
    runtime.write_text(RUNTIME, encoding="utf-8")
    result = tmp_path / "result.json"
    launch = Launch(w, runtime, plan, result, "fork")
    try:
        wait_until(result.exists, what="the grandchild's operator commands")
        answer = json.loads(result.read_text())
    finally:
        assert launch.end() == 0
    _expect_refused(w, answer, launch.hello["launch"], record_id)
    assert answer["sid"] not in (launch.proc.pid, os.getsid(0)), answer  # its own session
    # The subreaper supervisor adopted it: forking does not leave its tree.
    assert launch.hello["supervisor"] in answer["chain"], answer


def test_a_process_in_a_live_launchs_cgroup_outside_its_tree_is_refused(
    setup: tuple[W, str, Path], tmp_path: Path
) -> None:
    from wardian._process import _cgroup2_mount

    w, record_id, plan = setup
    runtime = tmp_path / "runtime.py"
    runtime.write_text(RUNTIME, encoding="utf-8")
    outsider = tmp_path / "outsider.py"
    outsider.write_text(OUTSIDER, encoding="utf-8")
    result = tmp_path / "result.json"
    launch = Launch(w, runtime, plan, result, "stay")  # no caller inside the tree
    go_r, go_w = os.pipe()
    caller = subprocess.Popen(
        [sys.executable, str(outsider), str(go_r), str(plan), str(result)],
        env={k: v for k, v in w.env.items() if not k.startswith("WARDIAN_")
             or k == "WARDIAN_HOME"},
        pass_fds=(go_r,), start_new_session=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    os.close(go_r)
    try:
        mount = _cgroup2_mount()
        assert mount is not None
        procs = Path(mount, launch.hello["cgroup"].lstrip("/"), "cgroup.procs")
        try:
            procs.write_text(str(caller.pid), encoding="ascii")
        except OSError as exc:
            pytest.skip(f"cannot move a process into the launch's cgroup ({exc})")
        os.write(go_w, b"x")
        wait_until(result.exists, what="the outsider's operator commands",
                   detail=lambda: caller.stderr.read() if caller.poll() is not None
                   and caller.stderr else "still running")
        answer = json.loads(result.read_text())
        assert caller.wait(timeout=120) == 0
    finally:
        os.close(go_w)
        with contextlib.suppress(OSError):
            os.kill(caller.pid, signal.SIGKILL)
        caller.wait(timeout=120)
        if caller.stderr:
            caller.stderr.close()
        assert launch.end() == 0
    _expect_refused(w, answer, launch.hello["launch"], record_id)
    assert launch.hello["supervisor"] not in answer["chain"], answer
    for name, done in answer["commands"].items():
        assert (f"(it runs in the cgroup of launch {launch.hello['launch'][:8]})"
                in done["err"]), (name, done)
