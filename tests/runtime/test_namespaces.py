"""Process identity that namespaces cannot fool: launches, capabilities and the operator
guard trust only identities read in the data directory owner's pid and user namespace.

Real `unshare` (user + pid namespaces need no privilege), real `wardian agent exec`
supervisors, real children. `agent exec` exits with its child's code, so a command run
inside a launch reports through it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner


def _unshare_works() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return subprocess.run(["unshare", "-Urpf", "true"], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


pytestmark = pytest.mark.skipif(not _unshare_works(),
                                reason="needs Linux and unprivileged `unshare -Urpf`")

WARDIAN = (sys.executable, "-m", "wardian")
PID_NS = ("unshare", "-Urpf")
"""A new user and pid namespace that still sees the host's /proc (pid 1 there is init)."""
PID_NS_OWN_PROC = ("unshare", "-Urpfm", "--mount-proc")
"""A new user, pid and mount namespace with a /proc of its own (consistent pids)."""
USER_NS = ("unshare", "-Ur")
"""Only a new user namespace: same pids, same /proc."""


def run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120,
                          env=os.environ.copy() if env is None else env)


def clean_env(home: Path) -> list[str]:
    """``env -i`` with just what the command needs: no managed variable survives."""
    return ["env", "-i", f"WARDIAN_HOME={home}", f"PATH={os.environ.get('PATH', '')}"]


def rows(home: Path, table: str) -> list[tuple[object, ...]]:
    if not (home / "memory.db").exists():
        return []
    conn = sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True)
    try:
        return list(conn.execute(f"SELECT pid, process_started_at FROM {table}"))
    finally:
        conn.close()


@pytest.fixture
def agents(cli: CliRunner) -> dict[str, str]:
    ids = {}
    for name in ("ada", "bob"):
        result = invoke(cli, "agent", "add", name, "--provider", "claude", "--json")
        assert result.exit_code == 0, result.output
        ids[name] = str(json.loads(result.stdout)["id"])
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    return ids


@pytest.mark.parametrize("namespace", [PID_NS, PID_NS_OWN_PROC, USER_NS],
                         ids=["pid-ns-host-proc", "pid-ns-own-proc", "user-ns"])
def test_launch_from_another_namespace_is_refused_and_records_nothing(
    agents: dict[str, str], wardian_home: Path, namespace: tuple[str, ...]
) -> None:
    before = rows(wardian_home, "launches")
    done = run(*namespace, *WARDIAN, "agent", "exec", "bob", "--", "true")
    assert done.returncode == 3, done.stderr
    # `agent exec` is an operator command: its guard refuses first (the launch itself
    # would refuse as well, `test_step_holder_from_another_namespace_records_nothing`).
    assert done.stderr.startswith("Error: operator command refused: "), done.stderr
    assert rows(wardian_home, "launches") == before
    assert rows(wardian_home, "capabilities") == []


def test_identity_is_not_read_from_another_pid_namespaces_proc() -> None:
    # pid 1 to itself, while /proc/1 is the host's init: no identity, no fallback.
    probe = ("from wardian._process import current\n"
             "from wardian.errors import IdentityUnavailable\n"
             "try:\n    print(current())\n"
             "except IdentityUnavailable as exc:\n    print('refused', exc.exit_code, exc)\n")
    done = run(*PID_NS, sys.executable, "-c", probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused 3 process identity cannot be read: this process "
                                  "is pid 1 in its own pid namespace"), done.stdout
    inside = run(*PID_NS_OWN_PROC, sys.executable, "-c", probe)
    assert inside.stdout.startswith("ProcessIdentity(pid=1,"), inside.stdout + inside.stderr


@pytest.mark.parametrize("namespace", [PID_NS, PID_NS_OWN_PROC, USER_NS],
                         ids=["pid-ns-host-proc", "pid-ns-own-proc", "user-ns"])
def test_operator_commands_from_a_namespace_inside_a_launch_are_refused(
    cli: CliRunner, agents: dict[str, str], wardian_home: Path, namespace: tuple[str, ...]
) -> None:
    for argv in (["settings", "set", "agent_memory.enabled", "false"],
                 ["garden", "memory", "list", "--agent", "bob"],
                 ["agent", "remove", "bob", "--delete-records"]):
        done = run(*WARDIAN, "agent", "exec", "ada", "--", *namespace,
                   *clean_env(wardian_home), *WARDIAN, *argv)
        assert done.returncode == 3, (argv, done.stderr)
        assert done.stderr.startswith("Error: operator command refused: "), done.stderr
    assert invoke(cli, "settings", "get", "agent_memory.enabled").stdout.strip() == "true"
    assert len(json.loads(invoke(cli, "agent", "list", "--json").stdout)) == 2


def test_operator_commands_from_another_namespace_say_why(wardian_home: Path,
                                                         cli: CliRunner) -> None:
    assert invoke(cli, "settings", "get", "agent_memory.enabled").exit_code == 0
    done = run(*PID_NS_OWN_PROC, *WARDIAN, "settings", "set", "agent_memory.enabled", "true")
    assert done.returncode == 3, done.stderr
    assert "pid namespace" in done.stderr and "not the operator's" in done.stderr
    assert str(wardian_home / "namespaces.json") in done.stderr
    # From the operator's own namespace the same command works.
    assert run(*WARDIAN, "settings", "set", "agent_memory.enabled", "true").returncode == 0


def test_capability_is_honoured_only_in_its_launchs_namespaces(
    agents: dict[str, str], wardian_home: Path
) -> None:
    save = [*WARDIAN, "memory", "save", "from inside", "--evidence", "x"]
    inside = run(*WARDIAN, "agent", "exec", "bob", "--", *save)
    assert inside.returncode == 0, inside.stderr
    for namespace in (USER_NS, PID_NS_OWN_PROC, PID_NS):
        done = run(*WARDIAN, "agent", "exec", "bob", "--", *namespace, *save)
        assert done.returncode == 3, (namespace, done.stderr)
        assert "Error: memory capability refused: this process runs in " in done.stderr, (
            namespace, done.stderr)
    conn = sqlite3.connect(wardian_home / "memory.db")
    try:
        texts = [r[0] for r in conn.execute("SELECT text FROM records")]
    finally:
        conn.close()
    assert texts == ["from inside"]


def test_step_holder_from_another_namespace_records_nothing(
    agents: dict[str, str], wardian_home: Path
) -> None:
    from wardian.runtime.step_launch import STEP_HOLDER_MAIN

    env = {**os.environ, "WARDIAN_AGENT_ID": agents["bob"], "WARDIAN_LAUNCH_ID": "l" * 32}
    holder = [sys.executable, "-c", STEP_HOLDER_MAIN, "--parent", str(os.getpid()), "--",
              "/bin/true"]
    done = run(*USER_NS, *holder, env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("wardian: the step's launch could not be recorded: launch "
                                  "refused: this process runs in user namespace "), done.stderr
    assert rows(wardian_home, "launches") == []
    assert rows(wardian_home, "capabilities") == []
    # The same holder in the operator's namespace records its launch and runs the command.
    assert run(*holder, env=env).returncode == 0
    assert len(rows(wardian_home, "launches")) == 1
