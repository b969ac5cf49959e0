"""A session of the real Gemini CLI run before Wardian's hooks were installed is recovered
at the next session start, from the session JSONL the CLI wrote. (A Gemini session killed
with SIGKILL is not tested: in trials of 0.61.0 the session file of a killed session was
not left on disk, so there was nothing to recover.)"""

from __future__ import annotations

from pathlib import Path

from tests.hosts.endpoint import Reply
from tests.hosts.hostcli import Host
from tests.hosts.sessions import (
    RULE,
    archived,
    events,
    install,
    saved_from,
    setup_agent,
    wait_closed,
)

MODEL = "gemini-2.5-pro"


def test_a_session_before_the_hooks_were_installed_is_recovered(
        gemini_host: Host, wardian_home: Path) -> None:
    agent = setup_agent(gemini_host, wardian_home, hooks=False)
    gemini_host.endpoint.script(Reply("Noted: ruff first."))
    proc = gemini_host.run("-p", RULE, "-m", MODEL, "--yolo")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (earlier,) = gemini_host.transcripts()
    assert not events(agent), "no hook was installed: nothing may have recorded the close"
    install(gemini_host, agent.name)
    gemini_host.endpoint.script(Reply("Good morning."))
    proc = gemini_host.run("-p", "Good morning.", "-m", MODEL, "--yolo")
    assert proc.returncode == 0, proc.stderr[-3000:]
    event = wait_closed(agent, earlier)
    assert (event.source, event.provider) == ("recovery", "gemini"), event
    assert event.archive_status == "available", event.archive_detail
    assert archived(agent, earlier)
    saved = saved_from(agent, earlier)
    assert any("ruff" in r["text"] for r in saved), saved
