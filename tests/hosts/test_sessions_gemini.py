"""Gemini CLI itself with Wardian's hooks: SessionStart puts the agent's memory into the
model request and shows "Memory loaded"; the CLI's own SessionEnd hook records the close,
and the records come from the session JSONL the CLI wrote."""

from __future__ import annotations

from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import (
    RULE,
    SEEDED,
    archived,
    saved_from,
    setup_agent,
    wait_closed,
)

MODEL = "gemini-2.5-pro"


def _prompt(host: Host, text: str) -> list[str]:
    return ["-p", text, "-m", MODEL, "--yolo"]


def test_start_and_end_hooks_consolidate_the_session_jsonl(gemini_host: Host,
                                                           wardian_home: Path) -> None:
    agent = setup_agent(gemini_host, wardian_home)
    gemini_host.endpoint.script(Reply(Shell("echo linted")), Reply("Noted: ruff first."))
    proc = gemini_host.run(*_prompt(gemini_host, RULE))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Noted: ruff first." in proc.stdout
    # 1. SessionStart: the recall is in the model request; the user sees the loaded row
    first = gemini_host.endpoint.main_requests[0]
    sent = "\n".join(first.user_texts) + first.system_text
    assert all(text in sent for text in SEEDED), sent[-2000:]
    assert "Memory loaded · 2 records" in proc.stderr, proc.stderr[-2000:]
    # 2. the CLI's own SessionEnd hook recorded the close of the JSONL it wrote
    (transcript,) = gemini_host.transcripts()
    assert transcript.suffix == ".jsonl"
    event = wait_closed(agent, transcript)
    assert (event.source, event.boundary, event.provider) == ("hook", "shutdown", "gemini")
    assert event.archive_status == "available", event.archive_detail
    (conv,) = archived(agent, transcript)
    assert conv.message_count >= 4 and conv.session_id == event.session_id
    saved = saved_from(agent, transcript)
    assert any("ruff" in r["text"] for r in saved), agent.w.records(agent.name)
    assert not any(text in r["evidence"] for r in saved for text in SEEDED)

