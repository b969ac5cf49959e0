"""Agent hooks: Claude Code SessionStart/SessionEnd and Gemini SessionEnd through the real CLI,
and `hooks install claude-code` idempotency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import invoke

from wardian.runtime.agents import AgentRegistry
from wardian.runtime.hooks import boundary_for_reason, install_claude_code
from wardian.runtime.session_events import SessionEventQueue


@pytest.fixture
def agent() -> str:
    return AgentRegistry().add("coder", "claude").id


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


def test_claude_session_end_records_one_event_per_close(cli, agent) -> None:
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                 input=_end_payload("clear"))
    assert res.exit_code == 0, res.output
    assert res.stdout == ""
    again = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                   input=_end_payload("clear"))
    assert again.exit_code == 0
    events = SessionEventQueue().list()
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
    assert {e.boundary for e in SessionEventQueue().list()} == {"clear", "shutdown"}


def test_session_end_without_agent_or_bad_json_fails_cleanly(cli, agent) -> None:
    res = invoke(cli, "hooks", "claude-code", "session-end", input=_end_payload("clear"))
    assert res.exit_code == 2 and "no agent" in res.stderr
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder", input="{nope")
    assert res.exit_code == 2 and "not JSON" in res.stderr
    assert SessionEventQueue().list() == []


def test_gemini_session_end_prints_json(cli, agent) -> None:
    payload = {"session_id": "g1", "transcript_path": None, "cwd": "/w",
               "hook_event_name": "SessionEnd", "timestamp": "2026-11-29T20:00:00Z",
               "reason": "exit"}
    res = invoke(cli, "hooks", "gemini", "session-end", "--agent", agent,
                 input=json.dumps(payload))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {}
    (ev,) = SessionEventQueue().list()
    assert (ev.provider, ev.boundary, ev.transcript_path) == ("gemini", "shutdown", None)


def _start_payload(cwd: str) -> str:
    return json.dumps({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": "startup",
                       "model": "claude-sonnet-4-6"})


def test_session_start_prints_additional_context_and_records_loaded(cli, agent, tmp_path) -> None:
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

    MemoryStore().save(agent, "Use ruff for linting, never flake8", evidence="user: use ruff",
                       kind="stable", scope=Scope.agent(), actor="test")
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)))
    ctx = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Use ruff for linting" in ctx
    (loaded,) = LoadedEvents(MemoryStore().conn).list(agent)
    assert loaded.source == "hook" and loaded.context == ctx
    # inside a managed launch the context was already passed: nothing printed
    res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "coder",
                 input=_start_payload(str(tmp_path)),
                 env={"WARDIAN_MEMORY_CONTEXT": str(tmp_path / "ctx.md")})
    assert res.stdout == ""


def test_install_uninstall_idempotent_and_preserves_other_keys(cli, agent, tmp_path) -> None:
    settings = tmp_path / "settings.json"
    original = {
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
    assert len(start_cmds) == 2 and start_cmds[1].endswith(
        " claude-code session-start --agent coder")
    assert len(end_cmds) == 1
    assert end_cmds[0].endswith(" claude-code session-end --agent coder")
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


def test_install_into_missing_file_and_refuses_broken_json(tmp_path) -> None:
    target = tmp_path / "sub" / "settings.json"
    result = install_claude_code(target)
    assert result.changed and set(json.loads(target.read_text())["hooks"]) == {
        "SessionStart", "SessionEnd"}
    install_claude_code(target, uninstall=True)
    assert json.loads(target.read_text()) == {}
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    from wardian.errors import ValidationError

    with pytest.raises(ValidationError):
        install_claude_code(broken)
    assert broken.read_text() == "{ not json"


def test_install_unknown_agent_refused(cli, tmp_path: Path) -> None:
    res = invoke(cli, "hooks", "install", "claude-code", "--agent", "ghost",
                 "--settings", str(tmp_path / "s.json"))
    assert res.exit_code == 1 and not (tmp_path / "s.json").exists()
