"""Agent hooks: Claude Code SessionStart/SessionEnd and Gemini SessionEnd through the real CLI,
and `hooks install claude-code` idempotency."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.hook_install import install_hooks
from wardian.runtime.hooks import boundary_for_reason
from wardian.runtime.session_events import SessionEventQueue


@pytest.fixture
def agent() -> str:
    return AgentRegistry(open_state_db()).add("coder", "claude").id


def _end_payload(reason: str, session: str = "0b6c1f4e-aaaa-4bbb-8ccc-123456789abc",
                 transcript: str | None = "/tmp/x.jsonl") -> str:
    # The SessionEnd input documented for Claude Code hooks.
    return json.dumps({
        "session_id": session,
        "transcript_path": transcript,
        "cwd": "/home/user/project",
        "hook_event_name": "SessionEnd",
        "reason": reason,
        "permission_mode": "default",
    })


@pytest.mark.parametrize(("reason", "boundary"), [
    ("clear", "clear"), ("logout", "shutdown"), ("prompt_input_exit", "shutdown"),
    ("other", "shutdown"), ("resume", "shutdown"), ("", "shutdown"),
])
def test_reason_mapping(reason: str, boundary: str) -> None:
    assert boundary_for_reason(reason) == boundary


def test_claude_session_end_records_one_event_per_close(cli: CliRunner, agent: str) -> None:
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                 input=_end_payload("clear"))
    assert res.exit_code == 0, res.output
    assert res.stdout == ""
    again = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                   input=_end_payload("clear"))
    assert again.exit_code == 0
    events = SessionEventQueue(open_state_db()).list()
    assert len(events) == 1
    ev = events[0]
    assert (ev.agent_id, ev.boundary, ev.session_id, ev.source, ev.provider) == (
        agent, "clear", "0b6c1f4e-aaaa-4bbb-8ccc-123456789abc", "hook", "claude-code")
    assert ev.transcript_path == "/tmp/x.jsonl" and ev.workspace == "/home/user/project"
    assert ev.deliveries == 2
    # the agent can come from the managed environment instead of --agent
    res = invoke(cli, "hooks", "claude-code", "session-end",
                 input=_end_payload("logout", session="s2"), env={"WARDIAN_AGENT_ID": agent})
    assert res.exit_code == 0, res.output
    assert {e.boundary for e in SessionEventQueue(open_state_db()).list()} == {"clear", "shutdown"}
    # hooks installed with --agent coder, inside another agent's managed launch: the
    # managed environment names the session's agent
    other = AgentRegistry(open_state_db()).add("reviewer", "claude").id
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                 input=_end_payload("logout", session="s3"), env={"WARDIAN_AGENT_ID": other})
    assert res.exit_code == 0, res.output
    (ev3,) = [e for e in SessionEventQueue(open_state_db()).list() if e.session_id == "s3"]
    assert ev3.agent_id == other


def test_session_end_without_agent_fails_cleanly_and_bad_json_still_records(cli: CliRunner,
                                                                            agent: str) -> None:
    res = invoke(cli, "hooks", "claude-code", "session-end", input=_end_payload("clear"))
    assert res.exit_code == 2 and "no agent" in res.stderr
    assert SessionEventQueue(open_state_db()).list() == []
    # the session did end: unusable input is a warning, the close is still recorded
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder", input="{nope")
    assert res.exit_code == 0 and "not valid JSON" in res.stderr and "Warning" in res.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.boundary, ev.transcript_path, ev.source) == ("shutdown", None, "hook")


def test_session_end_ignores_fields_of_the_wrong_type(cli: CliRunner, agent: str) -> None:
    payload = {"session_id": 42, "reason": ["clear"], "transcript_path": {"a": 1}, "cwd": 3}
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                 input=json.dumps(payload))
    assert res.exit_code == 0, res.output
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.session_id, ev.boundary, ev.transcript_path, ev.workspace) == (
        "42", "shutdown", None, None)


def test_gemini_session_end_prints_json(cli: CliRunner, agent: str) -> None:
    payload = {"session_id": "g1", "transcript_path": None, "cwd": "/w",
               "hook_event_name": "SessionEnd", "timestamp": "2026-11-29T20:00:00Z",
               "reason": "exit"}
    res = invoke(cli, "hooks", "gemini", "session-end", "--agent", agent,
                 input=json.dumps(payload))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {}
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.provider, ev.boundary, ev.transcript_path) == ("gemini", "shutdown", None)


def _start_payload(cwd: str) -> str:
    return json.dumps({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": "startup",
                       "model": "claude-sonnet-4-6"})


def test_session_start_prints_additional_context_and_records_loaded(cli: CliRunner, agent: str,
                                                                    tmp_path: Path) -> None:
    from wardian.memory.db import open_memory_db
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.store import MemoryStore

    # disabled: prints nothing
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)))
    assert res.exit_code == 0 and res.stdout == ""
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    # enabled, no records yet: the instructions still come, no Memory loaded event
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)))
    out = json.loads(res.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "coder" in out["hookSpecificOutput"]["additionalContext"]
    from wardian.memory.models import Scope

    MemoryStore(open_memory_db()).save(
        agent, "Use ruff for linting, never flake8", evidence="user: use ruff", kind="stable",
        scope=Scope.agent(), actor="test")
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)))
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Use ruff for linting" in ctx
    (loaded,) = LoadedEvents(MemoryStore(open_memory_db()).conn).list(agent)
    assert loaded.source == "hook" and loaded.context == ctx
    # inside a managed launch the context was already passed: nothing printed
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)),
                 env={"WARDIAN_MEMORY_CONTEXT": str(tmp_path / "ctx.md")})
    assert res.stdout == ""


def test_install_uninstall_idempotent_and_preserves_other_keys(cli: CliRunner, agent: str,
                                                               tmp_path: Path,
                                                               wardian_home: Path) -> None:
    settings = tmp_path / "settings.json"
    original: dict[str, Any] = {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [
                {"type": "command", "command": "echo hi"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "check.sh", "timeout": 5}]}],
        },
    }
    settings.write_text(json.dumps(original, indent=2))
    res = invoke(cli, "hooks", "install", "claude-code", "--agent", "coder",
                 "--settings", str(settings))
    assert res.exit_code == 0, res.output
    once = json.loads(settings.read_text())
    assert once["model"] == "opus" and once["permissions"] == original["permissions"]
    assert once["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert once["hooks"]["SessionStart"][0] == original["hooks"]["SessionStart"][0]
    start_cmds = [h["command"] for g in once["hooks"]["SessionStart"] for h in g["hooks"]]
    end_cmds = [h["command"] for g in once["hooks"]["SessionEnd"] for h in g["hooks"]]
    home = shlex.quote(str(wardian_home))
    assert len(start_cmds) == 2 and start_cmds[1].endswith(
        f" claude-code session-start --agent coder --home {home}")
    assert len(end_cmds) == 1
    assert end_cmds[0].endswith(f" claude-code session-end --agent coder --home {home}")
    mtime = settings.stat().st_mtime_ns
    res = invoke(cli, "hooks", "install", "claude-code", "--agent", "coder",
                 "--settings", str(settings), "--json")
    assert json.loads(res.stdout)["changed"] is False
    assert json.loads(settings.read_text()) == once and settings.stat().st_mtime_ns == mtime
    res = invoke(cli, "hooks", "install", "claude-code", "--settings", str(settings),
                 "--uninstall")
    assert res.exit_code == 0, res.output
    assert json.loads(settings.read_text()) == original
    res = invoke(cli, "hooks", "install", "claude-code", "--settings", str(settings),
                 "--uninstall", "--json")
    assert json.loads(res.stdout)["changed"] is False


def test_install_into_missing_file_and_refuses_broken_json(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "settings.json"
    result = install_hooks("claude-code", target)
    assert result.changed and set(json.loads(target.read_text())["hooks"]) == {
        "SessionStart", "SessionEnd"}
    install_hooks("claude-code", target, uninstall=True)
    assert json.loads(target.read_text()) == {}
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    from wardian.errors import ValidationError

    with pytest.raises(ValidationError):
        install_hooks("claude-code", broken)
    assert broken.read_text() == "{ not json"


def test_install_cli_refuses_a_settings_file_with_comments(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    text = '// mine\n{"model": "opus",}\n'
    target.write_text(text)
    res = invoke(cli, "hooks", "install", "claude-code", "--settings", str(target))
    assert res.exit_code == 2
    assert f"{target}: the settings file is not valid JSON" in res.stderr
    assert "Wardian will not overwrite it" in res.stderr and target.read_text() == text


def test_install_refuses_hooks_that_are_not_a_list(tmp_path: Path) -> None:
    from wardian.errors import ValidationError

    target = tmp_path / "settings.json"
    target.write_text('{"hooks": {"SessionEnd": "echo bye"}}')
    with pytest.raises(ValidationError, match=r"hooks\.SessionEnd"):
        install_hooks("claude-code", target)
    assert target.read_text() == '{"hooks": {"SessionEnd": "echo bye"}}'


def test_install_unknown_agent_refused(cli: CliRunner, tmp_path: Path) -> None:
    res = invoke(cli, "hooks", "install", "claude-code", "--agent", "ghost",
                 "--settings", str(tmp_path / "s.json"))
    assert res.exit_code == 1 and not (tmp_path / "s.json").exists()


# --- the installed entry point, run the way Claude Code runs it ---------------------------


def _installed(tmp_path: Path, agent: str | None = "coder") -> dict[str, str]:
    settings = tmp_path / "claude" / "settings.json"
    install_hooks("claude-code", settings, agents=[agent] if agent else [])
    data = json.loads(settings.read_text())
    return {event: data["hooks"][event][0]["hooks"][0]["command"]
            for event in ("SessionStart", "SessionEnd")}


def _shell(command: str, stdin: str, cwd: Path, home: Path,
           extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Outside the venv: a bare PATH, no VIRTUAL_ENV, the project's folder as cwd.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home.parent), "WARDIAN_HOME": str(home),
           **(extra_env or {})}
    if os.environ.get("PYTHONPATH"):  # tests run against a source tree not installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run(command, shell=True, input=stdin, text=True, capture_output=True,
                          cwd=cwd, env=env, timeout=60)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_installed_hook_runs_outside_the_venv_unshadowed_by_the_project(
        agent: str, tmp_path: Path, wardian_home: Path) -> None:
    command = _installed(tmp_path)["SessionEnd"]
    assert command.startswith(shlex.quote(os.path.abspath(sys.executable)) + " -P -c ")
    project = tmp_path / "project"
    (project / "wardian").mkdir(parents=True)
    (project / "wardian" / "__init__.py").write_text("raise SystemExit('shadowed wardian')\n")
    (project / "json.py").write_text("raise SystemExit('shadowed json')\n")
    proc = _shell(command, _end_payload("clear"), project, wardian_home)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.agent_id, ev.boundary, ev.source) == (agent, "clear", "hook")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_installed_hook_never_fails_the_session(agent: str, tmp_path: Path,
                                                wardian_home: Path) -> None:
    commands = _installed(tmp_path, agent=None)
    # no agent anywhere: exit 0, the reason on stderr
    proc = _shell(commands["SessionEnd"], _end_payload("clear"), tmp_path, wardian_home)
    assert proc.returncode == 0 and "Error: no agent for this session" in proc.stderr
    assert "Traceback" not in proc.stderr
    # an unknown agent
    proc = _shell(commands["SessionEnd"] + " --agent ghost", "{}", tmp_path, wardian_home)
    assert proc.returncode == 0 and "no agent named or with id 'ghost'" in proc.stderr
    assert SessionEventQueue(open_state_db()).list() == []
    # garbage input: warned about, and the close is still recorded
    proc = _shell(commands["SessionEnd"], "\x00garbage{", tmp_path, wardian_home,
                  {"WARDIAN_AGENT_ID": agent})
    assert proc.returncode == 0 and "warning" in proc.stderr and "not valid JSON" in proc.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert ev.boundary == "shutdown" and ev.agent_id == agent
    # the data dir is unusable (a file): not a WardianError, still no traceback, exit 0
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    start = commands["SessionStart"].replace(shlex.quote(str(wardian_home)),
                                             shlex.quote(str(blocked / "home")))
    proc = _shell(start, "{}", tmp_path, blocked / "home", {"WARDIAN_AGENT_ID": agent})
    assert proc.returncode == 0 and proc.stdout == ""
    assert "Error:" in proc.stderr and "Traceback" not in proc.stderr
    # bad arguments
    proc = _shell(commands["SessionEnd"].replace("session-end", "session-middle"), "{}",
                  tmp_path, wardian_home)
    assert proc.returncode == 0 and "has no session-middle hook" in proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
@pytest.mark.parametrize(("extra", "says"), [
    (" --agent", "bad hook arguments"),
    (" --agent --home /x", "bad hook arguments"),
    (" --home /a --home /b", "bad hook arguments"),
    (" --agnet coder", "bad hook arguments"),
    (" extra", "bad hook arguments"),
    (" --agent=ghost", "no agent named or with id 'ghost'"),  # the `=` form is read
])
def test_an_installed_hook_with_a_bad_argument_line_says_so_and_exits_0(
        agent: str, tmp_path: Path, wardian_home: Path, extra: str, says: str) -> None:
    command = _installed(tmp_path, agent=None)["SessionEnd"]
    proc = _shell(command + extra, _end_payload("clear"), tmp_path, wardian_home)
    assert proc.returncode == 0, proc
    assert proc.stderr.startswith("wardian hook") and says in proc.stderr, proc.stderr
    if says == "bad hook arguments":
        assert "reinstall the hooks with `wardian hooks install HOST`" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert SessionEventQueue(open_state_db()).list() == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_installed_session_start_writes_utf8_under_a_c_locale(agent: str, tmp_path: Path,
                                                              wardian_home: Path,
                                                              cli: CliRunner) -> None:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    MemoryStore(open_memory_db()).save(
        agent, "Écrire les messages en français — toujours", evidence="user", kind="stable",
        scope=Scope.agent(), actor="test")
    command = _installed(tmp_path)["SessionStart"]
    proc = subprocess.run(command, shell=True, input=_start_payload(str(tmp_path)).encode(),
                          capture_output=True, cwd=tmp_path, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "WARDIAN_HOME": str(wardian_home),
                               "LC_ALL": "C", "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    context = json.loads(proc.stdout.decode("utf-8"))["hookSpecificOutput"]["additionalContext"]
    assert "Écrire les messages en français" in context


def test_session_start_outside_a_launch_says_memory_is_read_only(cli: CliRunner, agent: str,
                                                                 tmp_path: Path) -> None:
    # A Claude Code session the user started (hooks installed, no `agent launch`): no
    # capability, so the context must not tell the agent to run `memory save`, which fails.
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)))
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "wardian memory save" not in ctx
    assert "read-only" in ctx and "`wardian agent launch NAME`" in ctx
    assert "consolidated into memory at session end" in ctx
    # ... and what it would have said is indeed refused here, pointing at `agent launch`
    res = invoke(cli, "memory", "save", "x", "--evidence", "y")
    assert res.exit_code == 3
    assert "wardian agent launch" in res.stderr and "wardian agent exec" in res.stderr
    # with a capability in the environment (a managed launch) the full instructions stay
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)), env={"WARDIAN_CAPABILITY": "tok"})
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "wardian memory save" in ctx and "read-only" not in ctx


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_install_embeds_wardian_home_so_the_hook_uses_that_data_dir(
        cli: CliRunner, agent: str, tmp_path: Path, wardian_home: Path) -> None:
    # Claude Code runs hooks with its own environment, which need not have WARDIAN_HOME.
    settings = tmp_path / "claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n')
    res = invoke(cli, "hooks", "install", "claude-code", "--agent", "coder",
                 "--settings", str(settings))
    assert res.exit_code == 0, res.output
    assert f"WARDIAN_HOME={wardian_home}" in res.stdout and "--home" in res.stdout
    data = json.loads(settings.read_text())
    command = data["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    assert shlex.split(command)[-2:] == ["--home", str(wardian_home)]
    fake_home = tmp_path / "user"
    fake_home.mkdir()
    proc = subprocess.run(command, shell=True, input=_end_payload("clear"), text=True,
                          capture_output=True, cwd=tmp_path, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(fake_home)})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.agent_id, ev.boundary) == (agent, "clear")
    assert list(fake_home.rglob("*.db")) == []  # nothing written to the default data dir
    # uninstall removes exactly what install added
    res = invoke(cli, "hooks", "install", "claude-code", "--settings", str(settings),
                 "--uninstall")
    assert res.exit_code == 0 and json.loads(settings.read_text()) == {"model": "opus"}
