"""Claude Code itself with Wardian's hooks: SessionStart puts the agent's memory into the
model request and answers Claude Code the "Memory loaded · N records" row; Claude Code's own
SessionEnd hook records the close, and the builtin curator saves a record from the
transcript Claude Code wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import RULE, SEEDED, archived, saved_from, setup_agent, wait_closed

MODEL = "claude-opus-4-5"


def stream_events(stdout: str) -> list[dict[str, Any]]:
    """The JSON events of ``--output-format stream-json`` output."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_start_and_end_hooks_consolidate_the_transcript(claude_host: Host,
                                                        wardian_home: Path) -> None:
    agent = setup_agent(claude_host, wardian_home)
    claude_host.endpoint.script(Reply(Shell("echo linted")), Reply("Noted: ruff first."))
    proc = claude_host.run("-p", RULE, "--model", MODEL, "--allowedTools", "Bash",
                           "--output-format", "stream-json", "--verbose",
                           "--include-hook-events")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = stream_events(proc.stdout)
    assert out[-1]["type"] == "result" and out[-1]["result"] == "Noted: ruff first.", out[-1]
    # 1. SessionStart: the recall is in the model request Claude Code sent
    first = claude_host.endpoint.main_requests[0]
    assert first.model == MODEL
    sent = first.text()
    assert all(text in sent for text in SEEDED), sent[-2000:]
    # ... and Claude Code got the collapsed row it shows the user (its systemMessage)
    (start,) = [e for e in out if e.get("subtype") == "hook_response"
                and e.get("hook_event") == "SessionStart"]
    answer = json.loads(start["stdout"])
    assert answer["systemMessage"].startswith("Memory loaded · 2 records · "), answer
    # 2. Claude Code's own SessionEnd hook recorded the close of the transcript it wrote
    (transcript,) = claude_host.transcripts()
    assert transcript.stem == out[-1]["session_id"]
    event = wait_closed(agent, transcript)
    assert (event.source, event.boundary, event.provider) == ("hook", "shutdown",
                                                              "claude-code"), event
    assert event.session_id == transcript.stem
    assert event.archive_status == "available", event.archive_detail
    (conv,) = archived(agent, transcript)
    assert conv.message_count >= 3 and conv.session_id == event.session_id
    saved = saved_from(agent, transcript)
    assert any("ruff" in r["text"] for r in saved), agent.w.records(agent.name)
    assert not any(text in r["evidence"] for r in saved for text in SEEDED)
    assert claude_host.endpoint.errors == [] and claude_host.endpoint.overrun == 0
