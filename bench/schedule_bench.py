"""Daemon benchmarks (issue 8): latencies with ``wardian serve`` running.

* ``schedule`` — **fire time -> run start**: one enabled schedule invoker (``--every``, default
  500 ms) of the no-op blueprint; for each slot that ran, ``runs.started_at`` minus the slot's
  scheduled time. Target p99 <= 1 s.
* ``daemon`` — **session-close event -> run start** with the daemon draining: events are
  recorded the way `wardian session close` does (the writer sees the daemon and starts no
  worker); ``runs.started_at`` minus ``session_events.created_at``. Target p99 <= 500 ms.
  This is `bench_daemon`, the scenario ``bench/invoker_bench.py`` leaves to the schedules work.

Everything runs in a temporary WARDIAN_HOME with a real ``wardian serve`` subprocess.

Usage: python bench/schedule_bench.py [--slots N] [--events N] [--every DUR] [--json]
Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from invoker_bench import BenchEnv, Result, _latency_ms, prepare


def _start_serve(bench: BenchEnv) -> subprocess.Popen[bytes]:
    log = (bench.home / "serve.log").open("ab")
    proc = subprocess.Popen([sys.executable, "-m", "wardian", "serve"], stdout=log,
                            stderr=subprocess.STDOUT, env=bench.env)
    deadline = time.monotonic() + 60
    while f"ready (pid {proc.pid})" not in (bench.home / "serve.log").read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            text = (bench.home / "serve.log").read_text()
            raise RuntimeError(f"wardian serve did not start: {text}")
        time.sleep(0.01)
    return proc


def _stop_serve(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)


def bench_daemon(bench: BenchEnv, events: int) -> Result:
    """Session-close event -> run start with ``wardian serve`` draining (target p99 500 ms)."""
    from wardian.runtime.session_events import record_session_close

    result = Result("daemon", target_p99_ms=500.0)
    proc = _start_serve(bench)
    try:
        for n in range(events):
            began = time.perf_counter()
            event_id = record_session_close(bench.agent_id, boundary="clear",
                                            session_id=f"bench-daemon-{n}", source="cli")
            result.hook_ms.append((time.perf_counter() - began) * 1e3)
            result.event_to_start_ms.append(_latency_ms(event_id, bench.invoker_id))
    finally:
        _stop_serve(proc)
    return result


def bench_schedule(bench: BenchEnv, slots: int, every: str = "500ms") -> Result:
    """Schedule fire time -> run start under ``wardian serve`` (target p99 1 s)."""
    from wardian._util import parse_utc
    from wardian.app.schedules import add_schedule, set_schedule_enabled
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore
    from wardian.invokers.schedule import parse_duration
    from wardian.invokers.slots import SlotStore

    result = Result("schedule", target_p99_ms=1000.0)
    invoker = add_schedule(open_state_db(), blueprint_id="noop-bench", name="bench-schedule",
                           agent="bench", assignments="{}", every_s=parse_duration(every))
    proc = _start_serve(bench)
    store = SlotStore(open_state_db())
    runs = RunStore(open_state_db(), recover=False)
    try:
        set_schedule_enabled(open_state_db(), invoker.id, True)
        deadline = time.monotonic() + 60 + slots * parse_duration(every) * 3
        while True:
            ran = [s for s in store.all_slots(invoker.id) if s.outcome == "ran"]
            started = [(s, runs.get(s.run_id)) for s in ran]
            started = [(s, r) for s, r in started if r.started_at]
            if len(started) >= slots:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {len(started)} slots ran")
            time.sleep(0.05)
        set_schedule_enabled(open_state_db(), invoker.id, False)
    finally:
        _stop_serve(proc)
    for slot, run in started[:slots]:
        result.event_to_start_ms.append(
            (parse_utc(run.started_at) - parse_utc(slot.scheduled_time)).total_seconds() * 1e3)
    other = [s for s in store.all_slots(invoker.id) if s.outcome != "ran"]
    result.notes = {"slots_recorded": len(store.all_slots(invoker.id)),  # type: ignore[attr-defined]
                    "not_ran": len(other)}
    return result


def main(argv: list[str] | None = None) -> int:
    """Run both scenarios; print a line each (or JSON); exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=60, help="schedule slots to measure")
    parser.add_argument("--events", type=int, default=50, help="session-close events")
    parser.add_argument("--every", default="500ms", help="schedule interval")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    bench = prepare()
    summaries = []
    schedule = bench_schedule(bench, args.slots, args.every)
    summaries.append({**schedule.summary(), **getattr(schedule, "notes", {})})
    summaries.append(bench_daemon(bench, args.events).summary())
    if args.json:
        print(json.dumps(summaries, indent=2))
    else:
        for doc in summaries:
            lat = doc.get("event_to_run_start_ms", {})
            what = "fire->run start" if doc["scenario"] == "schedule" else "event->run start"
            print(f"{doc['scenario']:>9}: {what} p50 {lat.get('p50')} ms, p99 {lat.get('p99')}"
                  f" ms, max {lat.get('max')} ms (target p99 <= {doc['target_p99_ms']:.0f} ms) "
                  f"{'OK' if doc['ok'] else 'MISSED'}; n={doc['events']}")
    return 0 if all(d.get("ok", True) for d in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
