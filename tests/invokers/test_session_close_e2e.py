"""End to end: Claude Code hook payloads (documented shapes) through the installed hook
commands, a real corpus transcript archived at session close, and the memory-consolidation
sample fired once by a session-close invoker through the detached drain worker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.waits import wait_until
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.engine.runs import Run, RunStore
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.archives import ArchiveStore
from wardian.runtime.session_events import SessionEventQueue

TRANSCRIPT = "claude-code/spotter-phx-server-short.jsonl"


def _hook_commands(settings: Path) -> dict[str, str]:
    data = json.loads(settings.read_text())
    return {event: data["hooks"][event][-1]["hooks"][0]["command"]
            for event in ("SessionStart", "SessionEnd")}


def _run_hook(command: str, payload: dict[str, Any],
              env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Claude Code runs the command through a shell with the JSON on stdin.
    return _hook_process(command, payload, env)[0]


def _hook_process(command: str, payload: dict[str, Any],
                  env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run the hook through a shell that ``exec``s it, so the pid returned (second) is the
    hook's own; the hook has exited when this returns."""
    with subprocess.Popen(f"exec {command}", shell=True, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env) as proc:
        out, err = proc.communicate(json.dumps(payload), timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), proc.pid


def _wait_final(invoker_id: str) -> list[Run]:
    def final() -> list[Run]:
        runs = RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)
        return runs if runs and runs[0].status not in ("queued", "running") else []
    return wait_until(final, what="the drain worker finished the invoker's run")


def test_claude_code_hooks_end_to_end(cli: CliRunner, corpus_dir: Path, tmp_path: Path) -> None:
    source = corpus_dir / TRANSCRIPT
    if not source.is_file():
        pytest.skip(f"{source} absent from the corpus")
    transcript = tmp_path / "projects" / "-home-user-spotter" / "session.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(source, transcript)
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    for key in ("agent_memory.enabled", "conversation_logging.enabled"):
        assert invoke(cli, "settings", "set", key, "true").exit_code == 0
    settings = tmp_path / "settings.json"
    res = invoke(cli, "hooks", "install", "claude-code", "--agent", "coder",
                 "--settings", str(settings))
    assert res.exit_code == 0, res.output
    commands = _hook_commands(settings)
    res = invoke(cli, "automation", "session-close", "add", "--blueprint",
                 "memory-consolidation", "--name", "consolidate", "--agent", "coder",
                 "--boundary", "clear", "--require-archive", "--assignments",
                 '{"curator":{"target_type":"temporary_provider","provider":"builtin"}}')
    assert res.exit_code == 0, res.output
    invoker_id = res.stdout.strip()
    assert invoke(cli, "automation", "session-close", "enable", invoker_id).exit_code == 0
    env = dict(os.environ)
    workspace = tmp_path / "spotter"
    workspace.mkdir()

    start = _run_hook(commands["SessionStart"], {
        "session_id": "5d1a7c2e-0000-4000-8000-000000000001",
        "transcript_path": str(transcript), "cwd": str(workspace),
        "hook_event_name": "SessionStart", "source": "startup", "model": "claude-sonnet-4-6",
    }, env)
    assert start.returncode == 0, start.stderr
    answer = json.loads(start.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Wardian memory" in answer["hookSpecificOutput"]["additionalContext"]

    end_payload = {
        "session_id": "5d1a7c2e-0000-4000-8000-000000000001",
        "transcript_path": str(transcript), "cwd": str(workspace),
        "hook_event_name": "SessionEnd", "reason": "clear", "permission_mode": "default",
    }
    began = time.monotonic()
    end, hook_pid = _hook_process(commands["SessionEnd"], end_payload, env)
    hook_s = time.monotonic() - began  # printed below; the bench reports the real figure
    assert end.returncode == 0, end.stderr
    assert end.stdout == ""
    runs = _wait_final(invoker_id)
    # Claude Code may deliver the same close again: still one event, one run.
    assert _run_hook(commands["SessionEnd"], end_payload, env).returncode == 0
    (event,) = SessionEventQueue(open_state_db()).list()
    assert event.deliveries == 2 and event.boundary == "clear"
    wait_until(lambda: not SessionEventQueue(open_state_db()).has_pending(),
               what="the re-delivered close handled (no pending event)")
    (run,) = RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)
    assert run.id == runs[0].id
    assert run.status == "succeeded", (run.error, run.skip_reason)
    (conv,) = ArchiveStore(open_state_db()).list(agent_id=agent)
    assert conv.event_id == event.id and conv.provider == "claude-code"
    assert conv.source_path == str(transcript) and len(conv.source_sha256 or "") == 64
    assert conv.message_count > 0
    payload = run.invocation["payload"]
    assert payload["conversation_id"] == conv.id
    assert payload["archive_seq_range"] == [conv.first_seq, conv.last_seq]
    # a shutdown close of the next session does not fire the clear-only invoker
    end2 = _run_hook(commands["SessionEnd"], {**end_payload, "session_id": "next",
                                               "reason": "prompt_input_exit"}, env)
    assert end2.returncode == 0
    assert len(RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)) == 1
    # The hook only recorded the event and handed it on: the run was claimed and executed
    # by another process (the detached drain worker), not inside the hook it returned from.
    (started,) = [e for e in RunStore(open_state_db(), recover=False).events(run.id)
                  if e["kind"] == "run.started"]
    assert started["data"]["pid"] != hook_pid
    # the curator's batch went through memory.commit for this agent (principal)
    detail = RunStore(open_state_db(), recover=False).get(run.id, detail=True)
    assert [a.step_id for a in detail.attempts if a.status == "succeeded"][:1] == ["archive"]
    records = MemoryStore(open_memory_db()).count(agent)
    print(f"e2e: hook {hook_s * 1000:.0f} ms, records now "
          f"{records}, steps {[a.step_id for a in detail.attempts]}")
