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
    from wardian._process import launcher_argv

    env = {**os.environ, "WARDIAN_AGENT_ID": agents["bob"], "WARDIAN_LAUNCH_ID": "l" * 32}
    holder = launcher_argv("hold", "--parent", str(os.getpid()), "--", "/bin/true")
    done = run(*USER_NS, *holder, env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("wardian: the step's launch could not be recorded: launch "
                                  "refused: this process runs in user namespace "), done.stderr
    assert rows(wardian_home, "launches") == []
    assert rows(wardian_home, "capabilities") == []
    # The same holder in the operator's namespace records its launch and runs the command.
    assert run(*holder, env=env).returncode == 0
    assert len(rows(wardian_home, "launches")) == 1


def seed_bad_rows(home: Path, agent_id: str) -> str:
    """What `agent exec` inside `unshare -Urpf` recorded before namespaces were: its
    supervisor as pid 1 with the host init's start time, no namespaces. Returns the token."""
    from wardian._process import identity_of
    from wardian.memory.capabilities import hash_token, new_token
    from wardian.memory.db import MemoryDB
    from wardian.memory.store import MemoryStore

    init = identity_of(1)
    assert init is not None
    token = new_token()
    MemoryStore(MemoryDB.open(home / "memory.db"))  # migrated as this version leaves it
    conn = sqlite3.connect(home / "memory.db")
    try:
        with conn:
            conn.execute(
                "INSERT INTO launches (launch_id, agent_id, pid, process_started_at,"
                " workspace, memory_enabled, created_at) VALUES (?, ?, 1, ?, NULL, 1,"
                " '2026-12-04T10:00:00.000000Z')", ("b" * 32, agent_id, init.started_at))
            conn.execute(
                "INSERT INTO capabilities (token_hash, agent_id, pid, process_started_at,"
                " workspace, created_at) VALUES (?, ?, 1, ?, NULL,"
                " '2026-12-04T10:00:00.000000Z')",
                (hash_token(token), agent_id, init.started_at))
    finally:
        conn.close()
    return token


def test_pid_1_rows_recorded_from_a_namespace_are_found_ignored_and_cleared(
    agents: dict[str, str], wardian_home: Path
) -> None:
    token = seed_bad_rows(wardian_home, agents["bob"])
    # pid 1 is every process's ancestor: the row must not make the operator an agent.
    listed = run(*WARDIAN, "agent", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    # Nor may the token work from any shell of this user.
    stolen = run(*WARDIAN, "memory", "save", "pwn", "--evidence", "x",
                 env={**os.environ, "WARDIAN_AGENT_ID": agents["bob"],
                      "WARDIAN_CAPABILITY": token})
    assert stolen.returncode == 3, stolen.stderr
    assert "memory capability expired: it was minted without its launch's namespaces" in (
        stolen.stderr)
    doctor = run(*WARDIAN, "doctor", "--check", "launches", "--json")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    [check] = json.loads(doctor.stdout)["checks"]
    findings = check["findings"]
    assert [f["status"] for f in findings] == ["problem", "problem"], findings
    assert all("names pid 1" in f["message"] for f in findings), findings
    assert all("`wardian agent clear-bad-launches`" in f["fix"] for f in findings), findings
    cleared = run(*WARDIAN, "agent", "clear-bad-launches", "--json")
    assert cleared.returncode == 0, cleared.stderr
    assert sorted(c["table"] for c in json.loads(cleared.stdout)["cleared"]) == [
        "capabilities", "launches"]
    assert run(*WARDIAN, "doctor", "--check", "launches").returncode == 0
    assert rows(wardian_home, "launches") == []


def test_a_launchs_rows_carry_its_namespaces_and_a_foreign_one_is_not_honoured(
    agents: dict[str, str], wardian_home: Path
) -> None:
    from wardian._process import Namespaces, current, namespaces
    from wardian.errors import CapabilityNotHeld
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import MemoryDB
    from wardian.memory.principal import resolve_principal
    from wardian.memory.store import MemoryStore

    assert run(*WARDIAN, "agent", "exec", "bob", "--", "true").returncode == 0
    conn = sqlite3.connect(f"file:{wardian_home / 'memory.db'}?mode=ro", uri=True)
    try:
        recorded = conn.execute("SELECT pid_ns, user_ns FROM launches").fetchall()
        minted = conn.execute("SELECT pid_ns, user_ns FROM capabilities").fetchall()
    finally:
        conn.close()
    assert recorded == minted == [tuple(namespaces() or ())]
    me = current()
    store = MemoryStore(MemoryDB.open(wardian_home / "memory.db"))
    token = CapabilityStore(store.conn).mint(
        agents["bob"], pid=me.pid, started_at=me.started_at, workspace=None,
        ns=Namespaces(1, 2))
    with pytest.raises(CapabilityNotHeld, match="its launch ran in pid namespace 1"):
        resolve_principal(is_alive=lambda *_: True, caller=[(me.pid, me.started_at)],
                          store=store, environ={"WARDIAN_AGENT_ID": agents["bob"],
                                                "WARDIAN_CAPABILITY": token})
