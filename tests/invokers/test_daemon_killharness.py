"""kill -9 harness (issue 8 acceptance): >= 1,000 fast slots, random daemon kills and restarts,
several daemons started at once each round. Afterwards: 0 duplicate runs, 0 slots without a
recorded outcome, 0 gaps in any invoker's slot sequence, no run executed twice.

Random kill timing is the point of the harness (not synchronisation); every wait for a state
polls a condition with a deadline.
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

from wardian._util import parse_utc
from wardian.config import state_db_path, user_library_dir
from wardian.engine.runs import RunStore
from wardian.invokers.daemon import schedule_key
from wardian.invokers.schedule import ScheduleConfig
from wardian.invokers.schedule_ops import add_schedule, set_schedule_enabled
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


def _serve(log: Path) -> subprocess.Popen[bytes]:
    # The child keeps its own copy of the descriptor; the parent's closes at once.
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "wardian", "serve", "--poll", "0.02"],
                                stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ))


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
    AgentRegistry().add("coder", "builtin", model="curator-rules")
    specs: list[dict[str, Any]] = [
        {"name": "latest", "every_s": 0.02, "misfire_grace_s": 1.0},
        {"name": "all", "every_s": 0.03, "misfire_grace_s": 0.5, "catch_up": "all",
         "max_catch_up": 5, "overlap": "parallel"},
        {"name": "none", "every_s": 0.1, "misfire_grace_s": 2.0, "catch_up": "none",
         "overlap": "queue"},
    ]
    invokers: list[str] = []
    for spec in specs:
        added = add_schedule(blueprint_id="quick", agent="coder", assignments="{}", **spec)
        set_schedule_enabled(added.id, True)
        invokers.append(added.id)

    rng = random.Random(8)
    log = tmp_path / "serve.log"
    kills = refusals = rounds = 0
    started = time.monotonic()
    while _slot_count() < MIN_SLOTS or kills < MIN_KILLS:
        rounds += 1
        assert rounds <= MAX_ROUNDS, f"{_slot_count()} slots after {MAX_ROUNDS} kill rounds"
        procs = [_serve(log) for _ in range(rng.choice([1, 2, 3]))]
        pids = {f"started (pid {p.pid})" for p in procs}
        up_by = time.monotonic() + 30
        while not any(pid in log.read_text() for pid in pids):
            assert time.monotonic() < up_by, "no daemon started"
            time.sleep(0.01)
        deadline = time.monotonic() + rng.uniform(0.3, 1.5)
        while time.monotonic() < deadline:  # random kill time: not a synchronisation point
            time.sleep(0.01)
        # Kill every process still alive (the lock holder, and any starter that had not
        # reached the lock yet); the others refused because the lock was held.
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
        codes = [p.wait(30) for p in procs]
        assert set(codes) <= {4, -signal.SIGKILL}, codes
        refusals += codes.count(4)

    # A final daemon catches up and finishes everything, then stops cleanly. The invokers
    # are disabled first so that it reaches a moment with nothing in flight.
    rounds_s = time.monotonic() - started
    for inv_id in invokers:
        set_schedule_enabled(inv_id, False)
    final = _serve(log)
    slots = SlotStore()
    runs = RunStore(recover=False)
    end = time.monotonic() + 60
    while True:
        assert time.monotonic() < end, "final daemon did not settle"
        pending = slots.pending()
        unsettled = slots.unsettled()
        queued = [r for inv_id in invokers
                  for r in runs.list(invoker_id=inv_id, status="queued", limit=1)]
        if (not pending and not unsettled and not queued
                and f"started (pid {final.pid})" in log.read_text()):
            break
        time.sleep(0.05)
    final.send_signal(signal.SIGTERM)
    assert final.wait(60) == 0

    # --- verification ---------------------------------------------------------------------
    all_slots = slots.all_slots()
    assert len(all_slots) >= MIN_SLOTS
    assert not [s for s in all_slots if s.outcome == "pending"], "slot without an outcome"
    store = InvokerStore()
    for inv_id in invokers:
        mine = [s for s in all_slots if s.invoker_id == inv_id]
        config = ScheduleConfig.from_config(store.get(inv_id).config)
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
          f"{rounds_s:.1f} s, "
          f"total {time.monotonic() - started:.1f} s")
