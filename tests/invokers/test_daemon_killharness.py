"""kill -9 harness (issue 8 acceptance): >= 1,000 fast slots, random daemon kills and restarts,
several daemons started at once each round. Afterwards: 0 duplicate runs, 0 slots without a
recorded outcome, 0 gaps in any invoker's slot sequence, no run executed twice.

Random kill timing is the point of the harness (not synchronisation). Every wait polls a
condition and ends when it holds or the processes it waits on have exited; nothing is bounded
by a clock except the test's timeout marker, a safety net for a hang (under load on 2 cores
a round just takes longer). Half the rounds time their kill from "ready" so that the loop
runs under load too; the other half from "started", killing daemons during recovery.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.waits import wait_until

from wardian._util import parse_utc
from wardian.app.schedules import add_schedule, set_schedule_enabled
from wardian.config import open_state_db, state_db_path, user_library_dir
from wardian.engine.runs import RunStore
from wardian.invokers.daemon import schedule_key
from wardian.invokers.schedule import ScheduleConfig
from wardian.invokers.slots import SlotStore
from wardian.invokers.store import InvokerStore
from wardian.runtime.agents import AgentRegistry

BLUEPRINT = """\
blueprint:
  id: quick
  name: Quick
  description: Does nothing; used by the kill harness.
  version: 1
triggers: [schedule, manual]
steps:
  - id: nothing
    action: noop
"""

MIN_SLOTS = 1000
MIN_KILLS = 5
MAX_ROUNDS = 400
"""A bound on kill rounds (a count, not a clock: under load a round just takes longer)."""
POLL_S = 0.01
"""How often a wait looks at the log or the database (an interval, not a deadline)."""


def _serve(log: Path) -> subprocess.Popen[bytes]:
    # The child keeps its own copy of the descriptor; the parent's closes at once.
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "wardian", "serve", "--poll", "0.02"],
                                stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ))


def _wait_for_line(log: Path, procs: list[subprocess.Popen[bytes]], word: str) -> bool:
    """Wait until one of `procs` logs ``wardian serve <word> (pid N)``; False when they all
    exited first (the refused ones exit 4, so a round whose holder crashed ends here)."""
    lines = {f"{word} (pid {p.pid})" for p in procs}

    def seen_or_gone() -> str | None:
        if any(line in log.read_text() for line in lines):
            return "seen"
        if all(p.poll() is not None for p in procs):  # then look once more
            return "seen" if any(line in log.read_text() for line in lines) else "gone"
        return None
    found = wait_until(seen_or_gone, what=f"a serve logging '{word}' or all of them exiting",
                       detail=lambda: log.read_text()[-2000:], poll_s=POLL_S)
    return found == "seen"


def _caught_up(slots: SlotStore, configs: dict[str, ScheduleConfig]) -> bool:
    """Whether every invoker has a recorded slot for each fire time up to its disable."""
    for inv_id, config in configs.items():
        state = slots.state(inv_id)
        if state is None or state.disabled_at is None:
            return False
        since = parse_utc(state.active_since)
        last = slots.last_slot(inv_id)
        start = max(last, since) if last else since
        if config.fire_times.between(start, parse_utc(state.disabled_at), limit=1):
            return False
    return True


def _slot_count() -> int:
    conn = sqlite3.connect(state_db_path(), timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM schedule_slots").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.timeout(900)  # a safety net for a hung daemon, not a budget
def test_kill_dash_nine_never_duplicates_or_loses_a_slot(tmp_path: Path) -> None:
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "quick.yaml").write_text(BLUEPRINT)
    AgentRegistry(open_state_db()).add("coder", "builtin", model="curator-rules")
    specs: list[dict[str, Any]] = [
        {"name": "latest", "every_s": 0.02, "misfire_grace_s": 1.0},
        {"name": "all", "every_s": 0.03, "misfire_grace_s": 0.5, "catch_up": "all",
         "max_catch_up": 5, "overlap": "parallel"},
        {"name": "none", "every_s": 0.1, "misfire_grace_s": 2.0, "catch_up": "none",
         "overlap": "queue"},
    ]
    invokers: list[str] = []
    for spec in specs:
        added = add_schedule(open_state_db(), blueprint_id="quick", agent="coder",
                             assignments="{}", **spec)
        set_schedule_enabled(open_state_db(), added.id, True)
        invokers.append(added.id)

    rng = random.Random(8)
    log = tmp_path / "serve.log"
    kills = refusals = rounds = 0
    started = time.monotonic()
    while _slot_count() < MIN_SLOTS or kills < MIN_KILLS:
        rounds += 1
        assert rounds <= MAX_ROUNDS, f"{_slot_count()} slots after {MAX_ROUNDS} kill rounds"
        procs = [_serve(log) for _ in range(rng.choice([1, 2, 3]))]
        word = rng.choice(["started", "ready"])
        if not _wait_for_line(log, procs, word):
            codes = [p.wait() for p in procs]
            raise AssertionError(f"no daemon {word}: exit codes {codes}")
        deadline = time.monotonic() + rng.uniform(0.3, 1.5)
        while time.monotonic() < deadline:  # random kill time: not a synchronisation point
            time.sleep(0.01)
        # Kill every process still alive (the lock holder, and any starter that had not
        # reached the lock yet); the others refused because the lock was held.
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
        codes = [p.wait() for p in procs]  # SIGKILL cannot be ignored
        assert set(codes) <= {4, -signal.SIGKILL}, codes
        refusals += codes.count(4)

    # A final daemon catches up and finishes everything, then stops cleanly. The invokers
    # are disabled first so that it reaches a moment with nothing in flight: every slot up
    # to the disable recorded (a pass after "ready" did that) and nothing left to run.
    rounds_s = time.monotonic() - started
    store = InvokerStore(open_state_db())
    configs = {inv_id: ScheduleConfig.from_config(store.get(inv_id).config)
               for inv_id in invokers}
    for inv_id in invokers:
        set_schedule_enabled(open_state_db(), inv_id, False)
    final = _serve(log)
    assert _wait_for_line(log, [final], "ready"), f"final daemon exited {final.wait()}"
    slots = SlotStore(open_state_db())
    runs = RunStore(open_state_db(), recover=False)
    wait_until(lambda: _caught_up(slots, configs) and not slots.pending()
               and not slots.unsettled() and not [
                   r for inv_id in invokers
                   for r in runs.list(invoker_id=inv_id, status="queued", limit=1)],
               what="the final daemon settling every slot", watch=[final],
               detail=lambda: log.read_text()[-2000:], poll_s=POLL_S,
               cap_s=600)  # thousands of slots owed: within this test's 900 s marker
    final.send_signal(signal.SIGTERM)
    stop_sent = time.monotonic()
    assert final.wait() == 0  # waits on the process; the timeout marker catches a hang
    stop_s = time.monotonic() - stop_sent

    # --- verification ---------------------------------------------------------------------
    all_slots = slots.all_slots()
    assert len(all_slots) >= MIN_SLOTS
    assert not [s for s in all_slots if s.outcome == "pending"], "slot without an outcome"
    for inv_id in invokers:
        mine = [s for s in all_slots if s.invoker_id == inv_id]
        assert mine, f"invoker {inv_id[:8]} has no slots"
        config = configs[inv_id]
        state = slots.state(inv_id)
        assert state is not None
        expected = config.fire_times.between(parse_utc(state.active_since),
                                             parse_utc(mine[-1].scheduled_time))
        assert [parse_utc(s.scheduled_time) for s in mine] == expected, "gap or extra slot"
        for s in mine:
            if s.outcome == "ran":
                assert s.run_id is not None
                run = runs.get(s.run_id)
                assert run.idempotency_key == schedule_key(inv_id, s.scheduled_time)
            elif s.outcome == "coalesced":
                assert s.run_id and s.into_slot
            else:
                assert s.reason
        if config.catch_up == "none":
            assert not [s for s in mine if s.outcome == "coalesced"]
    ran_ids = [s.run_id for s in all_slots if s.outcome == "ran"]
    assert len(ran_ids) == len(set(ran_ids)), "two slots share one run"
    conn = runs.conn
    per_slot = Counter(
        r[0] for r in conn.execute(
            "SELECT idempotency_key FROM runs WHERE invoker_id IN (?, ?, ?)", invokers))
    assert max(per_slot.values()) == 1, "duplicate run for one slot"
    assert len(per_slot) == len(ran_ids) + sum(
        1 for s in all_slots if s.outcome == "skipped" and s.run_id)
    starts = Counter(r[0] for r in conn.execute(
        "SELECT run_id FROM run_events WHERE kind = 'run.started'"))
    assert not starts or max(starts.values()) == 1, "a run executed twice"
    statuses = Counter(r[0] for r in conn.execute(
        "SELECT status FROM runs WHERE invoker_id IN (?, ?, ?)", invokers))
    failed = [r[0] for r in conn.execute(
        "SELECT error FROM runs WHERE status = 'failed' AND invoker_id IN (?, ?, ?)", invokers)]
    assert set(statuses) <= {"succeeded", "interrupted", "skipped"}, (statuses, failed[:3])
    assert kills >= MIN_KILLS
    outcomes = Counter(s.outcome for s in all_slots)
    print(f"\nkill harness: {len(all_slots)} slots {dict(outcomes)}, runs {dict(statuses)}, "
          f"{kills} kill -9 in {rounds} rounds, {refusals} refused starts, kill rounds "
          f"{rounds_s:.1f} s, SIGTERM to exit {stop_s:.2f} s, "
          f"total {time.monotonic() - started:.1f} s")
