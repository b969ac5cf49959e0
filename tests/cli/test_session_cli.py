"""`wardian session close` and the public surface of the session-close modules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import SessionEventQueue


def test_session_close_records_and_redelivery_is_same_event(cli: CliRunner, tmp_path: Path) -> None:
    agent = AgentRegistry(open_state_db()).add("coder", "codex")
    (tmp_path / "t.jsonl").write_text("{}\n", encoding="utf-8")
    args = ("session", "close", "--agent", "coder", "--boundary", "worktree_switch",
            "--session-id", "abc", "--transcript", str(tmp_path / "t.jsonl"), "--json")
    first = json.loads(invoke(cli, *args).stdout)
    second = json.loads(invoke(cli, *args).stdout)
    assert first["event_id"] == second["event_id"] and first["agent_id"] == agent.id
    (event,) = SessionEventQueue(open_state_db()).list()
    assert event.provider == "codex" and event.source == "cli"
    assert event.transcript_path == str(tmp_path / "t.jsonl")


@pytest.mark.parametrize(("args", "code", "needle"), [
    (("--agent", "coder", "--boundary", "exit"), 2, "boundary"),
    (("--agent", "ghost", "--boundary", "clear"), 1, "ghost"),
])
def test_session_close_refusals(cli: CliRunner, args: tuple[str, ...], code: int,
                                needle: str) -> None:
    AgentRegistry(open_state_db()).add("coder", "codex")
    res = invoke(cli, "session", "close", *args)
    assert res.exit_code == code and needle in res.stderr
    assert SessionEventQueue(open_state_db()).list() == []


def test_conversation_show_unknown(cli: CliRunner) -> None:
    res = invoke(cli, "conversation", "show", "deadbeef")
    assert res.exit_code == 1 and "conversation" in res.stderr
    assert json.loads(invoke(cli, "conversation", "list", "--json").stdout) == []


def test_public_surfaces_are_pinned() -> None:
    from wardian.invokers import drain, session_close, store
    from wardian.runtime import archives, hooks, provider_launch, session_events

    assert set(store.__all__) == {"INVOKER_KINDS", "Invoker", "InvokerStore", "name_taken",
                                  "read_assignments"}
    assert set(drain.__all__) == {"MAX_EVENT_ATTEMPTS", "DrainReport", "FireLog", "drain_once",
                                  "drain_until", "idempotency_key", "run_worker",
                                  "worker_main"}
    assert set(session_close.__all__) == {"MissingInputs", "ValidatedDefinition",
                                          "validate_definition"}
    assert {"record_session_close", "SessionEventQueue", "daemon_lock", "drain_lock",
            "BOUNDARIES"} <= set(session_events.__all__)
    assert {"ArchiveStore", "ConversationManifest", "TranscriptUnreadable"} <= set(
        archives.__all__)
    assert {"session_end", "session_start", "resolve_agent"} <= set(hooks.__all__)
    assert {"launch_agent", "provider_argv", "find_transcript"} <= set(provider_launch.__all__)
    for module in (store, drain, session_close, session_events, archives, hooks,
                   provider_launch):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


INSIDE = """
import json, os, subprocess, sys
# the agent clears its managed environment: the launch ancestry still names it
env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_") or k == "WARDIAN_HOME"}
def run(*args, stdin=""):
    p = subprocess.run([sys.executable, "-m", "wardian", *args], input=stdin, env=env,
                       capture_output=True, text=True, timeout=120)
    return {"rc": p.returncode, "out": p.stdout, "err": p.stderr}
print(json.dumps({
    "close_other": run("session", "close", "--agent", "coder", "--boundary", "clear"),
    "close_own": run("session", "close", "--agent", "reviewer", "--boundary", "clear",
                     "--session-id", "own"),
    "hook_end": run("hooks", "claude-code", "session-end", "--agent", "coder",
                    stdin=json.dumps({"session_id": "h1", "reason": "clear"})),
    "hook_start": run("hooks", "claude-code", "session-start", "--agent", "coder",
                      stdin=json.dumps({"cwd": os.getcwd()})),
}))
"""


def test_a_managed_agent_reports_and_reads_only_its_own_sessions(cli: CliRunner,
                                                                 tmp_path: Path) -> None:
    """Inside `agent exec reviewer`, environment cleared: `session close --agent coder` is
    refused (exit 3) and the hooks act for reviewer, whatever --agent says — no transcript
    of reviewer's reaches coder's archive, and coder's memory is not shown to reviewer."""
    import os
    import subprocess
    import sys

    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    coder = AgentRegistry(open_state_db()).add("coder", "claude").id
    reviewer = AgentRegistry(open_state_db()).add("reviewer", "claude").id
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    MemoryStore(open_memory_db()).save(
        coder, "coder's secret convention", evidence="user: x", kind="stable", scope=Scope.agent(),
        actor="test")
    proc = subprocess.run(
        [sys.executable, "-m", "wardian", "agent", "exec", "reviewer", "--", sys.executable,
         "-c", INSIDE], env=dict(os.environ), cwd=tmp_path, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["close_other"]["rc"] == 3 and "session close" in out["close_other"]["err"]
    assert out["close_own"]["rc"] == 0, out["close_own"]["err"]
    assert out["hook_end"]["rc"] == 0, out["hook_end"]["err"]
    assert "coder's secret convention" not in out["hook_start"]["out"]
    events = SessionEventQueue(open_state_db()).list()
    assert {e.agent_id for e in events} == {reviewer}
    assert {e.session_id for e in events} >= {"own", "h1"}
    assert not any(e.agent_id == coder for e in events)


@pytest.mark.parametrize("args", [
    ("automation", "session-close", "list"),
    ("automation", "session-close", "show", "x"),
    ("automation", "session-close", "add", "--blueprint", "b", "--name", "n", "--agent", "a",
     "--assignments", "{}"),
    ("automation", "session-close", "enable", "x"),
    ("automation", "session-close", "disable", "x"),
    ("automation", "session-close", "remove", "x"),
    ("automation", "session-close", "history", "x"),
    ("conversation", "list"),
    ("conversation", "show", "x"),
    ("hooks", "install", "claude-code", "--settings", "s.json"),
])
def test_operator_commands_refused_inside_a_managed_process(cli: CliRunner, tmp_path: Path,
                                                            args: tuple[str, ...]) -> None:
    """CLI.md marks these O: an agent may not read other agents' conversations or invokers,
    create automations that spend the user's quota, or install hooks."""
    res = invoke(cli, *args, env={"WARDIAN_AGENT_ID": "0" * 36})
    assert res.exit_code == 3, res.output
    assert "managed process" in res.stderr
    assert not (tmp_path / "s.json").exists()
