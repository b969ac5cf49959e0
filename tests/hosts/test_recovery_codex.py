"""Rollouts of the real Codex CLI whose close Wardian never heard of are recovered at the
next session start: one run before Wardian's hooks were installed, and one killed with
SIGKILL while a tool ran (Codex's SessionEnd never ran)."""

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

MODEL = "gpt-5.1-codex"
EXEC = ("exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "--model", MODEL)


def _codex(host: Host) -> Host:
    host.env["PATH"] = f"{host.exe.parent}:{host.env['PATH']}"
    return host


def _next_session_recovers(host: Host, agent: Agent, earlier: Path) -> None:
    host.endpoint.script(Reply("Good morning."))
    proc = host.run(*EXEC, "Good morning.")
    assert proc.returncode == 0, proc.stderr[-3000:]
    event = wait_closed(agent, earlier)
    assert (event.source, event.provider) == ("recovery", "codex"), event
    assert event.archive_status == "available", event.archive_detail
    assert archived(agent, earlier)
    saved = saved_from(agent, earlier)
    assert any("ruff" in r["text"] for r in saved), saved


def test_a_rollout_before_the_hooks_were_installed_is_recovered(
        codex_host: Host, wardian_home: Path) -> None:
    host = _codex(codex_host)
    agent = setup_agent(host, wardian_home, hooks=False)
    host.endpoint.script(Reply("Noted: ruff first."))
    proc = host.run(*EXEC, RULE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (earlier,) = host.transcripts()
    assert not events(agent), "no hook was installed: nothing may have recorded the close"
    install(host, agent.name)
    _next_session_recovers(host, agent, earlier)


def test_a_rollout_killed_mid_tool_is_recovered(codex_host: Host, wardian_home: Path,
                                                tmp_path: Path) -> None:
    host = _codex(codex_host)
    agent = setup_agent(host, wardian_home)
    started = tmp_path / "tool-started"
    host.endpoint.script(Reply(Shell(f"touch {started}; exec tail -f /dev/null")))
    proc = host.popen(*EXEC, RULE)
    try:
        wait_until(started.exists, what="Codex running the scripted tool",
                   detail=lambda: f"requests {len(host.endpoint.requests)}")
        (earlier,) = host.transcripts()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert not [e for e in events(agent) if e.transcript_path == str(earlier)]
    _next_session_recovers(host, agent, earlier)
