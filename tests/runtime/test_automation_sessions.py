"""Transcripts written by Wardian's own automation steps are never recovered as the agent's
sessions (issue 20, recovery): a curator on a CLI provider runs in the agent's workspace and
its provider writes a transcript there, which a sweep would otherwise file as an unreported
session of the agent (consolidation of consolidation).

Real parts: a real engine run whose role step starts the fake ``codex`` CLI
(tests/fakes/fake_provider.py), which writes its rollout into the fake ``$CODEX_HOME`` with
the run's workspace as cwd; then the real recovery sweep and the real hook entry point.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.conftest import invoke
from tests.engine.helpers import (
    create_run,
    hung_provider_run,
    start_engine,
    write_blueprint,
)
from tests.providers.conftest import FakeCli, fake_cli  # noqa: F401 - a fixture
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.engine.executor import execute_run
from wardian.engine.runs import RunStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.automation_sessions import held_record_path, is_automation_transcript
from wardian.runtime.recovery import claude_project_dir, sweep
from wardian.runtime.session_events import SessionEventQueue, drain_lock

BLUEPRINT = """\
blueprint: {id: curate-like, name: Curate like, version: 1}
roles:
  curator: You curate.
steps:
  - id: curate
    role: curator
    prompt: Curate this session.
    output: {type: object}
"""


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner,
         fake_cli: FakeCli) -> Path:  # noqa: F811
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gem"))
    folder = (tmp_path / "work").resolve()
    folder.mkdir()
    AgentRegistry(open_state_db()).add("ada", "codex", workspace=str(folder))
    assert invoke(cli, "settings", "set", "conversation_logging.enabled", "true").exit_code == 0
    return folder


def _run(tmp_path: Path, workspace: Path, assignments: dict[str, Any]) -> Any:
    path = write_blueprint(tmp_path / "bp", BLUEPRINT)
    store = RunStore(open_state_db())
    run = create_run(store, path, assignments=assignments, workspace=str(workspace))
    return execute_run(run.id, store=store)


def _rollouts() -> list[Path]:
    return sorted((Path(os.environ["CODEX_HOME"]) / "sessions").glob("**/rollout-*.jsonl"))


def _user_codex_session(corpus_dir: Path, workspace: Path) -> Path:
    """A real Codex session the user ran in the workspace (corpus copy, cwd rewritten)."""
    src = next(p for p in sorted((corpus_dir / "codex").glob("*.jsonl"))
               if json.loads(p.read_text(encoding="utf-8").splitlines()[0]).get("type")
               == "session_meta")
    lines = src.read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["cwd"] = str(workspace)
    target = (Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "11" / "30"
              / "rollout-2026-11-30T09-00-00-0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("assignment", [
    {"target_type": "temporary_provider", "provider": "codex"},
    {"target_type": "agent", "agent": "ada"},
], ids=["temporary-provider", "agent"])
def test_a_curator_step_transcript_is_never_recovered(
    work: Path, tmp_path: Path, corpus_dir: Path, assignment: dict[str, Any],
) -> None:
    result = _run(tmp_path, work, {"curator": assignment})
    assert result.status == "succeeded", result
    (rollout,) = _rollouts()  # the step's provider wrote its transcript in the workspace
    assert json.loads(rollout.read_text().splitlines()[0])["payload"]["cwd"] == str(work)
    report = sweep()
    assert report.recorded == []
    assert report.skipped.get("an automation step's own session") == 1
    user = _user_codex_session(corpus_dir, work)
    (found,) = sweep().recorded  # the user's session beside it is still recovered, once
    assert found["transcript_path"] == str(user)
    assert sweep().recorded == []
    (event,) = SessionEventQueue(open_state_db()).list()
    assert event.boundary == "recovered" and event.transcript_path == str(user)


def test_a_failed_step_transcript_is_not_recovered(work: Path, tmp_path: Path,
                                                   fake_cli: FakeCli) -> None:  # noqa: F811
    fake_cli.scenario("ok", answer="not json at all")  # the step fails after codex answered
    result = _run(tmp_path, work, {"curator": {"target_type": "temporary_provider",
                                               "provider": "codex"}})
    assert result.status == "failed"
    assert len(_rollouts()) == 1
    assert sweep().recorded == []


@pytest.mark.parametrize("assignment", [
    {"target_type": "temporary_provider", "provider": "codex"},
    {"target_type": "agent", "agent": "ada"},
], ids=["temporary-provider", "agent"])
def test_a_step_killed_before_codex_named_its_thread_is_not_recovered(
    work: Path, tmp_path: Path, fake_cli: FakeCli, assignment: dict[str, Any],  # noqa: F811
) -> None:
    # Codex opened its rollout and recorded the prompt, but had not printed
    # `thread.started` when the step's timeout killed it: nothing on stdout names it.
    fake_cli.scenario("hang_before_thread")
    path = write_blueprint(tmp_path / "bp", BLUEPRINT.replace(
        "    output: {type: object}", "    timeout: 3s\n    output: {type: object}"))
    store = RunStore(open_state_db())
    run = create_run(store, path, assignments={"curator": assignment},
                     workspace=str(work))
    result = execute_run(run.id, store=store)
    assert result.status == "failed" and "did not finish within 3 s" in (result.error or "")
    (rollout,) = _rollouts()
    # named as the step's own, exactly
    assert is_automation_transcript(str(rollout), state=open_state_db())
    # What the supervisor wrote as it ended the tree was adopted when the step ended.
    assert list(held_record_path("any").parent.glob("*")) == []
    report = sweep()
    assert report.recorded == []
    assert report.skipped.get("an automation step's own session") == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the provider supervisor (parent-death signal) is Linux only")
@pytest.mark.parametrize("assignment", [
    {"target_type": "temporary_provider", "provider": "codex"},
    {"target_type": "agent", "agent": "ada"},
], ids=["temporary-provider", "agent"])
def test_a_step_whose_engine_is_killed_before_codex_named_its_thread_is_not_recovered(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    fake_cli: FakeCli, assignment: dict[str, Any],  # noqa: F811
) -> None:
    """The engine is killed (SIGKILL) while Codex holds its rollout open but has not printed
    `thread.started`, on a machine without Wardian's Codex hook: no engine is left to name
    the rollout. The provider's supervisor names the file Codex held open (its held record)
    and the next sweep files it as the step's own, not as a session of the agent."""
    run, ready = hung_provider_run(tmp_path, monkeypatch, fake_cli, BLUEPRINT,
                                   {"curator": assignment}, ready_env="FAKE_PROVIDER_HANG_READY",
                                   scenario="hang_before_thread", workspace=work)
    engine = start_engine(run.id)
    tree: list[psutil.Process] = []
    try:
        with open(ready, encoding="utf-8") as fh:
            json.loads(fh.readline())  # the rollout is open, no thread id printed
        tree = psutil.Process(engine.pid).children(recursive=True)
        engine.kill()
        engine.wait()
        _gone, alive = psutil.wait_procs(tree, timeout=60)  # a bound, not a synchroniser
        assert alive == [], "the provider outlived its engine"
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait()
        for proc in tree:  # the check failed: clean up
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
    (rollout,) = _rollouts()
    (record,) = held_record_path("any").parent.glob("*.json")  # the step's launch's
    assert json.loads(record.read_text()) == {"paths": [str(rollout)]}
    report = sweep()  # adopts the held record first
    assert report.recorded == []
    assert report.skipped.get("an automation step's own session") == 1
    assert is_automation_transcript(str(rollout), state=open_state_db()) and not record.exists()


def _hook(host: str, event: str, payload: dict[str, Any], env: dict[str, str]
          ) -> subprocess.CompletedProcess[str]:
    code = "import sys; from wardian.runtime.hooks import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-P", "-c", code, host, event, "--agent", "ada"],
                          input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def test_hooks_inside_an_automation_step_record_nothing_for_the_agent(
    work: Path, tmp_path: Path, cli: CliRunner,
) -> None:
    """A host that runs Wardian's installed hooks inside the step's provider (Claude Code
    ``-p`` fires SessionStart/SessionEnd): no recall into the curator, no session close,
    and the session the hook names is remembered as the step's own, so recovery skips it."""
    from wardian.runtime.automation_sessions import ENV_AUTOMATION_STEP, begin_step

    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    begin_step("launch-1", run_id="run-1", step_id="curate", provider="claude",
               cwd=str(work), state=open_state_db())
    session = "22222222-3333-4444-8555-666666666666"
    folder = claude_project_dir(str(work))
    folder.mkdir(parents=True)
    transcript = folder / f"{session}.jsonl"
    line = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": session,
            "timestamp": "2026-11-30T10:00:00.000Z", "cwd": str(work),
            "message": {"role": "user", "content": "Curate this session, please."}}
    reply = {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": session,
             "timestamp": "2026-11-30T10:00:01.000Z", "cwd": str(work),
             "message": {"role": "assistant", "model": "claude-sonnet-5", "id": "m1",
                         "content": [{"type": "text", "text": "Nothing to save."}]}}
    transcript.write_text(json.dumps(line) + "\n" + json.dumps(reply) + "\n")
    env = {**os.environ, ENV_AUTOMATION_STEP: "launch-1"}
    base = {"session_id": session, "transcript_path": str(transcript), "cwd": str(work)}
    lock = drain_lock()
    assert lock.acquire()
    try:  # no detached worker races the test
        start = _hook("claude-code", "session-start",
                      base | {"hook_event_name": "SessionStart", "source": "startup"}, env)
        assert start.returncode == 0 and start.stderr == "", start.stderr
        assert start.stdout.strip() == ""  # no startup recall into the curator
        end = _hook("claude-code", "session-end",
                    base | {"hook_event_name": "SessionEnd", "reason": "other"}, env)
        assert end.returncode == 0 and end.stderr == "", end.stderr
    finally:
        lock.release()
    assert SessionEventQueue(open_state_db()).list() == []  # no session close filed under ada
    report = sweep()
    assert report.recorded == []
    assert report.skipped.get("an automation step's own session") == 1


def test_an_unreadable_held_record_is_left_and_fails_no_sweep(tmp_path: Path) -> None:
    # A folder named like a record cannot be read (nor unlinked as a file): the sweep
    # adopts the readable records beside it, keeps the other, and goes on.
    from wardian.runtime.automation_sessions import adopt_held_records

    odd = held_record_path("0190odd")
    odd.mkdir(parents=True)
    good = held_record_path("0190good")
    good.write_text(json.dumps({"paths": []}), encoding="utf-8")
    assert adopt_held_records(state=open_state_db()) == 0
    assert odd.is_dir() and not good.exists()
