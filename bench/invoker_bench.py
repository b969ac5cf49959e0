"""Invoker benchmark (issue 7): session-close event -> run start latency.

Each scenario records session-close events the way real integrations do and measures, from
the stored timestamps, **event committed (``session_events.created_at``) -> run started
(``runs.started_at``)** for a no-op blueprint fired by one enabled session-close invoker. It
also reports how long the hook process itself took (it must return within 200 ms), as wall
time and as CPU time (user + system; on a loaded machine the wall time mostly measures the
wait for a core).

Scenarios (``--scenario``; all by default):

* ``detached`` — cold: no daemon; each event goes through the installed hook entry point
  (the command ``wardian hooks install claude-code`` writes), which commits the event and
  starts a detached drain worker. The bench waits until that worker has exited before the
  next event, so every event pays a worker's start-up. Target p99 <= 2 s.
* ``daemon`` — with ``wardian serve`` running: `bench_daemon` runs the scenario that
  ``bench/schedule_bench.py`` (schedules work) defines. Target p99 <= 500 ms.
* ``schedule`` — with ``wardian serve`` running: schedule fire time -> run start.
  Target p99 <= 1 s.

Add a scenario: write ``def bench_x(env: BenchEnv, events: int) -> Result`` and add it to
`SCENARIOS`. Everything runs in a temporary WARDIAN_HOME.

Usage: python bench/invoker_bench.py [--events N] [--scenario NAME]... [--json]
Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

NOOP_BLUEPRINT = """\
blueprint:
  id: noop-bench
  name: No-op bench
  description: Does nothing; measures invoker latency.
  version: 1
triggers: [session-close, schedule, manual]
steps:
  - id: nothing
    action: noop
"""


@dataclass
class BenchEnv:
    """A prepared temporary WARDIAN_HOME: an agent, the no-op blueprint, one invoker."""

    home: Path
    env: dict[str, str]
    agent_id: str
    invoker_id: str


@dataclass
class Result:
    """Latencies of one scenario, in milliseconds."""

    scenario: str
    target_p99_ms: float
    event_to_start_ms: list[float] = field(default_factory=list)
    hook_ms: list[float] = field(default_factory=list)
    hook_cpu_ms: list[float] = field(default_factory=list)

    @staticmethod
    def _pct(values: list[float], q: float) -> float:
        if not values:
            return float("nan")
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    def summary(self) -> dict[str, object]:
        """p50/p99/max of both series, and whether the target was met."""
        doc: dict[str, object] = {"scenario": self.scenario, "events": len(self.event_to_start_ms)}
        for name, values in (("event_to_run_start_ms", self.event_to_start_ms),
                             ("hook_ms", self.hook_ms), ("hook_cpu_ms", self.hook_cpu_ms)):
            if values:
                doc[name] = {"p50": round(statistics.median(values), 1),
                             "p99": round(self._pct(values, 0.99), 1),
                             "max": round(max(values), 1)}
        doc["target_p99_ms"] = self.target_p99_ms
        doc["ok"] = bool(self.event_to_start_ms) and (
            self._pct(self.event_to_start_ms, 0.99) <= self.target_p99_ms)
        return doc


def prepare() -> BenchEnv:
    """Create the temp home, agent ``bench``, the no-op blueprint and an enabled invoker."""
    home = Path(tempfile.mkdtemp(prefix="wardian-invoker-bench-"))
    os.environ["WARDIAN_HOME"] = str(home)
    from wardian.app.session_close import add_session_close, set_enabled
    from wardian.config import open_state_db, user_library_dir
    from wardian.runtime.agents import AgentRegistry

    library = user_library_dir()
    library.mkdir(parents=True, exist_ok=True)
    (library / "noop-bench.yaml").write_text(NOOP_BLUEPRINT, encoding="utf-8")
    agent = AgentRegistry(open_state_db()).add("bench", "claude")
    invoker = add_session_close(open_state_db(), blueprint="noop-bench", name="bench",
                                agent="bench", boundaries=[], require_archive=False,
                                assignments="{}")
    set_enabled(open_state_db(), invoker.id, True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    return BenchEnv(home, env, agent.id, invoker.id)


def _latency_ms(event_id: str, invoker_id: str, timeout_s: float = 30.0) -> float:
    """Wait for the run of (event, invoker) to have started; event -> start in ms."""
    from wardian._util import parse_utc
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore
    from wardian.invokers.drain import idempotency_key
    from wardian.runtime.session_events import SessionEventQueue

    key = idempotency_key(invoker_id, event_id)
    store = RunStore(open_state_db(), recover=False)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = store.conn.execute(
            "SELECT started_at FROM runs WHERE idempotency_key = ?", (key,)).fetchone()
        if row is not None and row["started_at"]:
            created = SessionEventQueue(open_state_db()).get(event_id).created_at
            return (parse_utc(row["started_at"]) - parse_utc(created)).total_seconds() * 1e3
        time.sleep(0.005)
    raise TimeoutError(f"no run started for event {event_id[:8]} within {timeout_s} s")


def _wait_worker_gone(timeout_s: float = 30.0) -> None:
    from wardian.runtime.session_events import drain_lock

    deadline = time.monotonic() + timeout_s
    while drain_lock().held_elsewhere() and time.monotonic() < deadline:
        time.sleep(0.01)


def _children_cpu_s() -> float:
    """CPU seconds (user + system) used by waited-for children so far (0 where unknown)."""
    try:
        import resource
    except ImportError:  # Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_detached(bench: BenchEnv, events: int) -> Result:
    """Cold path: hook process -> event -> detached worker -> run start, one at a time."""
    from wardian.config import open_state_db
    from wardian.runtime.session_events import SessionEventQueue

    result = Result("detached", target_p99_ms=2000.0)
    import shlex

    from wardian.runtime.hook_install import hook_command

    # exactly what `hooks install` writes
    hook = shlex.split(hook_command("claude-code", "session-end", ["bench"]))
    for n in range(events):
        _wait_worker_gone()
        payload = {"session_id": f"bench-{n}", "transcript_path": None, "cwd": str(bench.home),
                   "hook_event_name": "SessionEnd", "reason": "clear"}
        cpu_before = _children_cpu_s()
        began = time.perf_counter()
        proc = subprocess.run(hook, input=json.dumps(payload), text=True, capture_output=True,
                              env=bench.env, timeout=60)
        result.hook_ms.append((time.perf_counter() - began) * 1e3)
        result.hook_cpu_ms.append((_children_cpu_s() - cpu_before) * 1e3)
        if proc.returncode != 0:
            raise RuntimeError(f"hook failed: {proc.stderr}")
        (event,) = [e for e in SessionEventQueue(open_state_db()).list(limit=5)
                    if e.session_id == f"bench-{n}"]
        result.event_to_start_ms.append(_latency_ms(event.id, bench.invoker_id))
    _wait_worker_gone()
    return result


def bench_daemon(bench: BenchEnv, events: int) -> Result:
    """Warm path with ``wardian serve`` running: ``bench/schedule_bench.py``'s scenario."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from schedule_bench import bench_daemon as daemon_scenario

    return daemon_scenario(bench, events)  # type: ignore[no-any-return]


def bench_schedule(bench: BenchEnv, events: int) -> Result:
    """Schedule fire time -> run start with ``wardian serve`` running (``events`` slots of an
    ``--every 500ms`` invoker): ``bench/schedule_bench.py``'s scenario. Target p99 <= 1 s."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from schedule_bench import bench_schedule as schedule_scenario

    return schedule_scenario(bench, events)  # type: ignore[no-any-return]


SCENARIOS: dict[str, Callable[[BenchEnv, int], Result]] = {
    "detached": bench_detached,
    "daemon": bench_daemon,
    "schedule": bench_schedule,
}


def main(argv: list[str] | None = None) -> int:
    """Run the chosen scenarios, print a table (or JSON); exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=30, help="events per scenario")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    bench = prepare()
    summaries = []
    for name in args.scenario or list(SCENARIOS):
        try:
            summaries.append(SCENARIOS[name](bench, args.events).summary())
        except NotImplementedError as exc:
            summaries.append({"scenario": name, "skipped": str(exc)})
    if args.json:
        print(json.dumps(summaries, indent=2))
    else:
        for doc in summaries:
            if "skipped" in doc:
                print(f"{doc['scenario']:>9}: skipped ({doc['skipped']})")
                continue
            lat, hook = doc.get("event_to_run_start_ms", {}), doc.get("hook_ms", {})
            cpu = doc.get("hook_cpu_ms", {})
            what = "fire->run start" if doc["scenario"] == "schedule" else "event->run start"
            print(f"{doc['scenario']:>9}: {what} p50 {lat.get('p50')} ms, "
                  f"p99 {lat.get('p99')} ms (target <= {doc['target_p99_ms']:.0f}) "
                  f"{'OK' if doc['ok'] else 'MISSED'}"
                  + (f"; hook p50 {hook.get('p50')} ms, p99 {hook.get('p99')} ms" if hook
                     else "")
                  + (f" (CPU p50 {cpu.get('p50')} ms)" if cpu else "")
                  + f"; n={doc['events']}")
    return 0 if all(d.get("ok", True) for d in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
