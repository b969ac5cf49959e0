"""PostgreSQL bench (issue 18): shared workers fire exactly once; recall beside SQLite.

Starts a throwaway PostgreSQL cluster (`tests.pg_cluster`: the distribution's initdb and
pg_ctl, loopback, a free port) and measures, each figure beside its SQLite one:

* ``fire`` — two drain worker processes share one database while the bench records
  ``--events`` session-close events (default 1,000) for one agent with ``--invokers``
  enabled session-close invokers (default 5) of a no-op blueprint. Checked: exactly one
  run per (event, invoker), each succeeded or skipped with a reason, and the fire log
  holds the same number. Measured: event committed (``session_events.created_at``) ->
  run started (``runs.started_at``), p50/p99. Workers poll (``drain_once`` until idle,
  then 20 ms): there are no LISTEN/NOTIFY wake-ups yet.
* ``recall`` — ``--records`` records (default 100,000) built in ``memory.db`` as
  ``bench/memory_bench.py`` builds them, copied into PostgreSQL with ``wardian db migrate``
  (timed), then the same 100 planted queries on both: recall p50/p95 and hit@5.

Usage: python bench/pg_bench.py [--events N] [--invokers N] [--records N]
                                [--scenario fire|recall]... [--json]
Exit 1 when a check fails (a missed or doubled run, a lost record); 2 without PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

NOOP = """\
blueprint:
  id: noop-pg-bench
  name: No-op PostgreSQL bench
  description: Does nothing; measures shared workers.
  version: 1
triggers: [session-close, schedule, manual]
steps:
  - id: nothing
    action: noop
"""

WORKER = """\
import os, sys, time
from wardian.invokers.drain import drain_once
stop = sys.argv[1]
drain_once(limit=200)
open(stop + f".ready-{os.getpid()}", "w").close()
while not os.path.exists(stop):
    if drain_once(limit=200).idle:
        time.sleep(0.02)
while not drain_once(limit=200).idle:
    pass
"""


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _ms_between(start: str, end: str) -> float:
    def parse(s: str) -> datetime:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))

    return (parse(end) - parse(start)).total_seconds() * 1000


def _env(home: Path, url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    if url:
        env["WARDIAN_DATABASE_URL"] = url
    return env


def bench_fire(base: Path, url: str | None, events: int, invokers: int) -> dict[str, Any]:
    """Two workers, `events` x `invokers` fires; checks exactly-once, returns latencies."""
    label = "postgres" if url else "sqlite"
    home = base / f"fire-{label}"
    home.mkdir(mode=0o700)
    env = _env(home, url)
    for key in list(os.environ):
        if key.startswith("WARDIAN_"):
            del os.environ[key]
    os.environ.update({k: v for k, v in env.items() if k.startswith("WARDIAN_")})
    from wardian._db import close_databases
    from wardian.config import user_library_dir
    from wardian.engine.runs import RunStore
    from wardian.invokers.drain import FireLog
    from wardian.invokers.store import InvokerStore
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.session_events import SessionEventQueue, record_session_close

    library = user_library_dir()
    library.mkdir(parents=True, exist_ok=True)
    (library / "noop-pg-bench.yaml").write_text(NOOP, encoding="utf-8")
    agent = AgentRegistry().add("bench", "claude").id
    store = InvokerStore()
    ids = []
    for i in range(invokers):
        inv = store.add("session-close", name=f"bench-{i}", blueprint_id="noop-pg-bench",
                        agent_id=agent, assignments={})
        store.set_enabled(inv.id, True)
        ids.append(inv.id)
    stop = home / "stop"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(stop)], env=env,
                                stdin=subprocess.DEVNULL) for _ in range(2)]
    try:
        while len(list(home.glob("stop.ready-*"))) < len(workers):  # both up and polling
            if any(w.poll() is not None for w in workers):
                raise RuntimeError("a worker exited before it was ready")
            time.sleep(0.05)
        started = time.perf_counter()
        for _ in range(events):
            record_session_close(agent, "clear", start_drain=False)
            time.sleep(0.005)  # events arrive over time, as sessions end
        stop.write_text("stop")
        codes = [w.wait(timeout=1800) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()
    wall = time.perf_counter() - started
    runs = RunStore(recover=False)
    created = {e.id: e.created_at for e in SessionEventQueue().list(limit=events + 10)}
    fired = [r for inv in ids for r in runs.list(invoker_id=inv, limit=events * 2)]
    keys = {r.idempotency_key for r in fired}
    problems = []
    if codes != [0, 0]:
        problems.append(f"worker exit codes {codes}")
    if len(fired) != events * invokers or len(keys) != len(fired):
        problems.append(f"{len(fired)} runs ({len(keys)} distinct) for "
                        f"{events * invokers} fires")
    bad = [r for r in fired if r.status not in ("succeeded", "skipped")]
    if bad:
        problems.append(f"{len(bad)} runs neither succeeded nor skipped")
    if FireLog().count() != len(fired):
        problems.append(f"fire log holds {FireLog().count()}, runs {len(fired)}")
    latency = []
    for r in fired:
        event_id = (r.idempotency_key or "").rsplit(":", 1)[-1]
        at = created.get(event_id)
        if at and r.started_at:
            latency.append(_ms_between(at, r.started_at))
    if url:
        close_databases(url)
    return {"backend": label, "events": events, "invokers": invokers, "runs": len(fired),
            "wall_s": wall, "latency_p50_ms": _pct(latency, 0.5) if latency else None,
            "latency_p99_ms": _pct(latency, 0.99) if latency else None,
            "problems": problems}


def bench_recall(base: Path, url: str, records: int) -> dict[str, Any]:
    """Build `records` in SQLite, migrate them to `url`, time the planted queries on both."""
    import memory_bench

    home = base / "recall"
    home.mkdir(mode=0o700)
    for key in list(os.environ):
        if key.startswith("WARDIAN_"):
            del os.environ[key]
    needles = memory_bench._needles()
    t0 = time.perf_counter()
    memory_bench._build(home, records, needles)
    build_s = time.perf_counter() - t0
    from wardian.app.db_migrate import migrate_to_postgres

    t0 = time.perf_counter()
    report = migrate_to_postgres(url)
    migrate_s = time.perf_counter() - t0
    from wardian._db import Database
    from wardian.memory.db import MemoryDB
    from wardian.memory.store import MemoryStore

    out: dict[str, Any] = {"records": records, "build_sqlite_s": build_s,
                           "migrate_s": migrate_s,
                           "copied": report.tables.get("memory.records", 0)}
    location: Path | str
    for label, location in (("sqlite", home / "memory.db"), ("postgres", url)):
        db: Database = MemoryDB.open_at(location, stands_for=home / "memory.db")
        assert isinstance(db, MemoryDB)
        store = MemoryStore(db=db)
        for _, query in needles[:10]:  # warm caches (page cache, vectors, BM25 totals)
            store.recall(memory_bench.AGENT, query, limit=10, workspace=memory_bench.WORKSPACE)
        times, hits = [], 0
        for text, query in needles:
            t = time.perf_counter()
            found = store.recall(memory_bench.AGENT, query, limit=10,
                                 workspace=memory_bench.WORKSPACE)
            times.append((time.perf_counter() - t) * 1000)
            hits += any(r.text == text for r in found[:5])
        out[label] = {"recall_p50_ms": _pct(times, 0.5), "recall_p95_ms": _pct(times, 0.95),
                      "hit@5": hits / len(needles)}
    problems = []
    if out["copied"] != records:
        problems.append(f"copied {out['copied']} of {records} records")
    if out["postgres"]["hit@5"] < out["sqlite"]["hit@5"] - 0.05:
        problems.append("PostgreSQL recall finds fewer planted records than SQLite")
    out["problems"] = problems
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--invokers", type=int, default=5)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--scenario", action="append", choices=["fire", "recall"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from tests.pg_cluster import Cluster, find_bin

    bindir = find_bin()
    if bindir is None:
        print("pg_bench: no PostgreSQL binaries (install the postgresql package)",
              file=sys.stderr)
        return 2
    scenarios = args.scenario or ["fire", "recall"]
    cluster = Cluster.start(bindir)
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="wardian-pg-bench-") as tmp:
            base = Path(tmp)
            if "fire" in scenarios:
                results["fire"] = [
                    bench_fire(base, None, args.events, args.invokers),
                    bench_fire(base, cluster.create_database("fire"), args.events,
                               args.invokers)]
                for r in results["fire"]:
                    print(f"fire {r['backend']:8}: {r['runs']} runs for {r['events']} events"
                          f" x {r['invokers']} invokers, two workers, {r['wall_s']:.1f} s;"
                          f" event -> run start p50 {r['latency_p50_ms'] or 0:.0f} ms,"
                          f" p99 {r['latency_p99_ms'] or 0:.0f} ms"
                          + (f"  PROBLEMS: {r['problems']}" if r["problems"] else "  ok"))
            if "recall" in scenarios:
                r = bench_recall(base, cluster.create_database("recall"), args.records)
                results["recall"] = r
                print(f"recall at {r['records']:,} records (SQLite build {r['build_sqlite_s']:.0f}"
                      f" s, db migrate {r['migrate_s']:.0f} s):")
                for label in ("sqlite", "postgres"):
                    x = r[label]
                    print(f"  {label:8} p50 {x['recall_p50_ms']:7.2f} ms  p95"
                          f" {x['recall_p95_ms']:7.2f} ms  hit@5 {x['hit@5']:.2f}")
                ratio = r["postgres"]["recall_p95_ms"] / max(r["sqlite"]["recall_p95_ms"], 1e-9)
                print(f"  PostgreSQL / SQLite p95: {ratio:.1f}x"
                      + (f"  PROBLEMS: {r['problems']}" if r["problems"] else "  ok"))
    finally:
        from wardian._pg import close_pools

        close_pools()
        cluster.stop()
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    failed = [p for group in results.values()
              for item in (group if isinstance(group, list) else [group])
              for p in item["problems"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
