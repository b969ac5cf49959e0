"""Invokers can be edited (`set`), validated exactly as `add`; broken ones say why in list/show."""

from __future__ import annotations

import json

from tests.app.test_doctor import TICK, write_tick
from tests.conftest import invoke
from typer.testing import CliRunner

SC = ("automation", "session-close")
SCHED = ("automation", "schedule")


def _setup(cli: CliRunner) -> str:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick()
    res = invoke(cli, *SC, "add", "--blueprint", "tick", "--name", "t", "--agent", "ada",
                 "--assignments", "{}", "--boundary", "clear")
    assert res.exit_code == 0, res.output
    return res.stdout.strip()


def test_set_changes_inputs_and_boundaries_and_keeps_the_rest(cli: CliRunner) -> None:
    invoker = _setup(cli)
    assert invoke(cli, *SC, "enable", invoker).exit_code == 0
    res = invoke(cli, *SC, "set", invoker[:8], "--input", "label=y", "--boundary", "shutdown")
    assert res.exit_code == 0, res.output
    doc = json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)
    assert doc["inputs"] == {"label": "y"} and doc["boundaries"] == ["shutdown"]
    assert doc["status"] == "enabled"
    res = invoke(cli, *SC, "set", invoker[:8], "--any-boundary")
    assert json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)["boundaries"] == ["any"]


def test_set_refuses_what_add_refuses_and_changes_nothing(cli: CliRunner) -> None:
    invoker = _setup(cli)
    before = json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)
    for args, needle in [
        (("--input", "nosuch=1"), "unknown input 'nosuch'"),
        (("--boundary", "lunch"), "unknown boundary 'lunch'"),
        (("--assignments", '{"curator": {"target_type": "temporary_provider", '
                           '"provider": "builtin"}}'), "curator"),
        (("--assignments", "{"), "JSON"),
        ((), "nothing to change"),
    ]:
        res = invoke(cli, *SC, "set", invoker[:8], *args)
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.stderr, (args, res.stderr)
    after = json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)
    assert after == before


def test_add_refuses_a_missing_required_input(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick(TICK.replace("    default: x\n", ""))
    res = invoke(cli, *SC, "add", "--blueprint", "tick", "--name", "t", "--agent", "ada",
                 "--assignments", "{}")
    assert res.exit_code == 2 and "--input label=VALUE" in res.stderr
    res = invoke(cli, *SCHED, "add", "--blueprint", "tick", "--name", "s", "--agent", "ada",
                 "--assignments", "{}", "--every", "1h")
    assert res.exit_code == 2 and "--input label=VALUE" in res.stderr


def test_broken_invoker_shows_broken_with_reason(cli: CliRunner) -> None:
    invoker = _setup(cli)
    assert invoke(cli, *SC, "enable", invoker).exit_code == 0
    from wardian.config import user_library_dir

    (user_library_dir() / "tick.yaml").unlink()
    (doc,) = json.loads(invoke(cli, *SC, "list", "--json").stdout)
    assert doc["status"] == "broken" and "no blueprint with id 'tick'" in doc["broken_reason"]
    assert doc["enabled"] is True  # nothing is deleted or switched off
    shown = invoke(cli, *SC, "show", invoker).stdout
    assert "broken: no blueprint with id 'tick'" in shown and "fix" in shown


def test_schedule_set_and_broken(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    path = write_tick()
    res = invoke(cli, *SCHED, "add", "--blueprint", "tick", "--name", "s", "--agent", "ada",
                 "--assignments", "{}", "--every", "1h", "--json")
    assert res.exit_code == 0, res.output
    invoker = json.loads(res.stdout)["id"]
    res = invoke(cli, *SCHED, "set", invoker[:8], "--input", "label=z")
    assert res.exit_code == 0, res.output
    res = invoke(cli, *SCHED, "set", invoker[:8], "--input", "bad=z")
    assert res.exit_code == 2 and "unknown input 'bad'" in res.stderr
    doc = json.loads(invoke(cli, *SCHED, "show", invoker, "--json").stdout)
    assert doc["inputs"] == {"label": "z"} and doc["status"] == "disabled"
    path.unlink()
    doc = json.loads(invoke(cli, *SCHED, "show", invoker, "--json").stdout)
    assert doc["status"] == "broken" and "tick" in doc["broken_reason"]
    assert "broken" in invoke(cli, *SCHED, "list").stdout


def test_broken_session_close_invoker_records_blocked_and_creates_no_run(
        cli: CliRunner) -> None:
    from wardian.config import open_state_db, user_library_dir
    from wardian.engine.runs import RunStore
    from wardian.invokers.drain import drain_once
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.session_events import record_session_close

    invoker = _setup(cli)
    assert invoke(cli, *SC, "enable", invoker).exit_code == 0
    (user_library_dir() / "tick.yaml").unlink()
    agent = AgentRegistry(open_state_db()).get("ada")
    record_session_close(agent.id, "clear", session_id="s1", start_drain=False)
    drain_once()
    assert RunStore(open_state_db(), recover=False).list(invoker_id=invoker) == []
    res = invoke(cli, *SC, "history", invoker, "--json")
    (entry,) = json.loads(res.stdout)["runs"]
    assert entry["status"] == "blocked" and "no blueprint with id 'tick'" in entry["skip_reason"]
    assert "blocked" in invoke(cli, *SC, "history", invoker).stdout
    # fixed, the next close runs again; the blocked record stays
    write_tick()
    record_session_close(agent.id, "clear", session_id="s2", start_drain=False)
    drain_once()
    statuses = [r["status"] for r in json.loads(
        invoke(cli, *SC, "history", invoker, "--json").stdout)["runs"]]
    assert "blocked" in statuses and len(statuses) == 2


def test_broken_schedule_slot_is_blocked_without_a_run(cli: CliRunner) -> None:
    from datetime import UTC, datetime

    from wardian.config import open_state_db, user_library_dir
    from wardian.engine.runs import RunStore
    from wardian.invokers.schedule import SlotDecision
    from wardian.invokers.slots import SlotStore, dispatch_slot
    from wardian.invokers.store import InvokerStore

    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick()
    res = invoke(cli, *SCHED, "add", "--blueprint", "tick", "--name", "s", "--agent", "ada",
                 "--assignments", "{}", "--every", "1h", "--json")
    invoker = InvokerStore(open_state_db()).get(json.loads(res.stdout)["id"])
    (user_library_dir() / "tick.yaml").unlink()
    slots = SlotStore(open_state_db())
    when = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    slots.record(invoker.id, [SlotDecision(when, "run", None, 0.0)], decided_at=when)
    (slot,) = slots.pending(invoker.id)
    runs = RunStore(open_state_db(), recover=False)
    assert dispatch_slot(runs, slots, invoker, slot.scheduled_time) == ("", "blocked")
    (recorded,) = slots.history(invoker.id)
    assert recorded.outcome == "blocked" and recorded.run_id is None
    assert "no blueprint with id 'tick'" in (recorded.reason or "")
    assert runs.list(invoker_id=invoker.id) == []
