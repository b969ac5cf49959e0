"""opencode sessions whose close Wardian never heard of are recovered at a later session
start: one that ran before Wardian's plugin was installed, and one killed with SIGKILL
while a tool ran (its exit handler, which runs SessionEnd, never ran). A later session's
SessionStart starts the recovery sweep, which exports each earlier session from opencode's
database and records its close; the builtin curator saves the user's rule from each.

Both sessions are recovered in one scenario (each opencode start costs seconds of CPU):
the first runs before the install, the second is killed after it, and a third session
finds both."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import (
    RULE,
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
KILLED_RULE = "From now on always format the code with black before committing"
"""What the user says in the killed session (not `RULE`: each session's record must be
its own)."""


def test_a_session_before_the_plugin_and_one_killed_mid_tool_are_recovered(
        opencode_host: Host, wardian_home: Path) -> None:
    agent = setup_agent(opencode_host, wardian_home, hooks=False)
    opencode_host.endpoint.script(Reply("Noted: ruff first."))
    proc = opencode_host.run("run", "--model", MODEL, RULE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not events(agent), "no plugin was installed: nothing may have recorded the close"

    install(opencode_host, agent.name)
    # Inside the workspace: opencode asks before a command touches a folder outside it.
    started = opencode_host.workspace / "tool-started"
    # The tool blocks until the test kills the session (the kill, not a timer, ends it).
    # opencode starts it in a process group of its own, which the kill of opencode's group
    # does not reach: the tool writes its pid so the test ends it too.
    opencode_host.endpoint.script(Reply(Shell(
        f"echo $$ > {started}.pid; touch {started}; exec tail -f /dev/null")))
    killed = opencode_host.popen("run", "--model", MODEL, KILLED_RULE)
    try:
        wait_until(started.exists, what="opencode running the scripted tool",
                   detail=lambda: f"requests {len(opencode_host.endpoint.requests)}")
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.communicate()
        tool = Path(f"{started}.pid")
        if tool.is_file():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(tool.read_text()), signal.SIGKILL)
    assert killed.returncode == -signal.SIGKILL
    # Its SessionStart may already have recovered the first session; no close came from a
    # hook: the killed session's SessionEnd never ran.
    assert all(e.source == "recovery" for e in events(agent)), events(agent)

    opencode_host.endpoint.script(Reply("Good morning."))
    proc = opencode_host.run("run", "--model", MODEL, "Good morning.")
    assert proc.returncode == 0, proc.stderr[-3000:]
    wait_until(lambda: len(opencode_exports(wardian_home)) == 3, what="all sessions exported")
    recovered = {said: [p for p in opencode_exports(wardian_home)
                        if said in p.read_text(encoding="utf-8")]
                 for said in (RULE, KILLED_RULE)}
    for said, rule_word in ((RULE, "ruff"), (KILLED_RULE, "black")):
        assert len(recovered[said]) == 1, opencode_exports(wardian_home)
        earlier = recovered[said][0]
        event = wait_closed(agent, earlier)
        assert event.source == "recovery", event
        assert event.archive_status == "available", event.archive_detail
        assert archived(agent, earlier)
        saved = saved_from(agent, earlier)
        assert any(rule_word in r["text"] for r in saved), saved
