"""Hooks on every host (Claude Code, Codex, Gemini CLI): install next to other agents and
other hooks, uninstall byte-for-byte, the documented payload shapes, workspace mapping, and
a real corpus transcript archived through the installed SessionEnd hook."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.hook_install import install_hooks, installed_hooks
from wardian.runtime.session_events import SessionEventQueue

# The payloads each host documents (docs/hosts.md): Claude Code hooks reference; Codex
# codex-rs/hooks/schema/generated/session-start.command.input.schema.json; Gemini CLI
# docs/hooks/reference.md (base fields + source / reason).
CLAUDE_START = {"session_id": "0b6c1f4e-aaaa-4bbb-8ccc-123456789abc",
                "transcript_path": "/home/u/.claude/projects/-w/0b6c.jsonl", "cwd": "/w",
                "hook_event_name": "SessionStart", "source": "startup",
                "permission_mode": "default", "model": "claude-sonnet-4-6"}
CODEX_START = {"session_id": "019c5b35-060f-7693-b14f-9f8f75d4aea6", "transcript_path": None,
               "cwd": "/w", "hook_event_name": "SessionStart", "model": "gpt-5.2-codex",
               "permission_mode": "default", "source": "startup"}
GEMINI_START = {"session_id": "g-1", "transcript_path": "/home/u/.gemini/tmp/h/chats/s.json",
                "cwd": "/w", "hook_event_name": "SessionStart",
                "timestamp": "2026-12-01T08:00:00Z", "source": "startup"}
GEMINI_END = {**GEMINI_START, "hook_event_name": "SessionEnd", "reason": "exit"}
GEMINI_END.pop("source")


@pytest.fixture
def hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each host's config dir inside tmp_path (the variables the hosts document)."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gem"))
    return tmp_path


def _payload(base: dict[str, Any], cwd: Path) -> str:
    return json.dumps({**base, "cwd": str(cwd)})


ORIGINALS = {
    "two-space": ('{\n  "model": "opus",\n  "hooks": {\n    "PreToolUse": [\n      {\n'
                  '        "matcher": "Bash",\n        "hooks": [\n          {\n'
                  '            "type": "command",\n            "command": "check.sh"\n'
                  '          }\n        ]\n      }\n    ]\n  },\n  "note": "café ☕"\n}\n'),
    "four-space": '{\n    "theme": "dark",\n    "env": {\n        "A": "1"\n    }\n}',
    "compact": '{"model":"opus","env":{"A":"1"}}',
    "absent": None,
}


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("style", sorted(ORIGINALS))
def test_agents_coexist_and_uninstall_is_byte_for_byte(cli: CliRunner, hosts: Path, host: str,
                                                       style: str) -> None:
    for name in ("ada", "bob"):
        AgentRegistry(open_state_db()).add(name, "builtin")
    from wardian.runtime.hook_install import HOSTS

    path = HOSTS[host].settings()
    original = ORIGINALS[style]
    if original is not None:
        path.parent.mkdir(parents=True)
        path.write_text(original, encoding="utf-8")
    assert invoke(cli, "hooks", "install", host, "--agent", "ada").exit_code == 0
    after_ada = path.read_bytes()
    res = invoke(cli, "hooks", "install", host, "--agent", "bob", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["agents"] == ["ada", "bob"]
    hooks = installed_hooks(host)
    assert hooks and all(h.agents == ("ada", "bob") for h in hooks)  # ada kept
    from wardian.runtime.hook_install import supported_events

    assert {h.host_event for h in hooks} == set(supported_events(HOSTS[host])[0])
    assert invoke(cli, "hooks", "install", host, "--uninstall", "--agent", "bob").exit_code == 0
    assert path.read_bytes() == after_ada
    assert invoke(cli, "hooks", "install", host, "--uninstall").exit_code == 0
    if original is None:
        assert json.loads(path.read_text()) == {}
    else:
        assert path.read_text(encoding="utf-8") == original


def test_host_specific_entries(hosts: Path) -> None:
    AgentRegistry(open_state_db()).add("ada", "builtin")
    install_hooks("codex", agents=["ada"])
    codex = json.loads((hosts / "codex" / "hooks.json").read_text())
    assert set(codex["hooks"]) == {"SessionStart"}  # no codex on PATH: no SessionEnd
    install_hooks("gemini", agents=["ada"])
    gemini = json.loads((hosts / "gem" / ".gemini" / "settings.json").read_text())
    (entry,) = gemini["hooks"]["SessionEnd"][0]["hooks"]
    assert entry["timeout"] == 10_000 and entry["name"] == "wardian-session-end"  # ms


def _run(command: str, stdin: str, cwd: Path, env_home: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "WARDIAN_HOME": str(env_home)}
    return subprocess.run(shlex.split(command), input=stdin, text=True, capture_output=True,
                          cwd=cwd, env=env, timeout=60, check=False)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell quoting")
@pytest.mark.parametrize(("host", "payload"), [("claude-code", CLAUDE_START),
                                               ("codex", CODEX_START),
                                               ("gemini", GEMINI_START)])
def test_session_start_answers_each_host_with_recall_and_the_loaded_line(
        cli: CliRunner, hosts: Path, wardian_home: Path, host: str,
        payload: dict[str, Any]) -> None:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    agent = AgentRegistry(open_state_db()).add("ada", "builtin")
    install_hooks(host, agents=["ada"])
    (command,) = [h.command for h in installed_hooks(host) if h.event == "session-start"]
    project = hosts / "project"
    project.mkdir()
    # memory disabled: Gemini still gets JSON ({}), the others nothing
    proc = _run(command, _payload(payload, project), project, wardian_home)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.strip() == ("{}" if host == "gemini" else "")
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    for text in ("Prefer ruff over flake8", "Run tests with -n 2 on this machine"):
        MemoryStore(open_memory_db()).save(agent.id, text, evidence="user said so", kind="stable",
                                           scope=Scope.agent(), actor="test")
    proc = _run(command, _payload(payload, project), project, wardian_home)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Prefer ruff over flake8" in answer["hookSpecificOutput"]["additionalContext"]
    assert answer["systemMessage"] == ("Memory loaded · 2 records · `wardian garden memory "
                                       "loaded --agent ada --last` to expand")


def test_the_workspace_decides_between_installed_agents(cli: CliRunner, hosts: Path) -> None:
    one, two = hosts / "one", hosts / "two" / "deep"
    one.mkdir()
    two.mkdir(parents=True)
    ada = AgentRegistry(open_state_db()).add("ada", "builtin", workspace=str(one))
    bob = AgentRegistry(open_state_db()).add("bob", "builtin", workspace=str(hosts / "two"))
    end = {"session_id": "s", "transcript_path": None, "hook_event_name": "SessionEnd",
           "reason": "other"}
    for cwd, session, expected in ((two, "s-bob", bob.id), (one, "s-ada", ada.id)):
        res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "ada",
                     "--agent", "bob", input=json.dumps({**end, "cwd": str(cwd),
                                                         "session_id": session}))
        assert res.exit_code == 0, res.output
        (event,) = [e for e in SessionEventQueue(open_state_db()).list() if e.session_id == session]
        assert event.agent_id == expected
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "ada", "--agent", "bob",
                 input=json.dumps({**end, "cwd": str(hosts), "session_id": "s-none"}))
    assert res.exit_code == 0 and "no agent for" in res.stderr
    assert not [e for e in SessionEventQueue(open_state_db()).list() if e.session_id == "s-none"]


def test_gemini_session_end_records_the_documented_reason(cli: CliRunner, hosts: Path) -> None:
    AgentRegistry(open_state_db()).add("ada", "builtin")
    res = invoke(cli, "hooks", "gemini", "session-end", "--agent", "ada",
                 input=json.dumps(GEMINI_END))
    assert res.exit_code == 0 and json.loads(res.stdout) == {}
    (event,) = SessionEventQueue(open_state_db()).list()
    assert (event.boundary, event.provider, event.session_id) == ("shutdown", "gemini", "g-1")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell quoting")
def test_installed_session_end_archives_a_real_corpus_transcript(
        cli: CliRunner, hosts: Path, wardian_home: Path, corpus_dir: Path) -> None:
    from wardian.invokers.drain import drain_once
    from wardian.runtime.archives import ArchiveStore

    agent = AgentRegistry(open_state_db()).add("ada", "claude")
    assert invoke(cli, "settings", "set", "conversation_logging.enabled", "true").exit_code == 0
    source = corpus_dir / "claude-code" / "entire-mit-license-entire-inc.jsonl"
    transcript = hosts / "session.jsonl"
    shutil.copyfile(source, transcript)  # a temp copy; nothing of the corpus is kept
    install_hooks("claude-code", agents=["ada"])
    (command,) = [h.command for h in installed_hooks("claude-code") if h.event == "session-end"]
    payload = {"session_id": "corpus-1", "transcript_path": str(transcript), "cwd": str(hosts),
               "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    proc = _run(command, json.dumps(payload), hosts, wardian_home)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == ""
    drain_once()
    (conv,) = ArchiveStore(open_state_db()).list(agent_id=agent.id)
    assert conv.message_count > 0 and conv.session_id == "corpus-1"


@pytest.mark.parametrize("host", ["claude-code", "gemini"])
def test_uninstall_of_one_agent_says_which_agent_left_which_hooks(
    cli: CliRunner, hosts: Path, host: str
) -> None:
    """`--uninstall --agent bob` keeps the entries for ada: the message names bob and the
    events whose entries he left (before: "Claude Code hooks updated removed from …")."""
    for name in ("ada", "bob"):
        AgentRegistry(open_state_db()).add(name, "builtin")
    for name in ("ada", "bob"):
        assert invoke(cli, "hooks", "install", host, "--agent", name).exit_code == 0
    res = invoke(cli, "hooks", "install", host, "--uninstall", "--agent", "bob")
    assert res.exit_code == 0, res.output
    first = res.stdout.splitlines()[0]
    assert "agent bob removed from the SessionStart, SessionEnd hooks in" in first, first
    assert "updated" not in first
    assert "Agents: ada" in res.stdout
    res = invoke(cli, "hooks", "install", host, "--uninstall", "--agent", "bob")
    assert res.stdout.startswith("Nothing to change in"), res.stdout


def _fake_codex(folder: Path, version: str) -> None:
    """A `codex` on PATH that prints `version` like ``codex --version`` does."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "codex"
    exe.write_text(f"#!/bin/sh\necho 'codex-cli {version}'\n")
    exe.chmod(0o755)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script as codex")
@pytest.mark.parametrize(("version", "events"), [
    ("0.144.2", {"SessionStart"}), ("0.145.0", {"SessionStart", "SessionEnd"}),
    ("0.171.0", {"SessionStart", "SessionEnd"})])
def test_codex_session_end_is_installed_where_the_version_has_it(
        cli: CliRunner, hosts: Path, monkeypatch: pytest.MonkeyPatch, version: str,
        events: set[str]) -> None:
    AgentRegistry(open_state_db()).add("ada", "builtin")
    _fake_codex(hosts / "bin", version)
    monkeypatch.setenv("PATH", f"{hosts / 'bin'}:/usr/bin:/bin")
    res = invoke(cli, "hooks", "install", "codex", "--agent", "ada")
    assert res.exit_code == 0, res.output
    codex = json.loads((hosts / "codex" / "hooks.json").read_text())
    assert set(codex["hooks"]) == events
    assert "/hooks" in res.stdout and "trust" in res.stdout  # the user is told plainly
    assert ("SessionEnd was not installed" in res.stdout) == (events == {"SessionStart"})
    assert invoke(cli, "hooks", "install", "codex", "--uninstall").exit_code == 0
    assert json.loads((hosts / "codex" / "hooks.json").read_text()) == {}
