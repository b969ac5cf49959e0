"""Kill -9 harness: drain workers killed at random points while 1,000 session-close events fire
5 invokers, then restarted, end with exactly one run or recorded skip per (event, invoker) and
no event lost (issue 7 acceptance). Two processes also race on the queue in some rounds.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.invokers.test_session_close_drain import write_noop_blueprint

from wardian.config import open_state_db
from wardian.engine.runs import RunStore
from wardian.invokers.drain import FireLog, idempotency_key
from wardian.invokers.store import InvokerStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import (
    SessionEvent,
    SessionEventQueue,
    drain_command,
)

EVENTS = 1000
INVOKERS = 5
KILLS = 10

RACER = (
    "from wardian.invokers.drain import drain_once\n"
    "while not drain_once(limit=50).idle:\n"
    "    pass\n"
)


def _setup() -> tuple[str, list[str]]:
    write_noop_blueprint()
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    store = InvokerStore(open_state_db())
    ids = []
    for i in range(INVOKERS):
        config = {"boundaries": [], "require_archive": i >= 3}  # 2 of them record skips
        inv = store.add("session-close", name=f"inv{i}", blueprint_id="noop-test",
                        agent_id=agent, assignments={}, config=config)
        store.set_enabled(inv.id, True)
        ids.append(inv.id)
    queue = SessionEventQueue(open_state_db())
    for n in range(EVENTS):
        queue.append(agent_id=agent, boundary="clear" if n % 2 else "shutdown",
                     session_id=f"s{n}", source="cli", logging_enabled=False)
    return agent, ids


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_kill9_workers_fire_exactly_once(wardian_home: Path) -> None:
    seed = int(os.environ.get("WARDIAN_KILL9_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    _agent, invokers = _setup()
    env = os.environ.copy()
    kills = 0
    started = time.monotonic()
    for round_ in range(KILLS):
        procs = [subprocess.Popen(drain_command(), env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)]
        if round_ % 3 == 1:  # a second process draining the same queue, without the lock
            procs.append(subprocess.Popen([sys.executable, "-c", RACER], env=env,
                                          stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        # A random kill point (not synchronisation): most land mid-drain.
        deadline = time.monotonic() + rng.uniform(0.4, 2.0)
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            time.sleep(0.01)
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait(timeout=30)
        fires = FireLog(open_state_db())
        if not SessionEventQueue(open_state_db()).has_pending() and not fires.undispatched(limit=1):
            break
    # Restart once more and let it finish.
    final = subprocess.run(drain_command(), env=env, capture_output=True, text=True,
                           timeout=200)
    assert final.returncode == 0, final.stderr[-2000:]
    elapsed = time.monotonic() - started

    queue = SessionEventQueue(open_state_db())
    events: list[SessionEvent] = queue.list(limit=EVENTS * 2)
    assert len(events) == EVENTS, f"seed {seed}: events lost"
    assert not queue.has_pending(), f"seed {seed}: events left pending"
    assert all(e.last_error is None for e in events), f"seed {seed}"

    runs = RunStore(open_state_db())  # opening marks runs of killed workers interrupted
    rows = runs.conn.execute(
        "SELECT idempotency_key, invoker_id, status, skip_reason FROM runs"
        " WHERE invoker_id IS NOT NULL").fetchall()
    keys = [r["idempotency_key"] for r in rows]
    expected = {idempotency_key(i, e.id) for i in invokers for e in events}
    assert len(keys) == len(set(keys)), f"seed {seed}: duplicate runs"
    assert set(keys) == expected, f"seed {seed}: missing runs"
    by_status: dict[str, int] = {}
    for r in rows:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
        if r["invoker_id"] in invokers[3:]:
            assert r["status"] == "skipped"
            assert r["skip_reason"] == "conversation logging disabled"
        else:
            assert r["status"] in {"succeeded", "interrupted"}, (seed, dict(r))
    assert by_status.get("interrupted", 0) <= kills
    assert FireLog(open_state_db()).count() == EVENTS * INVOKERS
    assert not FireLog(open_state_db()).undispatched(limit=1)
    print(f"kill9: seed={seed} kills={kills} elapsed={elapsed:.1f}s statuses={by_status}")
