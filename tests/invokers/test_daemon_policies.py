"""The daemon's loop with an injected clock: every slot ends in one recorded outcome.

The daemon body runs in this process (so a test can register a blocking action and move the
clock without sleeping); the lock, signals and crash behaviour are tested with real
subprocesses in test_daemon_process.py and test_daemon_killharness.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.waits import wait_until

from wardian.app.schedules import add_schedule, set_schedule_enabled
from wardian.config import open_state_db, user_library_dir
from wardian.engine.actions import register_action, unregister_action
from wardian.engine.runs import RunStore
from wardian.invokers.daemon import ScheduleDaemon, schedule_key
from wardian.invokers.slots import SlotStore
from wardian.runtime.agents import AgentRegistry

T0 = datetime(2030, 1, 1, tzinfo=UTC)

BLUEPRINT = """\
blueprint:
  id: {id}
  name: Schedule test
  description: Used to test schedule invokers.
  version: 1
triggers: [schedule, manual]
steps:
  - id: work
    action: {action}
"""

GATE = threading.Event()


def _wait_gate(ctx: Any, **_: Any) -> str:
    # Until the test opens the gate (every fixture does on teardown) or the run is asked
    # to stop; the 0.01 s is how often it looks at `should_stop`, not a deadline.
    while not GATE.wait(0.01):
        if ctx.should_stop():
            return "stopped"
    return "released"


@pytest.fixture(autouse=True)
def library() -> Iterator[None]:
    register_action("test.wait_gate", replace=True)(_wait_gate)
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "quick.yaml").write_text(BLUEPRINT.format(id="quick", action="noop"))
    (folder / "slow.yaml").write_text(BLUEPRINT.format(id="slow", action="test.wait_gate"))
    AgentRegistry(open_state_db()).add("coder", "builtin", model="curator-rules")
    GATE.clear()
    yield
    GATE.set()
    unregister_action("test.wait_gate")


class Clock:
    """A controllable clock for the daemon."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def at(self, moment: datetime) -> None:
        self.now = moment


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def daemon(clock: Clock) -> Iterator[ScheduleDaemon]:
    lines: list[str] = []
    d = ScheduleDaemon(clock=clock, drain=False, shutdown_timeout_s=5, log=lines.append)
    d.lines = lines  # type: ignore[attr-defined]
    d.open()
    yield d
    GATE.set()
    d.close()


def _add(name: str, *, blueprint: str = "quick", **kwargs: Any) -> str:
    invoker = add_schedule(open_state_db(), blueprint_id=blueprint, name=name, agent="coder",
                           assignments="{}", cron=kwargs.pop("cron", "*/5 * * * *"), **kwargs)
    set_schedule_enabled(open_state_db(), invoker.id, True, now=T0)
    return invoker.id


def _settle(daemon: ScheduleDaemon) -> None:
    wait_until(lambda: not daemon._inflight.count(), what="the daemon's runs finished")


def _slots(invoker_id: str) -> list[tuple[str, str, str | None]]:
    return [(s.scheduled_time[11:16], s.outcome, s.reason)
            for s in SlotStore(open_state_db()).all_slots(invoker_id)]


def _run(run_id: str | None) -> Any:
    assert run_id is not None
    return RunStore(open_state_db(), recover=False).get(run_id)


def test_on_time_slot_runs_with_its_key(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("on-time")
    clock.at(T0 + timedelta(minutes=5, seconds=1))
    daemon.tick()
    _settle(daemon)
    [slot] = SlotStore(open_state_db()).all_slots(inv)
    assert (slot.outcome, slot.late_s) == ("ran", 1.0)
    run = _run(slot.run_id)
    assert run.status == "succeeded"
    assert run.idempotency_key == schedule_key(inv, slot.scheduled_time)
    assert run.invocation["payload"]["scheduled_time"] == slot.scheduled_time
    assert any("ran run" in line for line in daemon.lines)  # type: ignore[attr-defined]


def test_catch_up_none_skips_missed_slots(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("none", catch_up="none")
    clock.at(T0 + timedelta(hours=1, seconds=1))
    daemon.tick()
    _settle(daemon)
    slots = _slots(inv)
    assert len(slots) == 12
    assert [s[1] for s in slots] == ["skipped"] * 11 + ["ran"]
    assert slots[0][2] == "misfired by 3301 s"


def test_catch_up_latest_coalesces(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("latest", misfire_grace_s=60)
    clock.at(T0 + timedelta(hours=1, minutes=2))
    daemon.tick()
    _settle(daemon)
    rows = SlotStore(open_state_db()).all_slots(inv)
    assert [r.outcome for r in rows] == ["coalesced"] * 11 + ["ran"]
    assert {r.run_id for r in rows} == {rows[-1].run_id}
    assert {r.into_slot for r in rows[:-1]} == {rows[-1].scheduled_time}


def test_catch_up_all_is_capped(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("all", misfire_grace_s=60, catch_up="all", max_catch_up=3)
    clock.at(T0 + timedelta(hours=1, minutes=2))
    daemon.tick()
    _settle(daemon)
    rows = SlotStore(open_state_db()).all_slots(inv)
    assert [r.outcome for r in rows] == ["skipped"] * 9 + ["ran"] * 3
    assert all(_run(r.run_id).status == "succeeded" for r in rows[-3:])


def test_overlap_skip(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("skip", blueprint="slow")
    clock.at(T0 + timedelta(minutes=5))
    daemon.tick()
    clock.at(T0 + timedelta(minutes=10))
    daemon.tick()
    GATE.set()
    _settle(daemon)
    first, second = SlotStore(open_state_db()).all_slots(inv)
    assert first.outcome == "ran"
    busy = (first.run_id or "")[:8]
    assert (second.outcome, second.reason) == ("skipped", f"overlap: run {busy} still running")


def test_a_run_orphaned_by_a_dead_process_does_not_block_overlap_skip(
        daemon: ScheduleDaemon, clock: Clock) -> None:
    """A `run-now` process killed mid-run leaves its run 'running'; the daemon must not
    overlap-skip every later slot because of it."""
    import subprocess
    import sys

    inv = _add("orphaned")
    runs = RunStore(open_state_db(), recover=False)
    orphan, _ = runs.create_run(blueprint_id="quick", agent_id=None, assignments={},
                                inputs={}, invocation={"trigger": "schedule", "payload": {}},
                                invoker_id=inv)
    code = ("from wardian.config import open_state_db; from wardian.engine.runs import RunStore; "
            "import sys; runs = RunStore(open_state_db(), recover=False); "
            f"sys.exit(0 if runs.claim({orphan.id!r}) else 1)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert runs.get(orphan.id).status == "running"
    clock.at(T0 + timedelta(minutes=5))
    daemon.tick()
    _settle(daemon)
    [slot] = SlotStore(open_state_db()).all_slots(inv)
    assert slot.outcome == "ran", slot.reason
    assert runs.get(orphan.id).status == "interrupted"


def test_overlap_queue_runs_after(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("queue", blueprint="slow", overlap="queue")
    clock.at(T0 + timedelta(minutes=5))
    daemon.tick()
    clock.at(T0 + timedelta(minutes=10))
    daemon.tick()
    first, second = SlotStore(open_state_db()).all_slots(inv)
    assert (first.outcome, second.outcome) == ("ran", "ran")
    assert _run(second.run_id).status == "queued"
    GATE.set()
    _settle(daemon)
    a, b = _run(first.run_id), _run(second.run_id)
    assert (a.status, b.status) == ("succeeded", "succeeded")
    assert b.started_at >= a.finished_at


def test_overlap_parallel_runs_alongside(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("parallel", blueprint="slow", overlap="parallel")
    clock.at(T0 + timedelta(minutes=5))
    daemon.tick()
    clock.at(T0 + timedelta(minutes=10))
    daemon.tick()
    first, second = SlotStore(open_state_db()).all_slots(inv)
    wait_until(lambda: all(_run(s.run_id).status == "running" for s in (first, second)),
               what="both runs running at once")
    GATE.set()
    _settle(daemon)


def test_disabled_before_firing_is_recorded(daemon: ScheduleDaemon, clock: Clock) -> None:
    inv = _add("off")
    set_schedule_enabled(open_state_db(), inv, False, now=T0 + timedelta(minutes=7))
    clock.at(T0 + timedelta(minutes=30))
    daemon.tick()
    assert _slots(inv) == [("00:05", "skipped", "disabled")]
    # Re-enabled later: slots count from the new enable time only.
    set_schedule_enabled(open_state_db(), inv, True, now=T0 + timedelta(minutes=40))
    clock.at(T0 + timedelta(minutes=45))
    daemon.tick()
    _settle(daemon)
    assert [s[:2] for s in _slots(inv)] == [("00:05", "skipped"), ("00:45", "ran")]


def test_disabled_and_re_enabled_while_no_daemon_ran(daemon: ScheduleDaemon,
                                                     clock: Clock) -> None:
    """Slots that fell due before a disable that no daemon saw still get an outcome: the
    re-enable records them (skipped: disabled) before it moves ``active_since``."""
    inv = _add("off-line", cron="*/5 * * * *")
    set_schedule_enabled(open_state_db(), inv, False, now=T0 + timedelta(minutes=12))
    set_schedule_enabled(open_state_db(), inv, True, now=T0 + timedelta(minutes=40))
    assert _slots(inv) == [("00:05", "skipped", "disabled"), ("00:10", "skipped", "disabled")]
    # a second, empty period
    set_schedule_enabled(open_state_db(), inv, False, now=T0 + timedelta(minutes=41))
    set_schedule_enabled(open_state_db(), inv, True, now=T0 + timedelta(minutes=42))
    clock.at(T0 + timedelta(minutes=45))
    daemon.tick()
    _settle(daemon)
    assert [s[:2] for s in _slots(inv)] == [("00:05", "skipped"), ("00:10", "skipped"),
                                            ("00:45", "ran")]


def test_blocked_assignment_is_a_skip(daemon: ScheduleDaemon, clock: Clock) -> None:
    registry = AgentRegistry(open_state_db())
    registry.add("helper", "builtin", model="curator-rules")
    folder = user_library_dir()
    (folder / "roled.yaml").write_text(BLUEPRINT.format(id="roled", action="noop").replace(
        "triggers:", "roles:\n  helper: Helps.\ntriggers:"))
    invoker = add_schedule(open_state_db(), blueprint_id="roled", name="roled", agent="coder",
                           cron="*/5 * * * *",
                           assignments='{"helper": {"target_type": "agent", "agent": "helper"}}')
    set_schedule_enabled(open_state_db(), invoker.id, True, now=T0)
    registry.remove(registry.get("helper").id)
    clock.at(T0 + timedelta(minutes=5))
    daemon.tick()
    [slot] = SlotStore(open_state_db()).all_slots(invoker.id)
    assert slot.outcome == "skipped"
    assert (slot.reason or "").startswith("blocked assignment:")
    assert _run(slot.run_id).status == "skipped"


def test_changes_apply_on_the_next_pass(daemon: ScheduleDaemon, clock: Clock) -> None:
    clock.at(T0 + timedelta(minutes=1))
    assert daemon.tick() <= daemon.poll_s
    inv = _add("late-added", cron="*/2 * * * *")
    clock.at(T0 + timedelta(minutes=2))
    daemon.tick()
    _settle(daemon)
    assert [s[:2] for s in _slots(inv)] == [("00:02", "ran")]


def test_pending_slot_is_finished_by_the_next_daemon(clock: Clock) -> None:
    """A daemon killed between recording a slot and creating its run: the next one creates
    exactly one run for it and executes it."""
    from wardian.invokers.schedule import SlotDecision

    inv = _add("crash")
    slot_time = T0 + timedelta(minutes=5)
    SlotStore(open_state_db()).record(inv, [SlotDecision(slot_time, "run", None, 0.0)],
                                      decided_at=slot_time)
    clock.at(slot_time + timedelta(seconds=1))
    d = ScheduleDaemon(clock=clock, drain=False, log=lambda line: None)
    d.open()
    try:
        d.tick()
        _settle(d)
    finally:
        d.close()
    [slot] = SlotStore(open_state_db()).all_slots(inv)
    assert slot.outcome == "ran" and slot.settled_at
    assert _run(slot.run_id).status == "succeeded"
    assert len(RunStore(open_state_db(), recover=False).list(invoker_id=inv)) == 1


def test_stop_cancels_a_run_still_running_after_the_timeout(clock: Clock) -> None:
    inv = _add("stuck", blueprint="slow")
    lines: list[str] = []
    d = ScheduleDaemon(clock=clock, drain=False, shutdown_timeout_s=0.2, log=lines.append)
    d.open()
    clock.at(T0 + timedelta(minutes=5))
    d.tick()
    [slot] = SlotStore(open_state_db()).all_slots(inv)
    wait_until(lambda: _run(slot.run_id).status == "running", what="the slot's run started")
    d.close()  # GATE never opens: the run must be cancelled cleanly, not left running
    assert _run(slot.run_id).status == "cancelled"
    assert any("cancelling 1 run(s)" in line for line in lines)


def test_a_second_stop_cancels_at_once(clock: Clock) -> None:
    """An impatient second Ctrl-C does not wait out --shutdown-timeout."""
    inv = _add("impatient", blueprint="slow")
    lines: list[str] = []
    # A shutdown timeout of a day: close() returns (within pytest's timeout) only because
    # the second stop ended the wait, not because the wait ran out.
    d = ScheduleDaemon(clock=clock, drain=False, shutdown_timeout_s=86_400, log=lines.append)
    d.open()
    clock.at(T0 + timedelta(minutes=5))
    d.tick()
    [slot] = SlotStore(open_state_db()).all_slots(inv)
    wait_until(lambda: _run(slot.run_id).status == "running", what="the slot's run started")
    d.request_stop()
    d.request_stop()
    d.close()
    assert _run(slot.run_id).status == "cancelled"
    assert any("on a second stop signal" in line for line in lines)


def test_a_huge_backlog_never_floods(daemon: ScheduleDaemon, clock: Clock,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import wardian.invokers.daemon as daemon_module

    monkeypatch.setattr(daemon_module, "MAX_SLOTS_PER_TICK", 5)
    inv = _add("backlog", cron="* * * * *", misfire_grace_s=30, catch_up="all",
               max_catch_up=3)
    clock.at(T0 + timedelta(hours=1, seconds=45))
    for _ in range(20):
        if daemon.tick() > 0:
            break
    _settle(daemon)
    rows = SlotStore(open_state_db()).all_slots(inv)
    assert len(rows) == 60
    outcomes = [(r.outcome, "backlog" in (r.reason or ""), "cap" in (r.reason or ""))
                for r in rows]
    assert outcomes.count(("skipped", True, False)) == 55
    assert outcomes.count(("skipped", False, True)) == 2
    assert outcomes.count(("ran", False, False)) == 3


def test_a_failed_pass_is_retried_and_its_pending_slot_finished(
        daemon: ScheduleDaemon, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    import wardian.invokers.daemon as daemon_module

    real = daemon_module.dispatch_slot
    calls = {"n": 0}

    def flaky(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("database hiccup")
        return real(*args, **kwargs)

    monkeypatch.setattr(daemon_module, "dispatch_slot", flaky)
    inv = _add("flaky")
    clock.at(T0 + timedelta(minutes=5))
    daemon.tick()
    assert [s.outcome for s in SlotStore(open_state_db()).all_slots(inv)] == ["pending"]
    assert any("loop pass failed" in line for line in daemon.lines)  # type: ignore[attr-defined]
    daemon.tick()
    _settle(daemon)
    [slot] = SlotStore(open_state_db()).all_slots(inv)
    assert slot.outcome == "ran" and _run(slot.run_id).status == "succeeded"
