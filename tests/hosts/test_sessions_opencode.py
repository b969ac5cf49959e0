"""opencode itself with Wardian's plugin (`wardian hooks install opencode`): the plugin's
SessionStart puts the agent's memory into the model request and shows the "Memory loaded"
line; when opencode exits its SessionEnd records the close of the session, which Wardian
exports from opencode's own database, and the builtin curator's records come from it.

Uninstalling the plugin one agent at a time, and opencode running after it, is checked on
the run of `tests.hosts.test_transcript_opencode`."""

from __future__ import annotations

from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import (
    RULE,
    SEEDED,
    archived,
    opencode_exports,
    saved_from,
    setup_agent,
    wait_closed,
)

MODEL = "scripted/scripted-model"


def test_start_and_end_consolidate_the_session(opencode_host: Host,
                                               wardian_home: Path) -> None:
    agent = setup_agent(opencode_host, wardian_home)
    plugin = opencode_host.home / ".config" / "opencode" / "plugins" / "wardian.js"
    assert "wardian.runtime.hooks" in plugin.read_text()
    opencode_host.endpoint.script(Reply(Shell("echo linted")), Reply("Noted: ruff first."))
    proc = opencode_host.run("run", "--model", MODEL, RULE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Noted: ruff first." in proc.stdout
    first = opencode_host.endpoint.main_requests[0]
    assert all(text in first.system_text for text in SEEDED), first.system_text[-2000:]
    assert "Memory loaded · 2 records" in proc.stderr, proc.stderr[-2000:]
    (transcript,) = opencode_exports(wardian_home)
    event = wait_closed(agent, transcript)
    assert (event.source, event.provider) == ("hook", "opencode"), event
    assert event.archive_status == "available", event.archive_detail
    (conv,) = archived(agent, transcript)
    assert conv.message_count >= 3
    saved = saved_from(agent, transcript)
    assert any("ruff" in r["text"] for r in saved), agent.w.records(agent.name)
