"""Codex CLI itself with Wardian's hooks (trusted for the run with the documented
``--dangerously-bypass-hook-trust``): SessionStart puts the agent's memory into the model
request; Codex's own SessionEnd hook (since 0.145.0) records the close of the rollout it
wrote, and the records come from that rollout."""

from __future__ import annotations

from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import RULE, SEEDED, archived, saved_from, setup_agent, wait_closed

MODEL = "gpt-5.1-codex"


def test_start_and_end_hooks_consolidate_the_rollout(codex_host: Host,
                                                     wardian_home: Path) -> None:
    codex_host.env["PATH"] = f"{codex_host.exe.parent}:{codex_host.env['PATH']}"
    agent = setup_agent(codex_host, wardian_home)
    hooks = (codex_host.home / ".codex" / "hooks.json").read_text()
    assert '"SessionEnd"' in hooks  # the installed Codex has the event
    codex_host.endpoint.script(Reply(Shell("echo linted")), Reply("Noted: ruff first."))
    proc = codex_host.run("exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
                          "--model", MODEL, RULE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Noted: ruff first." in proc.stdout
    first = codex_host.endpoint.main_requests[0]
    sent = first.text()
    assert all(text in sent for text in SEEDED), sent[-2000:]
    (transcript,) = codex_host.transcripts()
    event = wait_closed(agent, transcript)
    assert (event.source, event.provider) == ("hook", "codex"), event
    assert event.archive_status == "available", event.archive_detail
    (conv,) = archived(agent, transcript)
    assert conv.message_count >= 3
    saved = saved_from(agent, transcript)
    assert any("ruff" in r["text"] for r in saved), agent.w.records(agent.name)
