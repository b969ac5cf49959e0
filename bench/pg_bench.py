"""PostgreSQL bench (issue 18): shared workers fire exactly once; recall beside SQLite.

Starts a throwaway PostgreSQL cluster (`tests.pg_cluster`: the distribution's initdb and
pg_ctl, loopback, a free port) and measures each figure on both backends:

* ``fire`` — two worker processes (`wardian.invokers.drain.drain_until`, the loop of
  ``wardian serve``'s drain thread) share one database while the bench records
  ``--events`` session-close events (default 1,000, one every ``--interval`` ms,
  default 250) for one agent with ``--invokers`` enabled session-close invokers
  (default 5) of a no-op
  blueprint, the last of which requires an archive (the events have none: a skip). On
  PostgreSQL the workers sleep on ``LISTEN`` and the event's ``NOTIFY`` (at its commit)
  wakes them; on SQLite they poll the queue every 20 ms. Checked **from the database**:
  exactly one run per (event, invoker), none missing, none doubled, each succeeded (and
  started exactly once) or skipped with its reason, the fire log holding the same
  number. Measured: event committed (``session_events.created_at``) -> run started
  (``runs.started_at``), p50/p99 over the executed runs; how many runs each worker took;
  and two figures that do not depend on the machine's load: the workers' CPU per run, and
  on PostgreSQL the transactions the server counted per run (autocommit reads included).
* ``recall`` — ``--records`` records (default 100,000) built in ``memory.db`` as
  ``bench/memory_bench.py`` builds them, copied into PostgreSQL by ``wardian db migrate``
  (its bulk copy, committed only when every table's count matches and
  ``MemoryStore.verify`` passes on both sides; timed), ``MemoryStore.verify()`` timed on
  each, then the same 100 planted queries on both, in this process after 10 warm-up
  queries (no process start, no first-call imports or vector load): recall p50/p95
  (wall, and CPU of this process: PostgreSQL's own work is the server's), hit@5 (a fast
  empty answer fails) and how often both backends return the same top five.

* ``suite`` — ``bench/recall_bench.py`` (every recall suite it knows, its ``SUITES``) once
  on SQLite and once with ``--database-url`` on a fresh PostgreSQL
  database, printed side by side with how many queries got the same top five. Checked:
  the same figures and MRR@10 (both backends cut, stem and score words alike), no leak,
  and PostgreSQL meets every threshold SQLite meets (whether SQLite meets them is
  recall_bench's verdict, shown in the table).

* ``writers`` — memory writers side by side on PostgreSQL: ``--writers`` child processes
  (default 4), each saving ``--saves`` records (default 150) with ``MemoryStore.save_once``
  and then revising each once (``MemoryStore.update``), started together after their
  imports and first connection; once with every writer on its OWN agent and once with all
  of them on the SAME agent, each beside the same work done by one writer alone. Printed:
  writes per second (saves + revisions over the span from the first start to the last
  end) and the ratio to one writer. Checked from the database: every saved record is
  there, of its agent, with exactly revisions 1 and 2, the second current and holding the
  revised text; ``MemoryStore.verify()`` finds nothing. The ratio is bounded by the CPUs
  the writers and the server share (printed with the load average).

Usage: python bench/pg_bench.py [--events N] [--invokers N] [--interval MS]
                                [--records N] [--writers N] [--saves N]
                                [--scenario fire|recall|suite|writers]... [--json]
Exit 1 when a check fails (a missed or doubled run, a lost record, recall finding too
little); 2 without PostgreSQL binaries.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
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
import signal, sys, threading
# What `wardian serve` warms up before its first fire (imports, the library's YAML).
import wardian.engine.executor
from wardian.blueprints.library import list_library
from wardian.engine.actions import known_actions
from wardian.invokers.drain import drain_until
list_library(known_actions=known_actions())
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
print("ready", flush=True)
drain_until(stop, log=lambda line: print(line, file=sys.stderr) if "fail" in line else None)
"""

def _recall_suites() -> tuple[str, ...]:
    """Every suite `bench/recall_bench.py` knows (its ``SUITES``), read from that file so a
    suite added there is compared on both backends here too."""
    import ast

    tree = ast.parse((Path(__file__).parent / "recall_bench.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "SUITES"):
            return tuple(ast.literal_eval(node.value))
    raise SystemExit("bench/recall_bench.py has no SUITES")


SUITES = _recall_suites()
"""`bench/recall_bench.py`'s suites, each run on both backends."""

MIN_HIT_AT_5 = 0.9
"""Planted queries whose record must be in the top five (memory_bench's own bar)."""


def _pct(samples: list[float], q: float) -> float | None:
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _ms_between(start: str, end: str) -> float:
    def parse(s: str) -> datetime:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))

    return (parse(end) - parse(start)).total_seconds() * 1000


def _use_home(home: Path, url: str | None) -> dict[str, str]:
    """Point this process (and the returned child environment) at `home` / `url`."""
    for key in [k for k in os.environ if k.startswith("WARDIAN_")]:
        del os.environ[key]
    os.environ["WARDIAN_HOME"] = str(home)
    if url:
        os.environ["WARDIAN_DATABASE_URL"] = url
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _listening(url: str) -> int:
    """How many connections of `url`'s database wait on LISTEN (the workers, once up)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname ="
                           " current_database() AND query LIKE 'LISTEN %'").fetchone()
    return int(row[0]) if row else 0


def _children_cpu_s() -> float:
    """User + system CPU seconds of this process's reaped children (the workers)."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _transactions(url: str) -> int:
    """Transactions the server has counted in `url`'s database (committed + rolled back;
    each autocommit statement is one): what the workers ask of the server, whatever the
    load. A backend's counts reach the statistics when it ends or goes idle, so read after
    the workers exited; the counts of the bench's own connections are few."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database"
                           " WHERE datname = current_database()").fetchone()
    return int(row[0]) if row else 0


def _wake(url: str) -> None:
    """NOTIFY the drain channel: stopping workers see their stop at once, not after the
    1 s fallback."""
    import psycopg

    from wardian.runtime.session_events import EVENTS_CHANNEL

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, '')", (EVENTS_CHANNEL,))


def bench_fire(base: Path, url: str | None, events: int, invokers: int,
               interval_ms: float) -> dict[str, Any]:
    """Two workers, `events` x `invokers` fires; checks exactly-once, returns latencies."""
    label = "postgres" if url else "sqlite"
    home = base / f"fire-{label}"
    home.mkdir(mode=0o700)
    env = _use_home(home, url)
    from wardian._db import StateDB, close_databases
    from wardian.config import open_state_db, state_db_path, user_library_dir
    from wardian.invokers.store import InvokerStore
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.session_events import record_session_close

    library = user_library_dir()
    library.mkdir(parents=True, exist_ok=True)
    (library / "noop-pg-bench.yaml").write_text(NOOP, encoding="utf-8")
    agent = AgentRegistry(open_state_db()).add("bench", "claude").id
    store = InvokerStore(open_state_db())
    ids = []
    for i in range(invokers):
        # The last one requires the session's archive, which these events lack: a skip.
        config = {"boundaries": [], "require_archive": invokers > 1 and i == invokers - 1}
        inv = store.add("session-close", name=f"bench-{i}", blueprint_id="noop-pg-bench",
                        agent_id=agent, assignments={}, config=config)
        store.set_enabled(inv.id, True)
        ids.append(inv.id)
    db = StateDB.open(state_db_path())
    marks = ", ".join("?" * len(ids))
    cpu_before = _children_cpu_s()
    workers = [subprocess.Popen([sys.executable, "-c", WORKER], env=env, cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    problems: list[str] = []
    event_ids: list[str] = []
    try:
        for w in workers:
            assert w.stdout is not None
            if w.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a worker failed to start: {w.communicate()[1]}")
        while url and _listening(url) < len(workers):  # both asleep on LISTEN
            time.sleep(0.01)
        xacts = _transactions(url) if url else 0
        started = time.perf_counter()
        for _ in range(events):
            event_ids.append(record_session_close(agent, "clear", start_drain=False))
            time.sleep(interval_ms / 1000)  # sessions end over time
        sent = time.perf_counter() - started
        while True:  # until every fire is final, as the database says
            left = db.conn.execute(
                "SELECT (SELECT COUNT(*) FROM session_events WHERE processed_at IS NULL)"
                f" + (SELECT COUNT(*) FROM runs WHERE invoker_id IN ({marks})"
                " AND status IN ('queued', 'running'))", ids).fetchone()[0]
            if not left:
                break
            if any(w.poll() is not None for w in workers):
                problems.append("a worker exited before the work was done")
                break
            time.sleep(0.05)
        wall = time.perf_counter() - started
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        if url:
            _wake(url)
        errors = [w.communicate(timeout=120)[1].strip() for w in workers]
    # Both workers have exited (reaped by communicate): their CPU is in RUSAGE_CHILDREN.
    cpu_s = _children_cpu_s() - cpu_before
    xacts = _transactions(url) - xacts if url else 0
    if [w.returncode for w in workers] != [0, 0] or any(errors):
        problems.append(f"workers exited {[w.returncode for w in workers]}: {errors}")
    got = _count_fires(db.conn, ids, event_ids)
    created = {str(r[0]): str(r[1]) for r in db.conn.execute(
        "SELECT id, created_at FROM session_events WHERE agent_id = ?", (agent,))}
    if url:
        close_databases(url)
    latency = [_ms_between(created[key.rsplit(":", 1)[-1]], started_at)
               for key, started_at in got["started"] if key.rsplit(":", 1)[-1] in created]
    want = events * invokers
    status = got["status"]
    for name in ("doubled", "missing", "stray", "started_twice", "never_started",
                 "skipped_without_reason", "pending_events"):
        if got[name]:
            problems.append(f"{got[name]} {name.replace('_', ' ')}")
    if got["runs"] != want:
        problems.append(f"{got['runs']} runs for {want} fires")
    if set(status) - {"succeeded", "skipped"}:
        problems.append(f"runs neither succeeded nor skipped: {dict(status)}")
    if got["fire_log"] != got["runs"]:
        problems.append(f"fire log holds {got['fire_log']}, runs {got['runs']}")
    if len(latency) != status.get("succeeded", 0):
        problems.append(f"{len(latency)} start times for {status.get('succeeded', 0)} runs")
    return {"backend": label, "events": events, "invokers": invokers, "fires": want,
            "runs": got["runs"], "succeeded": status.get("succeeded", 0),
            "skipped": status.get("skipped", 0), "doubled": got["doubled"],
            "missing": got["missing"], "by_worker": got["by_worker"],
            "send_s": sent, "wall_s": wall,
            "worker_cpu_ms_per_run": cpu_s * 1000 / max(1, status.get("succeeded", 0)),
            "transactions_per_run": (xacts / max(1, status.get("succeeded", 0))
                                     if url else None),
            "latency_p50_ms": _pct(latency, 0.5), "latency_p99_ms": _pct(latency, 0.99),
            "latency_max_ms": max(latency) if latency else None,
            "problems": problems}


def _count_fires(conn: Any, ids: list[str], event_ids: list[str]) -> dict[str, Any]:
    """What the database holds for these invokers' runs: counts, doubles, misses, and
    (idempotency key, started_at) of each executed run."""
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, idempotency_key, status, skip_reason, started_at FROM runs"
        f" WHERE invoker_id IN ({marks})", ids).fetchall()
    per_key = Counter(str(r[1]) for r in rows)
    wanted = {f"session-close:{i}:{e}" for e in event_ids for i in ids}
    starts: Counter[str] = Counter()
    by_worker: Counter[int] = Counter()
    for run_id, data in conn.execute(
            f"SELECT e.run_id, e.data FROM run_events e JOIN runs r ON r.id = e.run_id"
            f" WHERE e.kind = 'run.started' AND r.invoker_id IN ({marks})", ids):
        starts[str(run_id)] += 1
        by_worker[int(json.loads(data).get("pid") or 0)] += 1
    succeeded = {str(r[0]) for r in rows if r[2] == "succeeded"}
    return {
        "runs": len(rows), "status": Counter(str(r[2]) for r in rows),
        "doubled": sum(n - 1 for n in per_key.values() if n > 1),
        "missing": len(wanted - set(per_key)), "stray": len(set(per_key) - wanted),
        "started_twice": sum(1 for n in starts.values() if n > 1),
        "never_started": len(succeeded - set(starts)),
        "skipped_without_reason": sum(1 for r in rows if r[2] == "skipped" and not r[3]),
        "by_worker": sorted(by_worker.values(), reverse=True),
        "started": [(str(r[1]), str(r[4])) for r in rows if r[2] == "succeeded" and r[4]],
        "fire_log": int(conn.execute(
            f"SELECT COUNT(*) FROM session_close_fires WHERE invoker_id IN ({marks})",
            ids).fetchone()[0]),
        "pending_events": int(conn.execute(
            "SELECT COUNT(*) FROM session_events WHERE processed_at IS NULL").fetchone()[0]),
    }


def bench_recall(base: Path, url: str, records: int) -> dict[str, Any]:
    """Build `records` in SQLite, migrate them to `url` (verified on both sides), run the
    planted queries on both."""
    import memory_bench

    home = base / "recall"
    home.mkdir(mode=0o700)
    _use_home(home, None)
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
                           "copied": report.tables.get("memory.records", 0),
                           "verified": report.records_verified}
    top5: dict[str, list[list[str]]] = {}
    location: Path | str
    for label, location in (("sqlite", home / "memory.db"), ("postgres", url)):
        db: Database = MemoryDB.open_at(location, stands_for=home / "memory.db")
        assert isinstance(db, MemoryDB)
        store = MemoryStore(db)
        t = time.perf_counter()
        problems = store.verify()
        verify_s = time.perf_counter() - t
        for _, query in needles[:10]:  # warm caches (page cache, vectors, BM25 totals)
            store.index.recall(memory_bench.AGENT, query, limit=10,
                               workspace=memory_bench.WORKSPACE)
        times, cpu, hits, tops = [], [], 0, []
        for text, query in needles:
            t, c = time.perf_counter(), time.process_time()
            found = store.index.recall(memory_bench.AGENT, query, limit=10,
                                 workspace=memory_bench.WORKSPACE)
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            hits += any(r.text == text for r in found[:5])
            tops.append([r.id for r in found[:5]])
        top5[label] = tops
        out[label] = {"recall_p50_ms": _pct(times, 0.5), "recall_p95_ms": _pct(times, 0.95),
                      "recall_cpu_p95_ms": _pct(cpu, 0.95), "hit@5": hits / len(needles),
                      "verify_s": verify_s, "verify_problems": len(problems)}
    out["same_top5"] = sum(set(a) == set(b) for a, b in zip(top5["sqlite"], top5["postgres"],
                                                           strict=True)) / len(needles)
    problems = []
    if not out["copied"] == out["verified"] == records:
        problems.append(f"copied {out['copied']}, verified {out['verified']} of {records}")
    for label in ("sqlite", "postgres"):
        if out[label]["verify_problems"]:
            problems.append(f"{label}: verify() found {out[label]['verify_problems']} problems")
        if out[label]["hit@5"] < MIN_HIT_AT_5:
            problems.append(f"{label} finds the planted record in the top five for only "
                            f"{out[label]['hit@5']:.0%} of the queries")
    out["problems"] = problems
    return out


def bench_suite(cluster: Any) -> dict[str, Any]:
    """`recall_bench.py --json` for each suite on both backends (fresh processes)."""
    out: dict[str, Any] = {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    problems: list[str] = []
    for suite in SUITES:
        runs = {}
        for label in ("sqlite", "postgres"):
            extra = ["--database-url", cluster.create_database(f"suite_{suite}")] if (
                label == "postgres") else []
            done = subprocess.run(
                [sys.executable, str(ROOT / "bench" / "recall_bench.py"), "--suite", suite,
                 "--json", *extra], env=env, capture_output=True, text=True, timeout=1800)
            try:
                runs[label] = json.loads(done.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                problems.append(f"{suite} on {label}: recall_bench failed: {done.stderr[-500:]}")
                continue
        if len(runs) == 2:
            a, b = runs["sqlite"], runs["postgres"]
            # The thresholds are recall_bench's to judge; here PostgreSQL must do what
            # SQLite does: the same figures, no leak.
            if a["ok"] and not b["ok"]:
                problems.append(f"suite {suite}: PostgreSQL misses thresholds SQLite meets")
            for label, value in [*a["figures"].items(), ("MRR@10", a["mrr@10"])]:
                other = b["mrr@10"] if label == "MRR@10" else b["figures"][label]
                if abs(value - other) > 1e-9:
                    problems.append(f"suite {suite}: {label} {other:.3f} on"
                                    f" PostgreSQL, {value:.3f} on SQLite")
            if b["leaks"]:
                problems.append(f"suite {suite}: {b['leaks']} leak(s) on PostgreSQL")
            same = sum(a == b for a, b in zip(runs["sqlite"]["top5"], runs["postgres"]["top5"],
                                              strict=True))
            runs["same_top5"] = same / len(runs["sqlite"]["top5"])
        out[suite] = runs
    out["problems"] = problems
    return out


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


WRITER = """\
import json, sys, time
import psutil
from wardian.memory.models import Scope
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
agent, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = MemoryStore(open_memory_db())
store.count(agent)  # connected and migrated before the start
server = psutil.Process(int(store.conn.execute("SELECT pg_backend_pid()").fetchone()[0]))
print("ready", flush=True)
sys.stdin.readline()
start = time.monotonic()
cpu, server_cpu = time.process_time(), sum(server.cpu_times()[:2])
saved = []
for i in range(count):
    text = f"writer {tag} keeps note {i} about the build cache"
    saved.append(store.save_once(agent, text, evidence=f"seen by {tag} at step {i}",
                                 scope=Scope("agent"), actor="bench").record.id)
for i, rid in enumerate(saved):
    store.update(agent, rid, text=f"writer {tag} revised note {i} about the build cache",
                 actor="bench", reason="revised")
end = time.monotonic()
cpu, server_cpu = time.process_time() - cpu, sum(server.cpu_times()[:2]) - server_cpu
print(json.dumps({"agent": agent, "tag": tag, "ids": saved, "start": start, "end": end,
                  "cpu_s": cpu, "server_cpu_s": server_cpu}))
"""


def _run_writers(env: dict[str, str], agents: list[str], saves: int) -> dict[str, Any]:
    """Start one `WRITER` child per entry of `agents`, let them go together once all are
    ready, and return their reports and the span from the first start to the last end."""
    children = []
    for n, agent in enumerate(agents):
        children.append(subprocess.Popen(
            [sys.executable, "-c", WRITER, agent, f"w{n}", str(saves)], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    reports = []
    for child in children:
        out, _ = child.communicate(timeout=1800)
        if child.returncode != 0:
            raise RuntimeError(f"a writer failed (exit {child.returncode})")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    span = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return {"reports": reports, "span_s": span}


def _check_writers(reports: list[dict[str, Any]], saves: int) -> list[str]:
    """What is wrong in the database after `reports`' writers (see `bench_writers`)."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    problems: list[str] = []
    store = MemoryStore(open_memory_db())
    for report in reports:
        if len(report["ids"]) != saves or len(set(report["ids"])) != saves:
            problems.append(f"writer {report['tag']} returned {len(set(report['ids']))}"
                            f" distinct records for {saves} saves")
        for i, rid in enumerate(report["ids"]):
            record = store.owned_record(rid, report["agent"])
            if record is None:
                problems.append(f"record {rid[:8]} of writer {report['tag']} is missing")
                continue
            seqs = [(v.seq, v.revision_id) for v in store.history(rid)]
            if [s for s, _ in seqs] != [1, 2] or record.current_revision_id != seqs[-1][1]:
                problems.append(f"record {rid[:8]}: revisions {[s for s, _ in seqs]},"
                                " expected [1, 2] with the second current")
            if record.text != f"writer {report['tag']} revised note {i} about the build cache":
                problems.append(f"record {rid[:8]} does not hold its revised text")
    for agent in {r["agent"] for r in reports}:
        expected = sum(len(r["ids"]) for r in reports if r["agent"] == agent)
        if store.count(agent) != expected:
            problems.append(f"agent {agent[:8]} has {store.count(agent)} records,"
                            f" {expected} were saved")
    problems += [f"verify: {line}" for line in store.verify()]
    return problems


def bench_writers(base: Path, cluster: Any, writers: int, saves: int) -> dict[str, Any]:
    """``writers``: see the module docstring."""
    import uuid

    from wardian._db import close_databases

    out: dict[str, Any] = {"writers": writers, "saves": saves, "problems": []}
    for mode in ("own", "same"):
        for n in (1, writers):
            url = cluster.create_database(f"writers_{mode}_{n}")
            env = _use_home(base / f"writers-{mode}-{n}", url)
            shared = str(uuid.uuid4())
            agents = [str(uuid.uuid4()) if mode == "own" else shared for _ in range(n)]
            run = _run_writers(env, agents, saves)
            writes = 2 * saves * n
            out[f"{mode}_{n}_per_s"] = writes / run["span_s"]
            out[f"{mode}_{n}_cpu_ms_per_write"] = 1000 * sum(
                r["cpu_s"] + r["server_cpu_s"] for r in run["reports"]) / writes
            out["problems"] += [f"{mode} agent, {n} writer(s): {p}"
                                for p in _check_writers(run["reports"], saves)]
            close_databases(url)
        out[f"{mode}_ratio"] = out[f"{mode}_{writers}_per_s"] / out[f"{mode}_1_per_s"]
    return out


def _table(results: dict[str, Any]) -> list[str]:
    """The figures, SQLite beside PostgreSQL."""
    rows: list[tuple[str, str, str]] = []
    if "fire" in results:
        s, p = results["fire"]
        rows.append((f"fire: {s['events']:,} events x {s['invokers']} invokers, two workers",
                     "", ""))
        cells: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
                ("  runs / fires", lambda r: f"{r['runs']:,} / {r['fires']:,}"),
                ("  succeeded / skipped", lambda r: f"{r['succeeded']:,} / {r['skipped']:,}"),
                ("  doubled / missing", lambda r: f"{r['doubled']} / {r['missing']}"),
                ("  runs started per worker",
                 lambda r: " / ".join(f"{n:,}" for n in r["by_worker"])),
                ("  wake-up", lambda r: "LISTEN/NOTIFY" if r["backend"] == "postgres"
                 else "poll 20 ms"),
                ("  event -> run start p50", lambda r: _ms(r["latency_p50_ms"])),
                ("  event -> run start p99", lambda r: _ms(r["latency_p99_ms"])),
                ("  event -> run start max", lambda r: _ms(r["latency_max_ms"])),
                ("  all final after", lambda r: f"{r['wall_s']:.1f} s"
                 f" (sent in {r['send_s']:.1f} s)"),
                ("  worker CPU per run", lambda r: _ms(r["worker_cpu_ms_per_run"])),
                ("  server transactions per run", lambda r: "-" if r["transactions_per_run"]
                 is None else f"{r['transactions_per_run']:.1f}"),
                ("  checks", lambda r: "ok" if not r["problems"] else "FAILED")]
        for name, get in cells:
            rows.append((name, get(s), get(p)))
    if "recall" in results:
        r = results["recall"]
        rows.append((f"recall at {r['records']:,} records (100 planted queries,"
                     " in-process, after 10 warm-up queries)", "", ""))
        for name, key in (("  p50", "recall_p50_ms"), ("  p95", "recall_p95_ms"),
                          ("  p95 CPU of this process", "recall_cpu_p95_ms")):
            rows.append((name, _ms(r["sqlite"][key]), _ms(r["postgres"][key])))
        rows.append(("  hit@5", f"{r['sqlite']['hit@5']:.2f}", f"{r['postgres']['hit@5']:.2f}"))
        rows.append(("  same top five as the other", f"{r['same_top5']:.2f}",
                     f"{r['same_top5']:.2f}"))
        rows.append(("  SQLite build / db migrate (verified)", f"{r['build_sqlite_s']:.0f} s",
                     f"{r['migrate_s']:.0f} s, {r['verified']:,} records"))
        rows.append(("  MemoryStore.verify()", f"{r['sqlite']['verify_s']:.1f} s",
                     f"{r['postgres']['verify_s']:.1f} s"))
        rows.append(("  checks", "ok" if not r["problems"] else "FAILED", ""))
    if "writers" in results:
        w = results["writers"]
        rows.append((f"memory writers ({w['saves']} saves + {w['saves']} revisions each)",
                     "", ""))
        many = w["writers"]
        for mode, label in (("own", "own agents"), ("same", "one agent")):
            rows.append((f"  {label}: 1 writer, writes/s", "", f"{w[mode + '_1_per_s']:,.0f}"))
            rows.append((f"  {label}: {many} writers, writes/s", "",
                         f"{w[f'{mode}_{many}_per_s']:,.0f}"))
            rows.append((f"  {label}: ratio to 1 writer", "", f"{w[mode + '_ratio']:.2f}x"))
            cpu_one, cpu_many = (w[f"{mode}_{k}_cpu_ms_per_write"] for k in (1, many))
            rows.append((f"  {label}: CPU/write, writer + server, 1 / {many}", "",
                         f"{cpu_one:.2f} / {cpu_many:.2f} ms"))
            one = w[mode + "_1_per_s"] * w[mode + "_1_cpu_ms_per_write"] / 1000
            rows.append((f"  {label}: 1 writer busy (ceiling, {os.cpu_count()} CPUs)",
                         "", f"{one:.0%} ({min(many, (os.cpu_count() or 1) / one):.2f}x)"))
        rows.append(("  checks", "", "ok" if not w["problems"] else "FAILED"))
    if "suite" in results:
        for suite in SUITES:
            runs = results["suite"].get(suite, {})
            if "sqlite" not in runs or "postgres" not in runs:
                continue
            a, b = runs["sqlite"], runs["postgres"]
            rows.append((f"recall suite {suite!r} ({a['records']} records,"
                         f" {a['queries']} queries)", "", ""))
            for label in ("recall@5", "paraphrase recall@5", "no-answer empty"):
                rows.append((f"  {label}", f"{a['figures'][label]:.3f}",
                             f"{b['figures'][label]:.3f}"))
            rows.append(("  MRR@10", f"{a['mrr@10']:.3f}", f"{b['mrr@10']:.3f}"))
            rows.append(("  leaks", str(a["leaks"]), str(b["leaks"])))
            rows.append(("  recall p95", _ms(a["latency_p95_ms"]), _ms(b["latency_p95_ms"])))
            rows.append(("  thresholds met", "yes" if a["ok"] else "NO",
                         "yes" if b["ok"] else "NO"))
            rows.append(("  same top five as the other", f"{runs['same_top5']:.2f}",
                         f"{runs['same_top5']:.2f}"))
    width = max(len(r[0]) for r in rows)
    lines = [f"{'':{width}}  {'SQLite':>22}  {'PostgreSQL':>26}"]
    lines += [f"{a:{width}}  {b:>22}  {c:>26}" for a, b, c in rows]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--invokers", type=int, default=5)
    parser.add_argument("--interval", type=float, default=250.0,
                        help="milliseconds between two session-close events")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--saves", type=int, default=150)
    parser.add_argument("--scenario", action="append",
                        choices=["fire", "recall", "suite", "writers"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from tests.pg_cluster import Cluster, find_bin

    bindir = find_bin()
    if bindir is None:
        print("pg_bench: no PostgreSQL binaries (install the postgresql package)",
              file=sys.stderr)
        return 2
    scenarios = args.scenario or ["fire", "suite", "recall"]
    cluster = Cluster.start(bindir)
    results: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="wardian-pg-bench-") as tmp:
            base = Path(tmp)
            if "fire" in scenarios:
                results["fire"] = [
                    bench_fire(base, None, args.events, args.invokers, args.interval),
                    bench_fire(base, cluster.create_database("fire"), args.events,
                               args.invokers, args.interval)]
            if "suite" in scenarios:
                results["suite"] = bench_suite(cluster)
            if "writers" in scenarios:
                results["writers"] = bench_writers(base, cluster, args.writers, args.saves)
            if "recall" in scenarios:
                results["recall"] = bench_recall(base, cluster.create_database("recall"),
                                                 args.records)
    finally:
        from wardian._pg import close_pools

        close_pools()
        cluster.stop()
    print("\n".join(_table(results)))
    print(f"load average when done: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
          f" ({os.cpu_count()} CPUs)")
    failed = [p for group in results.values()
              for item in (group if isinstance(group, list) else [group])
              for p in item["problems"]]
    for problem in failed:
        print(f"PROBLEM: {problem}")
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
