"""Sessions of the real Claude Code whose close Wardian never heard of are recovered at the
next session start: one that ran before Wardian's hooks were installed, and one killed
with SIGKILL while a tool ran (Claude Code's SessionEnd never ran). The next session's
SessionStart starts the recovery sweep; the sweep records the close of the transcript
Claude Code wrote and the builtin curator saves the user's rule from it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import (
    RULE,
    Agent,
    archived,
    events,
    install,
    saved_from,
    setup_agent,
    wait_closed,
)
from tests.waits import wait_until

MODEL = "claude-opus-4-5"


def _next_session_recovers(claude_host: Host, agent: Agent, earlier: Path) -> None:
    """Run one more session with the hooks installed; `earlier`'s close must come from
    the recovery sweep and its rule must be saved."""
    claude_host.endpoint.script(Reply("Good morning."))
    proc = claude_host.run("-p", "Good morning.", "--model", MODEL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    event = wait_closed(agent, earlier)
    assert event.source == "recovery", event
    assert event.archive_status == "available", event.archive_detail
    assert archived(agent, earlier)
    saved = saved_from(agent, earlier)
    assert any("ruff" in r["text"] for r in saved), saved


def test_a_session_before_the_hooks_were_installed_is_recovered(
        claude_host: Host, wardian_home: Path) -> None:
    agent = setup_agent(claude_host, wardian_home, hooks=False)
    claude_host.endpoint.script(Reply("Noted: ruff first."))
    proc = claude_host.run("-p", RULE, "--model", MODEL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (earlier,) = claude_host.transcripts()
    assert not events(agent), "no hook was installed: nothing may have recorded the close"
    install(claude_host, agent.name)
    _next_session_recovers(claude_host, agent, earlier)


def test_a_session_killed_mid_tool_is_recovered(claude_host: Host, wardian_home: Path,
                                                tmp_path: Path) -> None:
    agent = setup_agent(claude_host, wardian_home)
    started = tmp_path / "tool-started"
    # The tool blocks until the test kills the session (the kill, not a timer, ends it).
    claude_host.endpoint.script(Reply(Shell(f"touch {started}; exec tail -f /dev/null")))
    proc = claude_host.popen("-p", RULE, "--model", MODEL, "--allowedTools", "Bash")
    try:
        wait_until(started.exists, what="Claude Code running the scripted tool",
                   detail=lambda: f"requests {len(claude_host.endpoint.requests)}")
        (earlier,) = claude_host.transcripts()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not [e for e in events(agent) if e.transcript_path == str(earlier)]
    _next_session_recovers(claude_host, agent, earlier)
