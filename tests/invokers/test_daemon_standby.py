"""A second ``wardian serve`` waits as a standby and takes over from a killed daemon (issue 18).

On SQLite the standby is a second ``serve`` of the same data directory (one machine): it
waits for the machine's daemon lock, which the OS drops when the holder is killed. On
PostgreSQL it runs in another data directory standing for another machine: it holds its own
machine's lock and waits for the database's scheduler lock, which the server drops when the
killed holder's connection closes. Either way it must then fire the next schedule slot
exactly once: no slot twice, none lost, every run started once.

Waits poll a condition (the log, the database); the timeout marker is a safety net.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.waits import wait_until

from wardian._util import parse_utc
from wardian.app.schedules import add_schedule, set_schedule_enabled
from wardian.config import open_state_db
from wardian.engine.runs import FINAL_STATUSES, RunStore
from wardian.invokers.daemon import schedule_key
from wardian.invokers.schedule import ScheduleConfig
from wardian.invokers.slots import SlotStore
from wardian.invokers.store import InvokerStore
from wardian.runtime.agents import AgentRegistry

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

BLUEPRINT = """\
blueprint:
  id: tick
  name: Tick
  description: Does nothing; a schedule the standby must carry on.
  version: 1
triggers: [schedule, manual]
steps:
  - id: nothing
    action: noop
"""


def _until(condition: Callable[[], Any], procs: list[subprocess.Popen[bytes]],
           what: str) -> Any:
    """`tests.waits.wait_until` for `condition`; fails when one of `procs` exited first."""
    return wait_until(condition, what=what, watch=procs)


def _serve(home: Path, log: Path, *, host: str | None = None) -> subprocess.Popen[bytes]:
    """``wardian serve`` of the data directory `home` (on the machine named `host`)."""
    env = {**os.environ, "WARDIAN_HOME": str(home),
           # A run the killed daemon left running is reclaimed after 1 s, not 30.
           "WARDIAN_RUN_LEASE_S": "1", **({"WARDIAN_HOST_NAME": host} if host else {})}
    with log.open("ab") as out:  # the child keeps its own descriptor
        return subprocess.Popen([sys.executable, "-m", "wardian", "serve", "--poll", "0.05"],
                                stdout=out, stderr=subprocess.STDOUT, env=env)


def _started_by(runs: RunStore) -> dict[str, list[int]]:
    """run id -> the pids that started it (one entry per ``run.started``)."""
    found: dict[str, list[int]] = {}
    for run_id, data in runs.conn.execute(
            "SELECT run_id, data FROM run_events WHERE kind = 'run.started'"):
        found.setdefault(str(run_id), []).append(int(json.loads(data).get("pid") or 0))
    return found


def test_a_standby_takes_over_from_a_killed_daemon_and_fires_the_next_slot_once(
        backend: str, wardian_home: Path, tmp_path: Path) -> None:
    homes = [wardian_home]
    if backend == "postgres":  # another machine: its own data directory, the same database
        homes.append(tmp_path / "machine-b")
        homes[1].mkdir(mode=0o700)
    for home in homes:  # blueprints are files: each machine has its own library
        (home / "library").mkdir(parents=True, exist_ok=True)
        (home / "library" / "tick.yaml").write_text(BLUEPRINT)
    AgentRegistry(open_state_db()).add("coder", "builtin", model="curator-rules")
    inv = add_schedule(open_state_db(), blueprint_id="tick", name="tick", agent="coder",
                       assignments="{}",
                       every_s=0.5, misfire_grace_s=60)
    set_schedule_enabled(open_state_db(), inv.id, True)
    slots, runs = SlotStore(open_state_db()), RunStore(open_state_db(), recover=False)

    first = _serve(homes[0], tmp_path / "first.log")
    second: subprocess.Popen[bytes] | None = None
    try:
        _until(lambda: f"ready (pid {first.pid})" in (tmp_path / "first.log").read_text(),
               [first], "first serve ready")
        second = _serve(homes[-1], tmp_path / "second.log")
        standby = _until(lambda: next((line for line in (tmp_path / "second.log").read_text()
                                       .splitlines() if f"standby (pid {second.pid})" in line),
                                      None), [first, second], "second serve on standby")
        assert (f"pid {first.pid}" in standby) if backend == "sqlite" else (
            "another machine" in standby), standby

        def first_ran() -> bool:
            started = _started_by(runs)
            return any(first.pid in pids for pids in started.values())

        _until(first_ran, [first, second], "a slot fired by the first serve")
        assert not any(second.pid in pids for pids in _started_by(runs).values())
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait() == -signal.SIGKILL
        last = max(parse_utc(s.scheduled_time) for s in slots.all_slots())

        def next_slot_done() -> Any:
            # The first later slot that ran: under load the take-over can come after slots
            # that are then skipped (overlap with a run the killed daemon left), with no run.
            later = [s for s in slots.all_slots() if parse_utc(s.scheduled_time) > last
                     and s.outcome == "ran" and s.run_id]
            run_id = later[0].run_id if later else None
            if run_id is None:
                return None
            return later[0] if runs.get(run_id).status in FINAL_STATUSES else None

        following = _until(next_slot_done, [second], "the standby firing the next slot")
        log = (tmp_path / "second.log").read_text()
        assert "standby taking over" in log and f"ready (pid {second.pid})" in log, log
        second.send_signal(signal.SIGTERM)
        assert second.wait() == 0
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()

    # The next slot: one outcome, one run, started once, by the standby.
    assert following.outcome == "ran", following
    started = _started_by(runs)
    assert started[following.run_id] == [second.pid]
    # The whole sequence: no gap and no slot twice across the hand-over; one run per key,
    # each started at most once (a run the killed daemon had started may be resumed by the
    # standby: that is a second start of an interrupted run, never of a finished one).
    config = ScheduleConfig.from_config(InvokerStore(open_state_db()).get(inv.id).config)
    mine = slots.all_slots()
    state = slots.state(inv.id)
    assert state is not None
    expected = config.fire_times.between(parse_utc(state.active_since),
                                         parse_utc(mine[-1].scheduled_time))
    assert [parse_utc(s.scheduled_time) for s in mine] == expected, "gap or extra slot"
    keys = Counter(str(r[0]) for r in runs.conn.execute(
        "SELECT idempotency_key FROM runs WHERE invoker_id = ?", (inv.id,)))
    assert set(keys.values()) == {1}, "two runs for one slot"
    for s in mine:
        if s.outcome == "ran":
            assert s.run_id and runs.get(s.run_id).idempotency_key == schedule_key(
                inv.id, s.scheduled_time)
    for run_id, pids in started.items():
        events = [e["kind"] for e in runs.events(run_id)]
        assert len(pids) == 1 or "run.interrupted" in events, (run_id, pids, events)
    assert {p for pids in started.values() for p in pids} <= {first.pid, second.pid}


def _status(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``wardian serve --status ARGS`` as its own process, on the machine of `home`."""
    return subprocess.run([sys.executable, "-m", "wardian", "serve", "--status", *args],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "WARDIAN_HOME": str(home)})


def test_status_on_either_machine_names_the_active_serve_and_the_standby(
        pg_url: str, wardian_home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ``serve`` on one PostgreSQL database (two data directories: two machines).
    ``--status`` asked on either machine says which one is active (it holds the
    database's scheduler lock) and which waits as standby, and which of them belongs to
    the data directory asked; on the standby's machine it used to name the standby as if
    it ran. After the active one is killed, the standby is active."""
    import socket

    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    homes = [wardian_home, tmp_path / "machine-b"]
    homes[1].mkdir(mode=0o700)
    first = _serve(homes[0], tmp_path / "first.log")
    second: subprocess.Popen[bytes] | None = None
    try:
        _until(lambda: f"ready (pid {first.pid})" in (tmp_path / "first.log").read_text(),
               [first], "first serve ready")
        second = _serve(homes[1], tmp_path / "second.log")
        _until(lambda: f"standby (pid {second.pid})" in (tmp_path / "second.log").read_text(),
               [first, second], "second serve on standby")
        host = socket.gethostname()
        for home, mine in ((homes[0], "active"), (homes[1], "standby")):
            done = _status(home, "--json")
            assert done.returncode == 0, done.stderr
            doc = json.loads(done.stdout)
            assert (doc["running"], doc["pid"], doc["host"], doc["here"]) == (
                True, first.pid, host, mine), doc
            assert parse_utc(doc["since"]) and [(s["pid"], s["host"]) for s in
                                                doc["standbys"]] == [(second.pid, host)]
            text = _status(home)
            assert text.returncode == 0, text.stderr
            lines = text.stdout.splitlines()
            assert lines[0].startswith(f"wardian serve is running: pid {first.pid} on {host}"
                                       ), text.stdout
            assert lines[1].startswith(f"standby: pid {second.pid} on {host}"), text.stdout
            assert "this data directory's" in lines[0 if mine == "active" else 1], text.stdout
            assert str(second.pid) not in lines[0], text.stdout
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait() == -signal.SIGKILL
        _until(lambda: f"ready (pid {second.pid})" in (tmp_path / "second.log").read_text(),
               [second], "the standby taking over")
        doc = json.loads(_status(homes[1], "--json").stdout)
        assert (doc["pid"], doc["here"], doc["standbys"]) == (second.pid, "active", [])
        doc = json.loads(_status(homes[0], "--json").stdout)
        assert (doc["pid"], doc["here"]) == (second.pid, None)
        second.send_signal(signal.SIGTERM)
        assert second.wait() == 0
        done = _status(homes[0])
        assert done.returncode == 1 and "not running" in done.stdout, done.stdout
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
