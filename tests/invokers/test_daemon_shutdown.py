"""Stopping ``wardian serve`` never waits without a bound, and leaves what it does not finish
resumable (daemon.py "Stopping").

* A run whose step ignores ``should_stop()`` used to keep the stopped daemon from exiting at
  all: the run workers were `ThreadPoolExecutor` threads, which the interpreter joins at exit,
  after the daemon had logged that it was leaving the run for the next start.
* A run queued behind another on an invoker's serial lane was cancelled by the stop ("cancelled
  before it ran") instead of being left for the next start.
* The session-close drain's run was never asked to cancel: the stop waited for the drain
  thread, gave up, and exited with the run still going.

Synchronisation is by a FIFO (the step says it started) and by polling recorded state;
no sleeps, no time budgets (the timeout marker only catches a hang).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.waits import wait_until
from typer.testing import CliRunner

from wardian.app.schedules import add_schedule, set_schedule_enabled
from wardian.config import open_state_db, user_library_dir
from wardian.engine.actions import register_action, unregister_action
from wardian.engine.executor import resume_run
from wardian.engine.runs import Run, RunStore
from wardian.invokers.daemon import ScheduleDaemon
from wardian.invokers.slots import SlotStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import record_session_close

pytestmark = pytest.mark.timeout(120)  # catches a hang; nothing here measures time

BLUEPRINT = """\
blueprint:
  id: {id}
  name: Shutdown test
  description: Used to test how the daemon stops.
  version: 1
triggers: [schedule, session-close, manual]
steps:
  - id: work
    action: {action}
"""

GATE = threading.Event()


def _wait_gate(ctx: Any, **_: Any) -> str:
    """Runs until GATE opens or the run is asked to stop (a well-behaved slow step)."""
    while not GATE.wait(0.01):
        if ctx.should_stop():
            return "stopped"
    return "released"


@pytest.fixture(autouse=True)
def library() -> Iterator[None]:
    register_action("test.wait_gate", replace=True)(_wait_gate)
    # The subprocess daemon registers a `test.stuck` that never returns; here (the next
    # start) it is a step that succeeds, so a resumed run can finish.
    register_action("test.stuck", replace=True)(lambda ctx, **_: "done")
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gate.yaml").write_text(BLUEPRINT.format(id="gate", action="test.wait_gate"))
    (folder / "stuck.yaml").write_text(BLUEPRINT.format(id="stuck", action="test.stuck"))
    AgentRegistry(open_state_db()).add("coder", "builtin", model="curator-rules")
    GATE.clear()
    yield
    GATE.set()
    unregister_action("test.wait_gate")
    unregister_action("test.stuck")


def _until(condition: Callable[[], Any], what: str) -> Any:
    """`tests.waits.wait_until`: poll recorded state until `condition` holds."""
    return wait_until(condition, what=what)


def _runs(invoker_id: str) -> list[Run]:
    return RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)


# A daemon whose schedule step never returns and ignores should_stop(); it writes to the
# FIFO (argv[1]) once the step runs. The stop waits 0 s, then 0 s for the cancel.
STUCK_SERVE = """
import sys, threading
from wardian.engine.actions import register_action
from wardian.invokers.daemon import ScheduleDaemon

never = threading.Event()

def stuck(ctx, **_):
    with open(sys.argv[1], "w") as fifo:
        fifo.write("started\\n")
    never.wait()
    return "never"

register_action("test.stuck", replace=True)(stuck)
sys.exit(ScheduleDaemon(shutdown_timeout_s=0, cancel_grace_s=0, drain=False).serve())
"""


@pytest.fixture
def stuck_serve(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", STUCK_SERVE, str(fifo)], stdout=out,
                                stderr=subprocess.STDOUT, env=dict(os.environ))
    yield proc, fifo, log
    if proc.poll() is None:  # the hang this file is about: do not leave it behind
        proc.kill()
    proc.wait()


@pytest.mark.slow
def test_a_step_that_never_returns_does_not_keep_a_stopped_daemon_alive(
        stuck_serve: tuple[subprocess.Popen[bytes], Path, Path]) -> None:
    proc, fifo, log = stuck_serve
    invoker = add_schedule(open_state_db(), blueprint_id="stuck", name="stuck", agent="coder",
                           assignments="{}", every_s=1.0)
    set_schedule_enabled(open_state_db(), invoker.id, True)
    with fifo.open() as started:  # blocks until the step runs in the daemon
        assert started.readline() == "started\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait() == 0  # before the fix: "wardian serve stopped", then no exit
    text = log.read_text()
    [running] = [r for r in _runs(invoker.id) if r.status == "running"]
    assert f"exiting with 1 run(s) still running ({running.id[:8]})" in text
    assert "wardian serve stopped" in text
    # Left resumable: its owner is gone, so the next start marks it interrupted …
    assert running.owner_pid == proc.pid
    nxt = ScheduleDaemon(drain=False, log=lambda line: None)
    nxt.open()
    try:
        assert RunStore(open_state_db(), recover=False).get(running.id).status == "interrupted"
        # … and runs the slots' runs that stayed queued behind it on the invoker's lane.
        _until(lambda: not nxt._inflight.count() and not SlotStore(open_state_db()).unsettled(),
               "the next start to finish the queued runs")
    finally:
        nxt.close()
    statuses = sorted(r.status for r in _runs(invoker.id) if r.id != running.id)
    assert set(statuses) <= {"succeeded"}, statuses
    assert resume_run(running.id, store=RunStore(open_state_db())).status == "succeeded"


def _schedule(name: str, blueprint: str, **kwargs: Any) -> str:
    from tests.invokers.test_daemon_policies import T0

    invoker = add_schedule(open_state_db(), blueprint_id=blueprint, name=name, agent="coder",
                           assignments="{}", cron="*/5 * * * *", **kwargs)
    set_schedule_enabled(open_state_db(), invoker.id, True, now=T0)
    return invoker.id


def test_a_run_queued_behind_a_running_one_is_left_for_the_next_start() -> None:
    from tests.invokers.test_daemon_policies import T0, Clock

    clock = Clock(T0)
    inv = _schedule("lane", "gate", overlap="queue", catch_up="all")
    lines: list[str] = []
    d = ScheduleDaemon(clock=clock, drain=False, shutdown_timeout_s=0, cancel_grace_s=30,
                       log=lines.append)
    d.open()
    clock.at(T0 + timedelta(minutes=10, seconds=1))  # two slots due: two runs on one lane
    d.tick()
    first, second = sorted(SlotStore(open_state_db()).all_slots(inv),
                           key=lambda s: s.scheduled_time)
    assert first.run_id and second.run_id
    first_id: str = first.run_id
    second_id: str = second.run_id
    _until(lambda: RunStore(open_state_db(), recover=False).get(first_id).status == "running",
           "run 1")
    d.request_stop()
    d.close()
    assert RunStore(open_state_db(), recover=False).get(first_id).status == "cancelled"
    # not cancelled
    assert RunStore(open_state_db(), recover=False).get(second_id).status == "queued"
    assert any("left queued for the next start" in line for line in lines)
    GATE.set()
    nxt = ScheduleDaemon(clock=clock, drain=False, log=lambda line: None)
    nxt.open()
    try:
        _until(lambda: RunStore(open_state_db(), recover=False).get(second_id).status
               == "succeeded", "the next start to run it")
    finally:
        nxt.close()


def test_the_drains_run_is_asked_to_cancel_and_the_rest_stays_pending(
        cli: CliRunner) -> None:
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "gate",
                 "--name", "closing", "--agent", "coder", "--assignments", "{}")
    assert res.exit_code == 0, res.output
    inv = res.stdout.strip()
    assert invoke(cli, "automation", "session-close", "enable", inv).exit_code == 0
    agent = AgentRegistry(open_state_db()).get("coder")
    record_session_close(agent.id, "shutdown", session_id="s1", start_drain=False)
    record_session_close(agent.id, "shutdown", session_id="s2", start_drain=False)
    lines: list[str] = []
    d = ScheduleDaemon(shutdown_timeout_s=0, cancel_grace_s=30, log=lines.append)
    serving = threading.Thread(target=d.serve)
    serving.start()
    try:
        [run] = _until(lambda: [r for r in _runs(inv) if r.status == "running"], "a run")
    finally:
        d.request_stop()
        serving.join()
    statuses = sorted(r.status for r in _runs(inv))
    # The running one was cancelled (before the fix it was abandoned, still running); the
    # other event's run was created in the same pass but not started: the next pass runs it.
    assert RunStore(open_state_db(), recover=False).get(run.id).status == "cancelled"
    assert statuses == ["cancelled", "queued"], statuses
    assert any("cancelling 1 run(s)" in line and run.id[:8] in line for line in lines)


def test_a_stop_during_a_pass_leaves_its_undispatched_slots_pending_for_the_next_start() -> None:
    from tests.invokers.test_daemon_policies import T0, Clock

    clock = Clock(T0)
    inv = _schedule("backlog", "gate", catch_up="all", max_catch_up=2, misfire_grace_s=60)
    lines: list[str] = []
    d = ScheduleDaemon(clock=clock, drain=False, log=lines.append)

    def log(line: str) -> None:
        lines.append(line)
        if ": skipped (" in line:  # the pass logs the older, skipped slots first
            d.request_stop()

    d._log = log
    d.open()
    # Six slots owed: 5 to 25 past are missed (three skipped over the cap of two, two caught
    # up), 30 past is on time: three runs.
    clock.at(T0 + timedelta(minutes=30, seconds=1))
    d.tick()
    d.close()
    slots = SlotStore(open_state_db()).all_slots(inv)
    assert [s.outcome for s in slots] == ["skipped"] * 3 + ["pending"] * 3
    assert sum("left pending for the next start" in line for line in lines) == 3
    assert _runs(inv) == []
    GATE.set()
    nxt = ScheduleDaemon(clock=clock, drain=False, log=lambda line: None)
    nxt.open()
    try:
        _until(lambda: [s.outcome for s in SlotStore(open_state_db()).all_slots(inv)
                        ].count("ran") == 3
               and not nxt._inflight.count(), "the next start to run them")
    finally:
        nxt.close()
    assert [r.status for r in _runs(inv)] == ["succeeded"] * 3
