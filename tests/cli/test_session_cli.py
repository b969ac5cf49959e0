"""`wardian session close` and the public surface of the session-close modules."""

from __future__ import annotations

import json

import pytest
from tests.conftest import invoke

from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import SessionEventQueue


def test_session_close_records_and_redelivery_is_same_event(cli, tmp_path) -> None:
    agent = AgentRegistry().add("coder", "codex")
    args = ("session", "close", "--agent", "coder", "--boundary", "worktree_switch",
            "--session-id", "abc", "--transcript", str(tmp_path / "t.jsonl"), "--json")
    first = json.loads(invoke(cli, *args).stdout)
    second = json.loads(invoke(cli, *args).stdout)
    assert first["event_id"] == second["event_id"] and first["agent_id"] == agent.id
    (event,) = SessionEventQueue().list()
    assert event.provider == "codex" and event.source == "cli"
    assert event.transcript_path == str(tmp_path / "t.jsonl")


@pytest.mark.parametrize(("args", "code", "needle"), [
    (("--agent", "coder", "--boundary", "exit"), 2, "boundary"),
    (("--agent", "ghost", "--boundary", "clear"), 1, "ghost"),
])
def test_session_close_refusals(cli, args, code, needle) -> None:
    AgentRegistry().add("coder", "codex")
    res = invoke(cli, "session", "close", *args)
    assert res.exit_code == code and needle in res.stderr
    assert SessionEventQueue().list() == []


def test_conversation_show_unknown(cli) -> None:
    res = invoke(cli, "conversation", "show", "deadbeef")
    assert res.exit_code == 1 and "conversation" in res.stderr
    assert json.loads(invoke(cli, "conversation", "list", "--json").stdout) == []


def test_public_surfaces_are_pinned() -> None:
    from wardian.invokers import drain, session_close, store
    from wardian.runtime import archives, hooks, provider_launch, session_events

    assert set(store.__all__) == {"INVOKER_KINDS", "Invoker", "InvokerStore"}
    assert set(drain.__all__) == {"MAX_EVENT_ATTEMPTS", "DrainReport", "FireLog", "drain_once",
                                  "idempotency_key", "run_worker", "worker_main"}
    assert set(session_close.__all__) == {"ValidatedDefinition", "add_session_close",
                                          "history", "set_enabled", "summarise",
                                          "validate_definition"}
    assert {"record_session_close", "SessionEventQueue", "daemon_lock", "drain_lock",
            "BOUNDARIES"} <= set(session_events.__all__)
    assert {"ArchiveStore", "ConversationManifest", "TranscriptUnreadable"} <= set(
        archives.__all__)
    assert {"install_claude_code", "session_end", "session_start"} <= set(hooks.__all__)
    assert {"launch_agent", "provider_argv", "find_transcript"} <= set(provider_launch.__all__)
    for module in (store, drain, session_close, session_events, archives, hooks,
                   provider_launch):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"
