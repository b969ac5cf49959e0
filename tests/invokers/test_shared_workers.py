"""Exactly-once across machines (issue 18): leased run claims, reclaiming an expired lease,
LISTEN/NOTIFY wake-ups, and real worker processes sharing one
PostgreSQL database (two claiming concurrently; one killed with SIGKILL mid-run, its run
resumed by the other).

The claim/reclaim core runs on both backends (`backend` in tests/conftest.py): on SQLite a
claim belongs to a live pid, on PostgreSQL to a lease judged by the server's clock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.engine import crash_actions
from tests.invokers.test_session_close_drain import write_noop_blueprint

from wardian.config import open_state_db, user_library_dir
from wardian.engine.actions import unregister_action
from wardian.engine.runs import LEASE_EXPIRED, LeaseLost, RunStore
from wardian.invokers.drain import FireLog, idempotency_key
from wardian.invokers.store import InvokerStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import SessionEventQueue

REPO = Path(__file__).resolve().parents[2]


def _queued_run(store: RunStore, key: str = "k1") -> str:
    run, created = store.create_run(
        blueprint_id="noop-test", agent_id=None, assignments={}, inputs={},
        invocation={"trigger": "manual", "payload": {}}, idempotency_key=key)
    assert created
    return run.id


def _expire_claim(store: RunStore, run_id: str, backend: str) -> None:
    """Make the claim of `run_id` one nobody holds any more: a dead pid on SQLite, a lease
    in the past on PostgreSQL (what a killed worker leaves behind)."""
    if backend == "sqlite":
        store.conn.execute("UPDATE runs SET owner_pid = 2147483646 WHERE id = ?", (run_id,))
    else:
        store.conn.execute("UPDATE runs SET lease_expires = 0 WHERE id = ?", (run_id,))


def test_a_claim_is_taken_once_and_an_abandoned_one_reclaimed(backend: str) -> None:
    write_noop_blueprint()
    store = RunStore(open_state_db())
    run_id = _queued_run(store)
    assert store.claim(run_id) is True
    assert store.claim(run_id) is False  # only one claim wins
    store.keep_lease(run_id)  # the live owner keeps it (no-op on SQLite)
    # the owner is alive / leased
    assert RunStore(open_state_db(), recover=False).mark_interrupted_orphans() == []
    row = store.conn.execute("SELECT lease_owner, lease_expires FROM runs WHERE id = ?",
                             (run_id,)).fetchone()
    if backend == "postgres":
        assert row[0] and str(os.getpid()) in row[0] and row[1] is not None
    else:
        assert tuple(row) == (None, None)  # SQLite keeps its pid claim only

    _expire_claim(store, run_id, backend)
    assert RunStore(open_state_db(), recover=False).mark_interrupted_orphans() == [run_id]
    run = store.get(run_id, detail=True)
    assert run.status == "interrupted"
    assert (run.error == LEASE_EXPIRED) is (backend == "postgres")
    assert [e["kind"] for e in run.events].count("run.interrupted") == 1
    if backend == "postgres":
        store._renewed.clear()  # due for renewal now: the renewal finds it taken
        with pytest.raises(LeaseLost):
            store.keep_lease(run_id)


def test_a_finished_run_lets_go_of_its_lease(backend: str) -> None:
    write_noop_blueprint()
    store = RunStore(open_state_db())
    run_id = _queued_run(store, "k2")
    assert store.claim(run_id)
    store.finish(run_id, "succeeded")
    row = store.conn.execute("SELECT lease_owner, lease_expires FROM runs WHERE id = ?",
                             (run_id,)).fetchone()
    assert tuple(row) == (None, None)
    assert RunStore(open_state_db(), recover=False).mark_interrupted_orphans() == []


# --- PostgreSQL only -----------------------------------------------------------------------


@pytest.fixture
def pg(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    return pg_url


def test_a_pending_event_notifies_listeners_at_commit(pg: str) -> None:
    from wardian._pg_coord import Listener
    from wardian.runtime.session_events import EVENTS_CHANNEL

    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    queue = SessionEventQueue(open_state_db())
    with Listener(pg, EVENTS_CHANNEL) as listener:
        event, created = queue.append(agent_id=agent, boundary="clear", session_id="s1",
                                      source="cli", logging_enabled=True)
        assert created
        assert listener.wait(30) == [event.id]
        queue.append(agent_id=agent, boundary="clear", session_id="s1", source="cli",
                     logging_enabled=True)  # a re-delivery is no new work
        # Shown by the next notification, not by a quiet period: notifications arrive in
        # commit order, so one for the re-delivery would come first.
        later, created = queue.append(agent_id=agent, boundary="clear", session_id="s2",
                                      source="cli", logging_enabled=True)
        assert created
        assert listener.wait(30) == [later.id]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_daemon_drain_wakes_on_notify_not_on_a_poll(pg: str,
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    import threading

    import psycopg

    from wardian.invokers import daemon as daemon_module
    from wardian.runtime.session_events import EVENTS_CHANNEL

    # No fallback wake-up within the test: only the event's NOTIFY can start the drain.
    monkeypatch.setattr(daemon_module, "NOTIFY_FALLBACK_S", 600.0)
    write_noop_blueprint()
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    invokers = InvokerStore(open_state_db())
    inv = invokers.add("session-close", name="n", blueprint_id="noop-test", agent_id=agent,
                       assignments={}, config={"boundaries": []})
    invokers.set_enabled(inv.id, True)
    ready, drained = threading.Event(), threading.Event()

    def log(line: str) -> None:
        if "serve ready" in line:
            ready.set()
        if "drain: 1 event(s)" in line:
            drained.set()

    daemon = daemon_module.ScheduleDaemon(log=log, shutdown_timeout_s=5)
    thread = threading.Thread(target=daemon.serve)
    thread.start()
    try:
        assert ready.wait(60)
        with psycopg.connect(pg, autocommit=True) as conn:  # until the drain listens
            while not conn.execute("SELECT 1 FROM pg_stat_activity WHERE state = 'idle'"
                                   " AND query LIKE 'LISTEN %'").fetchone():
                assert thread.is_alive()
                drained.wait(0.05)
        event, _ = SessionEventQueue(open_state_db()).append(agent_id=agent, boundary="clear",
                                                             session_id="s1", source="cli",
                                                             logging_enabled=False)
        assert drained.wait(20), "the drain was not woken by the event's NOTIFY"
        (run,) = RunStore(open_state_db(), recover=False).list(invoker_id=inv.id)
        assert run.status == "succeeded" and event.id in str(run.idempotency_key)
    finally:
        daemon.request_stop()
        with psycopg.connect(pg, autocommit=True) as conn:  # wake the drain to stop
            conn.execute("SELECT pg_notify(%s, '')", (EVENTS_CHANNEL,))
        thread.join(60)
    assert not thread.is_alive()


def test_event_to_finished_run_writes_beside_other_workers(pg: str) -> None:
    """Recording a close, firing its invokers, claiming, running and finishing the runs take
    no exclusive writer lock: with another worker's narrow write transaction open for the
    whole time, every write here goes through (an exclusive one would wait for it and hit
    the lock timeout), so two workers' runs no longer queue behind one lock."""
    from wardian._db import StateDB
    from wardian._pg import PgConnection
    from wardian.config import state_db_path
    from wardian.invokers.drain import drain_once

    write_noop_blueprint()
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    store = InvokerStore(open_state_db())
    ids = []
    for i in range(2):
        inv = store.add("session-close", name=f"inv{i}", blueprint_id="noop-test",
                        agent_id=agent, assignments={},
                        config={"boundaries": [], "require_archive": i == 1})
        store.set_enabled(inv.id, True)
        ids.append(inv.id)
    assert drain_once().idle  # every store opened and migrated before the other's write
    conn = StateDB.open(state_db_path()).conn
    other = PgConnection(pg, "state")
    conn.execute("SET lock_timeout = '3s'")
    try:
        with other.atomic(()):  # another worker, mid-write
            queue = SessionEventQueue(open_state_db())
            for n in range(3):
                queue.append(agent_id=agent, boundary="clear", session_id=f"s{n}",
                             source="cli", logging_enabled=False)
            report = drain_once()
    finally:
        conn.execute("RESET lock_timeout")
        other.close()
    assert report.errors == []
    assert (report.events, report.runs_created, report.skipped, report.executed) == (3, 3, 3, 3)
    runs = RunStore(open_state_db(), recover=False).list(limit=100)
    assert sorted(r.status for r in runs) == ["skipped"] * 3 + ["succeeded"] * 3
    assert not FireLog(open_state_db()).undispatched()


def test_an_event_another_worker_is_firing_is_left_to_it(pg: str) -> None:
    """Two workers woken by one event's NOTIFY no longer both fire it: the one holding the
    event's claim fires it, the other passes it by (and would run its queued runs); once
    the claim ends — released, or its worker killed — the next pass fires it."""
    from wardian._pg import PgConnection
    from wardian._pg_coord import try_session_lock
    from wardian.invokers.drain import drain_once

    write_noop_blueprint()
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    store = InvokerStore(open_state_db())
    inv = store.add("session-close", name="n", blueprint_id="noop-test", agent_id=agent,
                    assignments={}, config={"boundaries": []})
    store.set_enabled(inv.id, True)
    queue = SessionEventQueue(open_state_db())
    event, _ = queue.append(agent_id=agent, boundary="clear", session_id="s1", source="cli",
                            logging_enabled=False)
    other = PgConnection(pg, "state")  # another worker, mid-way through the event
    try:
        with try_session_lock(other, f"session-event:{event.id}") as held:
            assert held
            report = drain_once()
            assert (report.events, report.runs_created, report.errors) == (0, 0, [])
            assert queue.get(event.id).status == "pending"
            assert RunStore(open_state_db(), recover=False).list(invoker_id=inv.id) == []
    finally:
        other.close()
    report = drain_once()
    assert (report.events, report.runs_created, report.executed) == (1, 1, 1)
    (run,) = RunStore(open_state_db(), recover=False).list(invoker_id=inv.id)
    assert run.status == "succeeded" and not FireLog(open_state_db()).undispatched()


def _worker(code: str, *args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=REPO,
                            env={**env, "PYTHONPATH": os.pathsep.join([str(REPO / "src"),
                                                                       str(REPO)])},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


RACER = (
    "from wardian.invokers.drain import drain_once\n"
    "while not drain_once(limit=20).idle:\n"
    "    pass\n"
)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_two_worker_processes_fire_each_event_invoker_exactly_once(pg: str) -> None:
    events, invokers = 60, 3
    write_noop_blueprint()
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    store = InvokerStore(open_state_db())
    ids = []
    for i in range(invokers):
        inv = store.add("session-close", name=f"inv{i}", blueprint_id="noop-test",
                        agent_id=agent, assignments={},
                        config={"boundaries": [], "require_archive": i == 2})
        store.set_enabled(inv.id, True)
        ids.append(inv.id)
    queue = SessionEventQueue(open_state_db())
    for n in range(events):
        queue.append(agent_id=agent, boundary="clear", session_id=f"s{n}", source="cli",
                     logging_enabled=False)
    workers = [_worker(RACER, env=dict(os.environ)) for _ in range(2)]
    for proc in workers:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err.decode()

    assert not queue.has_pending()
    runs = RunStore(open_state_db(), recover=False)
    every = runs.list(limit=10_000)
    keys = Counter(r.idempotency_key for r in every)
    wanted = {idempotency_key(i, e.id) for e in queue.list(limit=10_000) for i in ids}
    assert set(keys) == wanted and set(keys.values()) == {1}  # one run per (event, invoker)
    assert Counter(r.status for r in every) == {"succeeded": events * 2, "skipped": events}
    for run in every:  # each claimed once: one start, by one worker
        starts = [e for e in runs.events(run.id) if e["kind"] == "run.started"]
        assert len(starts) == (0 if run.status == "skipped" else 1), run.id
    fires = FireLog(open_state_db())
    assert fires.count() == events * invokers and not fires.undispatched()


CRASH = """\
blueprint: {id: crash-demo, name: Crash, version: 1}
triggers: [session-close, manual]
inputs:
  dir: {type: string}
steps:
  - id: one
    action: test_count
    with: {counter: "{{ inputs.dir }}/one.count"}
  - id: two
    action: test_block
    with:
      counter: "{{ inputs.dir }}/two.count"
      block_marker: "{{ inputs.dir }}/block"
      started: "{{ inputs.dir }}/started.fifo"
      release: "{{ inputs.dir }}/release.fifo"
  - id: three
    action: test_count
    with: {counter: "{{ inputs.dir }}/three.count"}
"""

WORKER_A = (
    "from tests.engine.crash_actions import register\n"
    "register()\n"
    "from wardian.invokers.drain import drain_once\n"
    "drain_once()\n"
)

WORKER_B = (
    "import sys, time\n"
    "from tests.engine.crash_actions import register\n"
    "register()\n"
    "from wardian.config import open_state_db\n"
    "from wardian.engine.runs import FINAL_STATUSES, RunStore\n"
    "from wardian.invokers.drain import drain_once\n"
    "runs = RunStore(open_state_db(), recover=False)\n"
    "while runs.get(sys.argv[1]).status not in FINAL_STATUSES:\n"
    "    drain_once()\n"
    "    time.sleep(0.05)  # a worker's idle poll; the lease expiry is what it waits for\n"
)


@pytest.fixture
def registered() -> Iterator[None]:
    crash_actions.register()
    yield
    for name in crash_actions.NAMES:
        unregister_action(name)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_kill9_worker_mid_run_is_resumed_by_another(pg: str, tmp_path: Path,
                                                    registered: None) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "started.fifo")
    os.mkfifo(work / "release.fifo")
    (work / "block").write_text("block step two")
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "crash-demo.yaml").write_text(CRASH, encoding="utf-8")
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    invokers = InvokerStore(open_state_db())
    inv = invokers.add("session-close", name="crash", blueprint_id="crash-demo",
                       agent_id=agent, assignments={}, inputs={"dir": str(work)},
                       config={"boundaries": []})
    invokers.set_enabled(inv.id, True)
    event, _ = SessionEventQueue(open_state_db()).append(
        agent_id=agent, boundary="clear", session_id="s1", source="cli", logging_enabled=False)
    env = {**os.environ, "WARDIAN_RUN_LEASE_S": "1"}

    first = _worker(WORKER_A, env=env)
    try:
        with open(work / "started.fifo", encoding="utf-8") as fifo:  # step two is running
            assert fifo.read() == "running\n"
        run = RunStore(open_state_db(), recover=False).get(
            RunStore(open_state_db(), recover=False).list(invoker_id=inv.id)[0].id)
        assert run.status == "running"
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.communicate(timeout=60)
    assert first.returncode == -signal.SIGKILL

    (work / "block").unlink()
    second = _worker(WORKER_B, run.id, env=env)
    _, err = second.communicate(timeout=240)
    assert second.returncode == 0, err.decode()

    final = RunStore(open_state_db(), recover=False).get(run.id, detail=True)
    assert final.status == "succeeded", final.error
    assert (_lines(work / "one.count"), _lines(work / "two.count"),
            _lines(work / "three.count")) == (1, 2, 1)  # step one was not repeated
    assert [(a.step_id, a.attempt, a.status) for a in final.attempts] == [
        ("one", 1, "succeeded"), ("two", 1, "interrupted"), ("two", 2, "succeeded"),
        ("three", 1, "succeeded")]
    kinds = [e["kind"] for e in final.events]
    assert kinds.count("run.started") == 2 and "run.resumed" in kinds
    interrupted = [e for e in final.events if e["kind"] == "run.interrupted"]
    assert [e["data"]["reason"] for e in interrupted] == ["lease expired"]
    owners = {e["data"]["lease_owner"] for e in final.events if e["kind"] == "run.started"}
    assert len(owners) == 2  # two workers, one after the other
    assert not FireLog(open_state_db()).undispatched() and event.id


SERVE_A = (
    "from tests.engine.crash_actions import register\n"
    "register()\n"
    "from wardian.invokers.daemon import ScheduleDaemon\n"
    "ScheduleDaemon().serve()\n"
)

DRAINER = (  # another machine's long-lived worker: the drain loop, until the run is final
    "import sys, threading\n"
    "from tests.engine.crash_actions import register\n"
    "register()\n"
    "from wardian.config import open_state_db\n"
    "from wardian.engine.runs import FINAL_STATUSES, RunStore\n"
    "from wardian.invokers.drain import drain_until\n"
    "stop = threading.Event()\n"
    "def watch():\n"
    "    runs = RunStore(open_state_db(), recover=False)\n"
    "    while runs.get(sys.argv[1]).status not in FINAL_STATUSES:\n"
    "        stop.wait(0.1)\n"
    "    stop.set()\n"
    "threading.Thread(target=watch).start()\n"
    "drain_until(stop, log=lambda line: print(line, file=sys.stderr), fallback_s=0.2)\n"
)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_kill9_of_the_scheduler_mid_run_is_resumed_by_another_worker(
        pg: str, tmp_path: Path, registered: None) -> None:
    # The expired lease of a scheduled run (no session-close fire points at it) is
    # reclaimed by whichever worker wakes next, not left for a manual resume.
    from wardian.invokers.schedule import ScheduleConfig

    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "started.fifo")
    os.mkfifo(work / "release.fifo")
    (work / "block").write_text("block step two")
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "crash-demo.yaml").write_text(CRASH.replace("session-close, manual",
                                                          "schedule, manual"),
                                            encoding="utf-8")
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    invokers = InvokerStore(open_state_db())
    inv = invokers.add("schedule", name="nightly", blueprint_id="crash-demo",
                       agent_id=agent, assignments={}, inputs={"dir": str(work)},
                       config=ScheduleConfig(every_s=0.5).to_config())
    invokers.set_enabled(inv.id, True)
    env = {**os.environ, "WARDIAN_RUN_LEASE_S": "1"}

    scheduler = _worker(SERVE_A, env=env)
    try:
        with open(work / "started.fifo", encoding="utf-8") as fifo:  # step two is running
            assert fifo.read() == "running\n"
        (run,) = RunStore(open_state_db(), recover=False).list(invoker_id=inv.id, status="running")
        os.kill(scheduler.pid, signal.SIGKILL)
    finally:
        scheduler.communicate(timeout=60)
    assert scheduler.returncode == -signal.SIGKILL
    assert run.trigger == "schedule"

    (work / "block").unlink()
    other = _worker(DRAINER, run.id, env=env)
    _, err = other.communicate(timeout=240)
    assert other.returncode == 0, err.decode()

    final = RunStore(open_state_db(), recover=False).get(run.id, detail=True)
    assert final.status == "succeeded", final.error
    assert (_lines(work / "one.count"), _lines(work / "two.count"),
            _lines(work / "three.count")) == (1, 2, 1)  # step one was not repeated
    kinds = [e["kind"] for e in final.events]
    assert kinds.count("run.started") == 2 and kinds.count("run.resumed") == 1
    interrupted = [e for e in final.events if e["kind"] == "run.interrupted"]
    assert [e["data"]["reason"] for e in interrupted] == ["lease expired"]
    pids = [e["data"]["pid"] for e in final.events if e["kind"] == "run.started"]
    assert pids == [scheduler.pid, other.pid]  # the scheduler, then the other worker
