"""opencode sessions whose close Wardian never heard of are recovered at the next session
start: one that ran before Wardian's plugin was installed, and one killed with SIGKILL
while a tool ran (its exit handler, which runs SessionEnd, never ran). The next session's
SessionStart starts the recovery sweep, which exports the earlier session from opencode's
database and records its close; the builtin curator saves the user's rule from it."""

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
    opencode_exports,
    saved_from,
    setup_agent,
    wait_closed,
)
from tests.waits import wait_until

MODEL = "scripted/scripted-model"


def _next_session_recovers(host: Host, agent: Agent, home: Path) -> None:
    """Run one more session with the plugin installed; the earlier session's close must
    come from the recovery sweep and its rule must be saved."""
    host.endpoint.script(Reply("Good morning."))
    proc = host.run("run", "--model", MODEL, "Good morning.")
    assert proc.returncode == 0, proc.stderr[-3000:]
    wait_until(lambda: len(opencode_exports(home)) == 2, what="both sessions exported")
    recovered = [p for p in opencode_exports(home)
                 if "Good morning." not in p.read_text(encoding="utf-8")]
    assert len(recovered) == 1, opencode_exports(home)
    earlier = recovered[0]
    event = wait_closed(agent, earlier)
    assert event.source == "recovery", event
    assert event.archive_status == "available", event.archive_detail
    assert archived(agent, earlier)
    saved = saved_from(agent, earlier)
    assert any("ruff" in r["text"] for r in saved), saved


def test_a_session_before_the_plugin_was_installed_is_recovered(
        opencode_host: Host, wardian_home: Path) -> None:
    agent = setup_agent(opencode_host, wardian_home, hooks=False)
    opencode_host.endpoint.script(Reply("Noted: ruff first."))
    proc = opencode_host.run("run", "--model", MODEL, RULE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not events(agent), "no plugin was installed: nothing may have recorded the close"
    install(opencode_host, agent.name)
    _next_session_recovers(opencode_host, agent, wardian_home)


def test_a_session_killed_mid_tool_is_recovered(opencode_host: Host,
                                                wardian_home: Path) -> None:
    agent = setup_agent(opencode_host, wardian_home)
    # Inside the workspace: opencode asks before a command touches a folder outside it.
    started = opencode_host.workspace / "tool-started"
    # The tool blocks until the test kills the session (the kill, not a timer, ends it).
    opencode_host.endpoint.script(Reply(Shell(f"touch {started}; exec tail -f /dev/null")))
    proc = opencode_host.popen("run", "--model", MODEL, RULE)
    try:
        wait_until(started.exists, what="opencode running the scripted tool",
                   detail=lambda: f"requests {len(opencode_host.endpoint.requests)}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not events(agent), "opencode was killed: its SessionEnd never ran"
    _next_session_recovers(opencode_host, agent, wardian_home)
