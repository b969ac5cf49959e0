"""Isolation of managed launches (issue 15 points 1-2): a capability works only inside its
own launch's process tree, and a process that detaches from its launch stays inside it.

Real `wardian agent exec` supervisors, real children, real `/proc`. The children talk to the
test over pipes (never sleeps): each message is one JSON line, each answer one JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="child subreaper and /proc are Linux features")

MANAGED = ("WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY", "WARDIAN_MEMORY_CONTEXT",
           "WARDIAN_LAUNCH_ID")

CHILD = r"""
import json, os, subprocess, sys
print(json.dumps({"pid": os.getpid(), "ppid": os.getppid(),
                  "env": {k: v for k, v in os.environ.items() if k.startswith("WARDIAN_")}}),
      flush=True)

def wardian(argv, env):
    r = subprocess.run([sys.executable, "-m", "wardian", *argv], capture_output=True,
                       text=True, env=env, timeout=120)
    return {"rc": r.returncode, "out": r.stdout, "err": r.stderr}

def detached(msg, env):
    # A double fork with a new session: the grandchild's parent exits before it goes on,
    # so it is re-parented (to the nearest subreaper, else pid 1).
    out_r, out_w = os.pipe()
    go_r, go_w = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(out_r); os.close(go_w)
            os.read(go_r, 1)  # wait until the middle process has been reaped
            answer = {"ppid": os.getppid(), "pid": os.getpid()}
            if msg.get("argv"):
                answer.update(wardian(msg["argv"], env))
            os.write(out_w, (json.dumps(answer) + "\n").encode())
            os.close(out_w)
            if msg.get("linger"):
                os.execvp("sleep", ["sleep", "1000"])
            os._exit(0)
        os._exit(0)
    os.close(out_w); os.close(go_r)
    os.waitpid(middle, 0)
    os.write(go_w, b"g"); os.close(go_w)
    with os.fdopen(out_r) as f:
        return json.loads(f.readline())

for line in sys.stdin:
    msg = json.loads(line)
    if "exit" in msg:
        sys.exit(msg["exit"])
    env = dict(os.environ)
    for k in msg.get("unset", []):
        env.pop(k, None)
    if "environ_of" in msg:  # read another process's managed variables from /proc
        with open(f"/proc/{msg['environ_of']}/environ", "rb") as f:
            pairs = [p.decode().split("=", 1) for p in f.read().split(b"\0") if p]
        env.update({k: v for k, v in pairs if k.startswith("WARDIAN_")})
    if msg.get("detach"):
        answer = detached(msg, env)
    else:
        answer = wardian(msg["argv"], env)
    print(json.dumps(answer), flush=True)
"""


class Launch:
    """`wardian agent exec AGENT -- python child.py`, driven over pipes."""

    def __init__(self, agent: str, child: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wardian", "agent", "exec", agent, "--",
             sys.executable, str(child)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else "no output"
        self.hello: dict[str, Any] = json.loads(line)

    def send(self, **msg: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "managed child ended early"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def finish(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"exit": 0}) + "\n")
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=60)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


@pytest.fixture
def child(tmp_path: Path) -> Path:
    path = tmp_path / "child.py"
    path.write_text(CHILD, encoding="utf-8")
    return path


@pytest.fixture
def started() -> Iterator[list[Launch]]:
    launches: list[Launch] = []
    yield launches
    for one in launches:
        one.kill()


@pytest.fixture
def agents(cli: CliRunner) -> dict[str, str]:
    ids = {}
    for name in ("ada", "bob"):
        result = invoke(cli, "agent", "add", name, "--provider", "claude", "--json")
        assert result.exit_code == 0, result.output
        ids[name] = str(json.loads(result.stdout)["id"])
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    return ids


def start(started: list[Launch], agent: str, child: Path) -> Launch:
    one = Launch(agent, child)
    started.append(one)
    return one


def records_of(home: Path, agent_id: str) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(home / "memory.db")
    try:
        return [r[0] for r in conn.execute(
            "SELECT text FROM records WHERE agent_id = ?", (agent_id,))]
    finally:
        conn.close()


def refusals(home: Path) -> list[tuple[Any, ...]]:
    import sqlite3

    conn = sqlite3.connect(home / "memory.db")
    try:
        return list(conn.execute(
            "SELECT holder_agent_id, holder_launch_id, caller_agent_id, caller_launch_id"
            " FROM capability_refusals ORDER BY id"))
    finally:
        conn.close()


def test_token_read_from_a_sibling_launchs_proc_environ_is_refused(
    agents: dict[str, str], child: Path, started: list[Launch], wardian_home: Path
) -> None:
    bob = start(started, "bob", child)
    ada = start(started, "ada", child)
    stolen = ada.send(environ_of=bob.hello["pid"],
                      argv=["memory", "save", "pwn", "--evidence", "x"])
    assert stolen["rc"] == 3, stolen
    assert stolen["err"].startswith("Error: memory capability refused")
    bob_launch = bob.hello["env"]["WARDIAN_LAUNCH_ID"]
    ada_launch = ada.hello["env"]["WARDIAN_LAUNCH_ID"]
    assert bob_launch[:8] in stolen["err"] and ada_launch[:8] in stolen["err"]
    assert refusals(wardian_home) == [(agents["bob"], bob_launch, agents["ada"], ada_launch)]
    # The operator sees the attempt from either side.
    for name in ("ada", "bob"):
        shown = invoke(CliRunner(), "garden", "memory", "refusals", "--agent", name, "--json")
        assert shown.exit_code == 0, shown.output
        [event] = json.loads(shown.stdout)["refusals"]
        assert (event["holder_launch_id"], event["caller_launch_id"]) == (bob_launch,
                                                                           ada_launch)
    assert records_of(wardian_home, agents["bob"]) == []
    # Each launch's own capability still works inside its own tree, also after detaching.
    assert bob.send(argv=["memory", "save", "mine", "--evidence", "x"])["rc"] == 0
    detached = bob.send(detach=True, argv=["memory", "save", "detached", "--evidence", "x"])
    assert detached["rc"] == 0, detached
    assert sorted(records_of(wardian_home, agents["bob"])) == ["detached", "mine"]
    assert bob.finish() == 0 and ada.finish() == 0


def test_copied_environment_replayed_from_a_plain_shell_is_refused(
    agents: dict[str, str], child: Path, started: list[Launch], wardian_home: Path
) -> None:
    bob = start(started, "bob", child)
    env = {**os.environ, **bob.hello["env"]}
    replay = subprocess.run([sys.executable, "-m", "wardian", "memory", "save", "pwn",
                             "--evidence", "x"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert replay.returncode == 3, replay.stderr
    assert "runs outside any launch" in replay.stderr
    assert bob.hello["env"]["WARDIAN_LAUNCH_ID"][:8] in replay.stderr
    [(holder, _launch, caller, caller_launch)] = refusals(wardian_home)
    assert (holder, caller, caller_launch) == (agents["bob"], None, None)
    assert records_of(wardian_home, agents["bob"]) == []
    assert bob.finish() == 0


def test_detached_session_with_cleared_environment_is_refused_operator_commands(
    cli: CliRunner, agents: dict[str, str], child: Path, started: list[Launch]
) -> None:
    ada = start(started, "ada", child)
    for argv in (["settings", "set", "agent_memory.enabled", "false"],
                 ["garden", "memory", "list", "--agent", "bob"],
                 ["agent", "remove", "bob", "--delete-records"]):
        answer = ada.send(detach=True, unset=list(MANAGED), argv=argv)
        # The detached process was re-parented to the supervisor, not to pid 1.
        assert answer["ppid"] == ada.proc.pid, answer
        assert answer["rc"] == 3, (argv, answer)
        assert answer["err"].startswith("Error: operator command refused"), answer
    assert ada.finish() == 0
    assert invoke(cli, "settings", "get", "agent_memory.enabled").stdout.strip() == "true"
    assert len(json.loads(invoke(cli, "agent", "list", "--json").stdout)) == 2


def test_runtime_end_ends_the_detached_processes_it_left(
    agents: dict[str, str], child: Path, started: list[Launch]
) -> None:
    from wardian._process import identity_of

    ada = start(started, "ada", child)
    lingering = ada.send(detach=True, linger=True)
    assert lingering["ppid"] == ada.proc.pid
    assert identity_of(lingering["pid"]) is not None
    assert ada.finish() == 0
    # The supervisor has exited: nothing it contained is still running.
    assert identity_of(lingering["pid"]) is None
