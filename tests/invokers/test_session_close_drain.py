"""Session-close firing: one run per (event, invoker), skips with reasons, archives, workers."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

import pytest
from tests.conftest import invoke
from tests.waits import wait_until
from typer.testing import CliRunner

from wardian.config import SettingsStore, open_state_db, user_library_dir
from wardian.engine.runs import Run, RunStore
from wardian.invokers.drain import FireLog, drain_once
from wardian.invokers.store import InvokerStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import SessionEventQueue, record_session_close

NOOP_BLUEPRINT = """\
blueprint:
  id: noop-test
  name: No-op test
  description: Does nothing; used to test invokers.
  version: 1
triggers: [session-close, schedule, manual]
steps:
  - id: nothing
    action: noop
"""


def write_noop_blueprint() -> None:
    """Put the no-op blueprint in the user library (how operators add blueprints)."""
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "noop-test.yaml").write_text(NOOP_BLUEPRINT, encoding="utf-8")


_NAMES = itertools.count(1)


def add_invoker(cli: CliRunner, *extra: str, enable: bool = True, agent: str = "coder") -> str:
    # Each its own name: a name is unique among the invokers of a kind.
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "noop-test",
                 "--name", f"test {next(_NAMES)}", "--agent", agent, "--assignments", "{}",
                 *extra)
    assert res.exit_code == 0, res.output
    invoker_id = res.stdout.strip()
    if enable:
        res = invoke(cli, "automation", "session-close", "enable", invoker_id)
        assert res.exit_code == 0, res.output
    return invoker_id


@pytest.fixture
def agent(backend: str) -> str:
    """An agent and the no-op blueprint, on each backend (`backend` in tests/conftest.py:
    SQLite, then PostgreSQL for state and memory alike)."""
    write_noop_blueprint()
    return AgentRegistry(open_state_db()).add("coder", "claude").id


def _runs(invoker_id: str) -> list[Run]:
    return RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)


def _skip_reason(run: Run) -> str:
    """The run's skip reason, which a skipped run must have."""
    assert run.skip_reason is not None, f"run {run.id} has no skip reason"
    return run.skip_reason


def test_fires_once_per_event_and_redelivery_is_not_a_new_run(cli: CliRunner, agent: str) -> None:
    inv = add_invoker(cli)
    disabled = add_invoker(cli, enable=False)
    ev = record_session_close(agent, "shutdown", session_id="s1", start_drain=False)
    report = drain_once()
    assert (report.events, report.runs_created, report.executed) == (1, 1, 1)
    (run,) = _runs(inv)
    assert run.status == "succeeded" and run.idempotency_key == f"session-close:{inv}:{ev}"
    payload = run.invocation["payload"]
    assert run.invocation["trigger"] == "session-close"
    assert payload["boundary"] == "shutdown" and payload["boundary_id"] == ev
    assert payload["agent_name"] == "coder" and payload["archive_available"] is False
    assert _runs(disabled) == []
    assert record_session_close(agent, "shutdown", session_id="s1", start_drain=False) == ev
    assert drain_once().idle
    assert len(_runs(inv)) == 1
    assert SessionEventQueue(open_state_db()).get(ev).status == "processed"


@pytest.mark.pg_slow
def test_boundaries_filter(cli: CliRunner, agent: str) -> None:
    clear_only = add_invoker(cli, "--boundary", "clear")
    record_session_close(agent, "shutdown", start_drain=False)
    drain_once()
    assert _runs(clear_only) == []
    record_session_close(agent, "clear", start_drain=False)
    drain_once()
    assert [r.status for r in _runs(clear_only)] == ["succeeded"]


def test_require_archive_records_skip_with_each_reason(cli: CliRunner, agent: str,
                                                       tmp_path: Path) -> None:
    inv = add_invoker(cli, "--require-archive")
    # 1. logging disabled (the default)
    record_session_close(agent, "clear", session_id="a", transcript_path=str(tmp_path / "x"),
                         start_drain=False)
    drain_once()
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true", agent_id=agent)
    # 2. no transcript
    record_session_close(agent, "clear", session_id="b", start_drain=False)
    # 3. unreadable transcript
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01\x02 not a transcript")
    record_session_close(agent, "clear", session_id="c", transcript_path=str(bad),
                         start_drain=False)
    record_session_close(agent, "clear", session_id="d",
                         transcript_path=str(tmp_path / "missing.jsonl"), start_drain=False)
    drain_once()
    runs = sorted(_runs(inv), key=lambda r: r.invocation["payload"]["session_id"])
    assert [r.status for r in runs] == ["skipped"] * 4
    reasons = [_skip_reason(r) for r in runs]
    assert reasons[0] == "conversation logging disabled"
    assert reasons[1] == "no transcript"
    assert reasons[2].startswith("unreadable transcript")
    assert reasons[3].startswith("unreadable transcript") and "no such file" in reasons[3]
    res = invoke(cli, "automation", "session-close", "history", inv, "--json")
    assert res.exit_code == 0
    assert sorted(d["skip_reason"][:13] for d in json.loads(res.stdout)["runs"]) == sorted(
        r[:13] for r in reasons)


@pytest.mark.pg_slow
def test_archive_imported_and_described_in_trigger_input(cli: CliRunner, agent: str,
                                                         tmp_path: Path) -> None:
    inv = add_invoker(cli, "--require-archive")
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"role": "user", "content": "always use uv"}) + "\n"
        + json.dumps({"role": "assistant", "content": "ok"}) + "\n", encoding="utf-8")
    ev = record_session_close(agent, "clear", transcript_path=str(transcript),
                              provider="generic", start_drain=False)
    drain_once()
    (run,) = _runs(inv)
    payload = run.invocation["payload"]
    assert run.status == "succeeded"
    assert payload["archive_available"] is True and payload["archive_seq_range"] == [1, 2]
    res = invoke(cli, "conversation", "list", "--agent", "coder", "--json")
    (conv,) = json.loads(res.stdout)
    assert conv["id"] == payload["conversation_id"] and conv["event_id"] == ev
    res = invoke(cli, "conversation", "show", conv["id"][:8])
    assert "always use uv" in res.stdout


@pytest.mark.pg_slow
def test_automation_failure_never_blocks_the_event(cli: CliRunner, agent: str) -> None:
    inv = add_invoker(cli)
    # the blueprint disappears after the invoker was enabled
    (user_library_dir() / "noop-test.yaml").unlink()
    ev = record_session_close(agent, "clear", start_drain=False)
    drain_once()
    assert SessionEventQueue(open_state_db()).get(ev).status == "processed"
    # a broken invoker gets no run: the fire is recorded blocked, with the reason
    assert _runs(inv) == []
    (fire,) = FireLog(open_state_db()).for_invoker(inv)
    assert fire.outcome == "blocked" and "no blueprint with id" in (fire.skip_reason or "")


@pytest.mark.pg_slow
def test_one_broken_invoker_neither_blocks_the_others_nor_goes_unrecorded(cli: CliRunner,
                                                                          agent: str) -> None:
    from wardian.invokers.drain import MAX_EVENT_ATTEMPTS

    broken, healthy = add_invoker(cli), add_invoker(cli)
    # a row no current code writes (an older version's, or edited by hand)
    InvokerStore(open_state_db()).conn.execute(
        "UPDATE invokers SET inputs_json = '\"x\"' WHERE id = ?", (broken,))
    ev = record_session_close(agent, "clear", start_drain=False)
    report = drain_once()
    assert report.errors and broken[:8] in report.errors[0]
    (run,) = _runs(healthy)
    assert run.status == "succeeded" and _runs(broken) == []
    assert SessionEventQueue(open_state_db()).get(ev).status == "pending"
    for _ in range(MAX_EVENT_ATTEMPTS - 1):
        drain_once()
    event = SessionEventQueue(open_state_db()).get(ev)
    assert event.status == "processed" and event.attempts == MAX_EVENT_ATTEMPTS
    (skip,) = _runs(broken)
    assert skip.status == "skipped" and skip.idempotency_key == f"session-close:{broken}:{ev}"
    assert _skip_reason(skip).startswith(f"gave up after {MAX_EVENT_ATTEMPTS} attempts")
    assert [r.id for r in _runs(healthy)] == [run.id]
    assert FireLog(open_state_db()).count() == 2


def test_racing_drains_create_one_run_each(cli: CliRunner, agent: str) -> None:
    invs = [add_invoker(cli) for _ in range(3)]
    events = [record_session_close(agent, "clear", start_drain=False) for _ in range(20)]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            drain_once(limit=100)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    runs = [r for inv in invs for r in _runs(inv)]
    assert len(runs) == len(invs) * len(events)
    assert len({r.idempotency_key for r in runs}) == len(runs)
    assert all(r.status == "succeeded" for r in runs)
    assert FireLog(open_state_db()).count() == len(runs)


@pytest.mark.pg_slow
def test_detached_worker_runs_the_invoker(cli: CliRunner, agent: str) -> None:
    inv = add_invoker(cli)
    res = invoke(cli, "session", "close", "--agent", "coder", "--boundary", "clear",
                 "--session-id", "sess-1", "--json")
    assert res.exit_code == 0, res.output
    wait_until(lambda: any(r.status not in ("queued", "running") for r in _runs(inv)),
               what="the detached worker finished the invoker's run")
    (run,) = _runs(inv)
    assert run.status == "succeeded"


@pytest.mark.pg_slow
def test_add_validation_refusals(cli: CliRunner, agent: str) -> None:
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "nope",
                 "--name", "x", "--agent", "coder", "--assignments", "{}")
    assert res.exit_code == 1 and "no blueprint" in res.stderr
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "noop-test",
                 "--name", "x", "--agent", "coder",
                 "--assignments", '{"curator":{"target_type":"temporary_provider",'
                 '"provider":"builtin"}}')
    assert res.exit_code == 2 and "curator" in res.stderr
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "noop-test",
                 "--name", "x", "--agent", "coder", "--assignments", "{}", "--boundary", "exit")
    assert res.exit_code == 2 and "boundary" in res.stderr
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "noop-test",
                 "--name", "x", "--agent", "ghost", "--assignments", "{}")
    assert res.exit_code == 1
    assert InvokerStore(open_state_db()).list() == []


@pytest.mark.pg_slow
def test_list_show_enable_disable_remove(cli: CliRunner, agent: str) -> None:
    inv = add_invoker(cli, "--boundary", "clear", "--require-archive", enable=False)
    (doc,) = json.loads(invoke(cli, "automation", "session-close", "list", "--json").stdout)
    assert doc["status"] == "disabled" and doc["boundaries"] == ["clear"]
    assert doc["require_archive"] is True and doc["agent_name"] == "coder"
    assert invoke(cli, "automation", "session-close", "enable", inv[:8]).exit_code == 0
    shown = json.loads(invoke(cli, "automation", "session-close", "show", inv, "--json").stdout)
    assert shown["status"] == "enabled"
    assert invoke(cli, "automation", "session-close", "list").exit_code == 0
    assert invoke(cli, "automation", "session-close", "disable", inv).exit_code == 0
    assert invoke(cli, "automation", "session-close", "remove", inv).exit_code == 0
    assert invoke(cli, "automation", "session-close", "show", inv).exit_code == 1


@pytest.mark.pg_slow
def test_a_file_that_is_not_a_transcript_is_an_unreadable_transcript(cli: CliRunner, agent: str,
                                                                       tmp_path: Path) -> None:
    # The agent's provider (claude) makes it parse as Claude Code JSONL, where every line of
    # a markdown file is malformed: that is no transcript, not an empty conversation.
    inv = add_invoker(cli, "--require-archive")
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true")
    notes = tmp_path / "NOTES.md"
    notes.write_text("# Notes\n\nUse *uv*, never pip.\n- item\n", encoding="utf-8")
    res = invoke(cli, "session", "close", "--agent", "coder", "--boundary", "clear",
                 "--session-id", "md-1", "--transcript", str(notes), "--json")
    assert res.exit_code == 0, res.output
    wait_until(lambda: any(r.status not in ("queued", "running") for r in _runs(inv)),
               what="the detached worker finished the invoker's run")
    (run,) = _runs(inv)
    assert run.status == "skipped", run.status
    reason = _skip_reason(run)
    assert reason.startswith("unreadable transcript: ")
    assert "3 malformed lines" in reason
    assert "not a Claude Code, Codex, Gemini CLI or generic" in reason
    res = invoke(cli, "conversation", "list", "--agent", "coder", "--json")
    assert json.loads(res.stdout) == []  # nothing imported
