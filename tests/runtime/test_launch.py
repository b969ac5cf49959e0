"""`wardian agent exec` with real subprocesses: environment, capabilities, startup context,
Memory loaded events, expiry (normal exit, crash, kill -9), and fail-closed memory commands.

Each launch runs a small Python child that reports its environment on its first stdout
line and then runs the `wardian` commands the test sends on stdin — so the test and the
managed process synchronise on pipes, never on sleeps (issue 2 points 6-7, acceptance).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

CHILD = r"""
import json, os, subprocess, sys
keys = ["WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY", "WARDIAN_MEMORY_CONTEXT",
        "WARDIAN_LAUNCH_ID"]
hello = {k: os.environ.get(k) for k in keys}
hello["cwd"] = os.getcwd()
hello["pid"] = os.getpid()
ctx = os.environ.get("WARDIAN_MEMORY_CONTEXT")
if ctx:
    with open(ctx, encoding="utf-8", newline="") as f:
        hello["context"] = f.read()
    hello["context_mode"] = os.stat(ctx).st_mode & 0o777
print(json.dumps(hello), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if "exit" in msg:
        sys.exit(msg["exit"])
    env = dict(os.environ)
    for k in msg.get("unset", []):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-m", "wardian", *msg["argv"]], capture_output=True,
                       text=True, env=env, timeout=120)
    print(json.dumps({"rc": r.returncode, "out": r.stdout, "err": r.stderr}), flush=True)
"""


def wardian(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `wardian` in a subprocess."""
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, env=env, timeout=120)


class Managed:
    """A running `wardian agent exec AGENT -- python child.py` driven over pipes."""

    def __init__(self, agent: str, child: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wardian", "agent", "exec", *extra, agent, "--",
             sys.executable, str(child)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else "no output"
        self.hello: dict[str, Any] = json.loads(line)

    def env(self) -> dict[str, str]:
        """The managed variables the child received (for replaying them elsewhere)."""
        return {k: v for k, v in self.hello.items() if k.startswith("WARDIAN_") and v}

    def run(self, *argv: str, unset: tuple[str, ...] = ()) -> dict[str, Any]:
        """Have the managed child run `wardian ARGV…`; returns rc, out, err."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": list(argv), "unset": list(unset)}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "managed child ended early"
        result: dict[str, Any] = json.loads(line)
        return result

    def finish(self, code: int = 0) -> int:
        """Tell the child to exit with `code`; return the supervisor's exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"exit": code}) + "\n")
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=60)


@pytest.fixture
def child(tmp_path: Path) -> Path:
    path = tmp_path / "child.py"
    path.write_text(CHILD, encoding="utf-8")
    return path


@pytest.fixture
def launches() -> Iterator[list[Managed]]:
    started: list[Managed] = []
    yield started
    for managed in started:
        managed.kill()
        for pipe in (managed.proc.stdin, managed.proc.stdout, managed.proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


@pytest.fixture
def agent_id(cli: CliRunner) -> str:
    result = invoke(cli, "agent", "add", "ada", "--provider", "claude", "--json")
    assert result.exit_code == 0
    return str(json.loads(result.stdout)["id"])


def enable(cli: CliRunner, value: str = "true") -> None:
    assert invoke(cli, "settings", "set", "agent_memory.enabled", value).exit_code == 0


def db_rows(home: Path, sql: str) -> list[sqlite3.Row]:
    path = home / "memory.db"
    if not path.exists():
        return []
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def launch(launches: list[Managed], child: Path, *extra: str, agent: str = "ada") -> Managed:
    managed = Managed(agent, child, *extra)
    launches.append(managed)
    return managed


# --- disabled -----------------------------------------------------------------------------


def test_disabled_by_default_child_gets_no_capability_no_context(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed], wardian_home: Path
) -> None:
    assert invoke(cli, "settings", "get", "agent_memory.enabled").stdout.strip() == "false"
    managed = launch(launches, child)
    assert managed.hello["WARDIAN_AGENT_ID"] == agent_id
    assert managed.hello["WARDIAN_LAUNCH_ID"]
    assert managed.hello["WARDIAN_CAPABILITY"] is None
    assert managed.hello["WARDIAN_MEMORY_CONTEXT"] is None
    saved = managed.run("memory", "save", "x", "--evidence", "y")
    assert saved["rc"] == 3
    assert "no memory capability" in saved["err"]
    assert saved["err"].count("\n") == 1  # a one-line reason
    assert managed.finish(5) == 5
    assert db_rows(wardian_home, "SELECT * FROM records") == []
    assert db_rows(wardian_home, "SELECT * FROM capabilities") == []
    assert db_rows(wardian_home, "SELECT * FROM loaded_events") == []


def _dbs() -> dict[str, Any]:
    """prepare_launch's databases: the installation's, as `exec_managed` opens them."""
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    return {"state": open_state_db(), "store": MemoryStore(open_memory_db())}


def test_prepare_launch_strips_inherited_capability_and_context(
    cli: CliRunner, agent_id: str
) -> None:
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.launch import prepare_launch

    agent = AgentRegistry(open_state_db()).get("ada")
    inherited = {"PATH": os.environ.get("PATH", ""), "WARDIAN_CAPABILITY": "parent-token",
                 "WARDIAN_MEMORY_CONTEXT": "/parent/context.md", "WARDIAN_AGENT_ID": "other"}
    disabled = prepare_launch(agent, base_env=inherited, **_dbs())
    assert "WARDIAN_CAPABILITY" not in disabled.env
    assert "WARDIAN_MEMORY_CONTEXT" not in disabled.env
    assert disabled.env["WARDIAN_AGENT_ID"] == agent_id
    enable(cli)
    enabled = prepare_launch(agent, base_env=inherited, **_dbs())
    try:
        assert enabled.env["WARDIAN_CAPABILITY"] not in {"parent-token", ""}
        assert enabled.env["WARDIAN_MEMORY_CONTEXT"] != "/parent/context.md"
    finally:
        from wardian.runtime.launch import _on_runtime_exit

        _on_runtime_exit(agent, enabled.launch_id, enabled.workspace, "exec")
        assert enabled.context_path is not None
        enabled.context_path.unlink()


# --- enabled ------------------------------------------------------------------------------


def test_enabled_launch_capability_context_loaded_event_and_revocation(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed], wardian_home: Path,
    tmp_path: Path,
) -> None:
    enable(cli)
    workspace = tmp_path / "proj"
    (workspace / ".git").mkdir(parents=True)
    first = launch(launches, child, "--workspace", str(workspace))
    assert first.hello["cwd"] == str(workspace.resolve())
    token = first.hello["WARDIAN_CAPABILITY"]
    assert token and len(token) >= 43
    context_path = Path(first.hello["WARDIAN_MEMORY_CONTEXT"])
    assert context_path.parent == wardian_home / "run"
    assert first.hello["context_mode"] == 0o600
    assert "wardian memory save" in first.hello["context"]  # direct-retention instructions
    assert "(no memory records yet" in first.hello["context"]
    # Only the hash is stored.
    [cap] = db_rows(wardian_home, "SELECT * FROM capabilities")
    assert cap["token_hash"] != token and token not in json.dumps(dict(cap))
    assert cap["agent_id"] == agent_id and cap["revoked_at"] is None
    assert cap["pid"] == first.proc.pid  # bound to the supervisor
    saved = first.run("memory", "save", "Prefer concise handoffs", "--evidence", "said so",
                      "--scope", "agent")
    assert saved["rc"] == 0, saved["err"]
    assert saved["out"].splitlines()[-1] == "Memory saved · This agent"
    cur = first.run("memory", "save", "Checkpoint: parser half done", "--evidence", "log",
                    "--kind", "current")
    assert cur["rc"] == 0, cur["err"]
    assert first.finish(7) == 7  # the child's exit code
    # Nothing to load at that launch: no Memory loaded event. Exit revoked the capability.
    assert db_rows(wardian_home, "SELECT * FROM loaded_events") == []
    [cap] = db_rows(wardian_home, "SELECT * FROM capabilities")
    assert cap["revoked_at"] is not None and "runtime exited" in cap["revoked_reason"]
    assert not context_path.exists()
    stale = wardian("memory", "save", "late", "--evidence", "e",
                    env={**os.environ, **first.env()})
    assert stale.returncode == 3 and "expired" in stale.stderr

    second = launch(launches, child, "--workspace", str(workspace / ".git"))
    context = second.hello["context"]
    lines = [ln for ln in context.splitlines() if ln.startswith("- [")]
    assert len(lines) == 2
    # Filled by value: the current checkpoint first, then the stable record.
    assert lines[0].endswith("current · workspace: Checkpoint: parser half done (saved today)")
    assert lines[1].endswith("stable · agent: Prefer concise handoffs")
    assert second.finish(0) == 0
    [event] = db_rows(wardian_home, "SELECT * FROM loaded_events")
    assert event["context"] == context  # the exact context
    assert event["pid"] == second.hello["pid"]
    assert event["workspace"] == str(workspace.resolve())
    shown = invoke(cli, "garden", "memory", "loaded", "--agent", "ada", "--json")
    assert shown.exit_code == 0, shown.output
    [doc] = json.loads(shown.stdout)["events"]
    assert doc["context"] == context and doc["process"]["pid"] == second.hello["pid"]
    assert doc["created_at"].endswith("Z")


def test_concurrent_launches_get_independent_capabilities(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed], wardian_home: Path
) -> None:
    enable(cli)
    a = launch(launches, child)
    b = launch(launches, child)
    assert a.hello["WARDIAN_CAPABILITY"] != b.hello["WARDIAN_CAPABILITY"]
    assert a.run("memory", "save", "from a", "--evidence", "e")["rc"] == 0
    assert b.run("memory", "save", "from b", "--evidence", "e")["rc"] == 0
    assert a.finish() == 0
    # a's capability died with a's runtime; b's still works.
    replay = wardian("memory", "list", env={**os.environ, **a.env()})
    assert replay.returncode == 3 and "expired" in replay.stderr
    listed = b.run("memory", "list", "--json")
    assert listed["rc"] == 0
    assert sorted(r["text"] for r in json.loads(listed["out"])) == ["from a", "from b"]
    assert b.finish() == 0
    caps = db_rows(wardian_home, "SELECT * FROM capabilities")
    assert len(caps) == 2 and all(c["revoked_at"] for c in caps)


def test_setting_change_does_not_cut_off_a_running_process(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed]
) -> None:
    enable(cli)
    running = launch(launches, child)
    enable(cli, "false")
    assert running.run("memory", "save", "still allowed", "--evidence", "e")["rc"] == 0
    newer = launch(launches, child)
    assert newer.hello["WARDIAN_CAPABILITY"] is None
    assert newer.run("memory", "save", "x", "--evidence", "e")["rc"] == 3
    assert running.finish() == 0 and newer.finish() == 0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL of the supervisor")
def test_killed_supervisor_expires_the_capability(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed], wardian_home: Path
) -> None:
    enable(cli)
    managed = launch(launches, child)
    assert managed.run("memory", "save", "before", "--evidence", "e")["rc"] == 0
    managed.proc.send_signal(signal.SIGKILL)  # the runtime crashes; nothing revokes
    managed.proc.wait(timeout=60)
    [cap] = db_rows(wardian_home, "SELECT * FROM capabilities")
    assert cap["revoked_at"] is None
    # The orphaned child still holds the token, but its runtime has ended.
    after = managed.run("memory", "save", "after", "--evidence", "e")
    assert after["rc"] == 3, after
    assert "has ended" in after["err"]
    assert [r["text"] for r in db_rows(wardian_home, "SELECT text FROM records")] == ["before"]
    assert managed.proc.stdin is not None
    managed.proc.stdin.close()  # the child reads EOF and ends


@pytest.mark.skipif(sys.platform == "win32", reason="signals")
def test_crashed_child_exit_code_and_revocation(
    cli: CliRunner, agent_id: str, wardian_home: Path, tmp_path: Path
) -> None:
    enable(cli)
    result = wardian("agent", "exec", "ada", "--", sys.executable, "-c",
                     "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert result.returncode == 128 + signal.SIGKILL
    [cap] = db_rows(wardian_home, "SELECT * FROM capabilities")
    assert cap["revoked_at"] is not None
    assert list((wardian_home / "run").iterdir()) == []


def test_command_not_found_exits_127_not_executable_126_and_revokes(
    cli: CliRunner, agent_id: str, wardian_home: Path, tmp_path: Path
) -> None:
    enable(cli)
    result = wardian("agent", "exec", "ada", "--", "definitely-not-a-command-xyz")
    assert result.returncode == 127, result.stderr
    assert result.stderr.startswith(
        "Error: command not found: 'definitely-not-a-command-xyz' is on none of the")
    assert result.stderr.count("\n") == 1 and "PATH" in result.stderr
    plain = tmp_path / "notes.txt"
    plain.write_text("not a program\n", encoding="utf-8")
    plain.chmod(0o644)
    denied = wardian("agent", "exec", "ada", "--", str(plain))
    assert denied.returncode == 126, denied.stderr
    assert "not an executable file" in denied.stderr and "Traceback" not in denied.stderr
    caps = db_rows(wardian_home, "SELECT * FROM capabilities")
    assert len(caps) == 2 and all(cap["revoked_at"] is not None for cap in caps)
    assert list(wardian_home.glob("run/*.md")) == []  # no context file left behind


def test_workspace_after_name_as_cli_md_writes_it(
    cli: CliRunner, agent_id: str, tmp_path: Path
) -> None:
    where = tmp_path / "proj"
    where.mkdir()
    pwd = [sys.executable, "-c", "import os; print(os.getcwd())"]
    for form in (["--workspace", str(where), "--"], [f"--workspace={where}", "--"],
                 ["--workspace", str(where)]):
        result = wardian("agent", "exec", "ada", *form, *pwd)
        assert result.returncode == 0, (form, result.stderr)
        assert result.stdout.strip() == str(where.resolve())
    # CMD's own options stay CMD's.
    echoed = wardian("agent", "exec", "ada", "--", sys.executable, "-c",
                     "import sys; print(sys.argv[1:])", "--workspace", "x")
    assert echoed.stdout.strip() == "['--workspace', 'x']"
    twice = wardian("agent", "exec", "--workspace", str(where), "ada", "--workspace",
                    str(where), "--", *pwd)
    assert twice.returncode == 2 and "given twice" in twice.stderr
    empty = wardian("agent", "exec", "ada", "--workspace", "--", *pwd)
    assert empty.returncode == 2 and "needs a directory" in empty.stderr


def test_exec_unknown_agent_and_bad_workspace(cli: CliRunner, agent_id: str) -> None:
    assert wardian("agent", "exec", "nobody", "--", "true").returncode == 1
    bad = wardian("agent", "exec", "--workspace", "/definitely/missing", "ada", "--", "true")
    assert bad.returncode == 2 and "not a directory" in bad.stderr


# --- fail closed --------------------------------------------------------------------------


def test_memory_commands_fail_closed_without_a_valid_capability(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed], wardian_home: Path,
    tmp_path: Path,
) -> None:
    # No capability at all: exit 3, and not even memory.db is created.
    for argv in (["save", "x", "--evidence", "y"], ["list"], ["recall"], ["show", "abc"]):
        result = wardian("memory", *argv)
        assert result.returncode == 3, (argv, result.stderr)
        assert result.stderr.startswith("Error: no memory capability")
    assert not (wardian_home / "memory.db").exists()
    enable(cli)
    other = json.loads(invoke(cli, "agent", "add", "bo", "--provider", "codex",
                              "--json").stdout)["id"]
    managed = launch(launches, child)
    good = managed.env()
    cases = {
        "forged": {**good, "WARDIAN_CAPABILITY": "forged-" + "x" * 40},
        "other agent": {**good, "WARDIAN_AGENT_ID": other},
        "no agent id": {"WARDIAN_CAPABILITY": good["WARDIAN_CAPABILITY"]},
        "multi-line agent id": {**good, "WARDIAN_AGENT_ID": other + "\nError: spoofed line"},
        "another data dir": {**good, "WARDIAN_HOME": str(tmp_path / "elsewhere")},
    }
    for label, env in cases.items():
        base = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
        result = wardian("memory", "save", "x", "--evidence", "y",
                         env={**base, "WARDIAN_HOME": str(wardian_home), **env})
        assert result.returncode == 3, (label, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (label, result.stderr)
    assert db_rows(wardian_home, "SELECT * FROM records") == []
    assert not (tmp_path / "elsewhere").exists()  # nothing written, not even a directory
    assert managed.finish() == 0


CLEARED = ("WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY", "WARDIAN_MEMORY_CONTEXT",
           "WARDIAN_LAUNCH_ID")


def save_for(agent: str) -> None:
    """Give `agent` one record directly in the store."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    store.save(agent, "kept", evidence="e", scope=Scope.agent(), actor="test")


def test_operator_commands_refused_inside_a_managed_process(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed], wardian_home: Path
) -> None:
    enable(cli)
    managed = launch(launches, child)
    listed = managed.run("garden", "memory", "list", "--agent", "ada")
    assert listed["rc"] == 3 and "managed process" in listed["err"]
    # Clearing the environment does not make the agent an operator: its ancestor holds a
    # live capability.
    cleared = managed.run("garden", "memory", "list", "--agent", "ada",
                          unset=("WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY",
                                 "WARDIAN_MEMORY_CONTEXT", "WARDIAN_LAUNCH_ID"))
    assert cleared["rc"] == 3, cleared
    nested = managed.run("agent", "exec", "ada", "--", sys.executable, "-c", "pass")
    assert nested["rc"] == 3
    # Nor can it reach another agent through the operator's registry and settings.
    other = json.loads(invoke(cli, "agent", "add", "bo", "--provider", "codex",
                              "--json").stdout)["id"]
    save_for(other)
    # (With the environment cleared, the harder case; `settings set` also as it is.)
    for argv, unset in ((("agent", "remove", "bo", "--delete-records"), CLEARED),
                        (("agent", "list"), CLEARED), (("agent", "show", "bo"), CLEARED),
                        (("agent", "add", "eve", "--provider", "x"), CLEARED),
                        (("settings", "set", "agent_memory.enabled", "false"), CLEARED),
                        (("settings", "set", "agent_memory.enabled", "false"), ()),
                        (("settings", "get", "agent_memory.enabled"), CLEARED),
                        (("settings", "list"), CLEARED)):
        refused = managed.run(*argv, unset=unset)
        assert refused["rc"] == 3, (argv, unset, refused)
        assert refused["err"].startswith("Error: operator command refused")
        assert refused["err"].count("\n") == 1
    assert managed.finish() == 0
    assert invoke(cli, "garden", "memory", "list", "--agent", "ada").exit_code == 0
    assert invoke(cli, "settings", "get", "agent_memory.enabled").stdout.strip() == "true"
    assert [a["name"] for a in json.loads(invoke(cli, "agent", "list", "--json").stdout)] \
        == ["ada", "bo"]
    assert len(db_rows(wardian_home, f"SELECT * FROM records WHERE agent_id = '{other}'")) == 1


def test_operator_commands_refused_in_a_launch_with_memory_disabled(
    cli: CliRunner, agent_id: str, child: Path, launches: list[Managed]
) -> None:
    # No capability is minted, yet clearing the environment still does not make the agent
    # an operator: the launch itself is recorded.
    managed = launch(launches, child)
    assert managed.hello["WARDIAN_CAPABILITY"] is None
    for argv in (("garden", "memory", "list", "--agent", "ada"),
                 ("settings", "set", "agent_memory.enabled", "true")):
        refused = managed.run(*argv, unset=CLEARED)
        assert refused["rc"] == 3, (argv, refused)
        assert "is an agent launch" in refused["err"]
    assert managed.finish() == 0
    assert invoke(cli, "settings", "get", "agent_memory.enabled").stdout.strip() == "false"


def test_managed_child_finds_this_installations_wardian_on_path(
    cli: CliRunner, agent_id: str
) -> None:
    """The startup context says `wardian memory …`: that must resolve inside the child even
    when the virtual environment is not activated (the new-user trial hit `not found`)."""
    import sysconfig

    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.launch import prepare_launch

    scripts = sysconfig.get_path("scripts")
    if not (Path(scripts) / "wardian").exists():
        pytest.skip("wardian is not installed as a console script in this interpreter")
    launch = prepare_launch(AgentRegistry(open_state_db()).get("ada"),
                            base_env={"PATH": "/usr/bin:/bin"}, **_dbs())
    assert launch.env["PATH"].split(os.pathsep)[0] == scripts
    assert shutil.which("wardian", path=launch.env["PATH"]) == str(Path(scripts) / "wardian")
