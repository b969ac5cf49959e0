"""MCP server benchmark (issue 16): ``memory_recall`` round trips on a running server.

Starts the real ``wardian mcp`` (``python -P -m wardian mcp``) with a capability for an
agent that owns 10,000 records, connects the official SDK's client over stdio, and times
``tools/call memory_recall`` from request to parsed, schema-validated result. Every answer
is checked: no tool error, the agent's records only, and exactly the ids, in the same
order, that the same query returns through `RecallIndex.recall` in-process. That
in-process call is also the baseline, so the ratio shows what MCP, JSON-RPC and the
per-call capability check add.

Target: median round trip <= 20 ms at 10k records (what a user feels inside a host's tool
call; the server runs the SDK's own stdio transport, each line screened first). The CPU
time per call of the server process and of the client is printed too: on a shared,
overloaded machine the wall time is mostly waiting for a CPU, and the CPU figures say
what the round trip costs.

Run: ``.venv/bin/python bench/mcp_bench.py [--calls N] [--profile FILE]`` (about 20 s;
``--calls`` times N calls instead of 300; ``--profile`` runs the server under cProfile and
writes its stats to FILE, for `pstats`). The store is built in a temporary directory,
removed at the end.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import memory_bench

RECORDS = 10_000
CALLS = 300
WARMUP = 30
TARGET_MEDIAN_MS = 20.0


def _queries(home: Path, count: int) -> list[str]:
    """One or two words of one of the agent's records (so every query has answers to check).
    Stop words are never picked: a query of nothing but them asks nothing, and recall
    rightly answers it with no records (`wardian.memory.ranking.query_terms`)."""
    import sqlite3

    from wardian.memory.ranking import query_terms

    conn = sqlite3.connect(home / "memory.db")
    try:
        texts = [r[0] for r in conn.execute("SELECT text FROM records LIMIT 2000")]
    finally:
        conn.close()
    # Both words of a query come from one record: recall's relevance floor rightly answers
    # nothing when no record holds more than half of what was asked.
    rng = random.Random(16)
    queries = []
    for _ in range(count):
        words: list[str] = []
        while not words:
            words = sorted({w for w in rng.choice(texts).split() if query_terms(w)})
        queries.append(" ".join(rng.sample(words, min(len(words), rng.choice((1, 2))))))
    return queries


def _check(query: str, doc: dict[str, object], expected: list[str]) -> int:
    records = doc["records"]
    assert isinstance(records, list) and records, f"no records for {query!r}"
    assert all(r["agent_id"] == memory_bench.AGENT for r in records)
    assert [r["id"] for r in records] == expected, f"other results than in-process: {query!r}"
    return len(records)


PROFILE: list[str] = []
"""``--profile FILE``: the server's cProfile output file."""
CPU_MS: dict[str, float] = {}
"""CPU time per timed call (ms), server process and this client, filled by _round_trips."""


def _server_process() -> object:
    import psutil

    children = [c for c in psutil.Process().children(recursive=True)
                if "wardian" in " ".join(c.cmdline())]
    assert len(children) == 1, children
    return children[0]


def _cpu(process: object) -> float:
    times = process.cpu_times()  # type: ignore[attr-defined]
    return float(times.user + times.system)


async def _round_trips(home: Path, workspace: Path, env: dict[str, str],
                       queries: list[str], expected: list[list[str]]
                       ) -> tuple[list[float], list[float], int]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mcp import ClientSession

    profile = ["-m", "cProfile", "-o", PROFILE[0]] if PROFILE else []
    params = StdioServerParameters(command=sys.executable,
                                   args=["-P", *profile, "-m", "wardian", "mcp"],
                                   env=env, cwd=str(workspace))
    times: list[float] = []
    pings: list[float] = []
    returned = 0
    with open(os.devnull, "w") as errlog:
        async with (stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as client):
            await client.initialize()
            await client.list_tools()  # the client caches output schemas for validation
            server = _server_process()
            cpu: dict[str, float] = {}
            for i, query in enumerate(queries):
                if i == WARMUP:
                    cpu = {"server": _cpu(server), "client": time.process_time()}
                started = time.perf_counter()
                result = await client.call_tool("memory_recall", {"query": query, "limit": 10})
                elapsed = (time.perf_counter() - started) * 1000
                assert not result.is_error, result
                assert result.structured_content is not None
                count = _check(query, result.structured_content, expected[i])
                if i >= WARMUP:
                    times.append(elapsed)
                    returned += count
            CPU_MS["server"] = (_cpu(server) - cpu["server"]) * 1000 / len(times)
            CPU_MS["client"] = (time.process_time() - cpu["client"]) * 1000 / len(times)
            cpu = {"server": _cpu(server), "client": time.process_time()}
            for _ in range(CALLS):  # the transport's floor: JSON-RPC ping over the same pipes
                started = time.perf_counter()
                await client.send_ping()
                pings.append((time.perf_counter() - started) * 1000)
            CPU_MS["server ping"] = (_cpu(server) - cpu["server"]) * 1000 / len(pings)
            CPU_MS["client ping"] = (time.process_time() - cpu["client"]) * 1000 / len(pings)
    return times, pings, returned


def main() -> int:
    global CALLS
    if "--profile" in sys.argv:
        PROFILE.append(os.path.abspath(sys.argv[sys.argv.index("--profile") + 1]))
    if "--calls" in sys.argv:
        CALLS = int(sys.argv[sys.argv.index("--calls") + 1])
    base = Path(tempfile.mkdtemp(prefix="wardian-mcp-bench-"))
    try:
        return _bench(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _bench(base: Path) -> int:
    home = base / "home"
    workspace = base / "repo"
    (workspace / ".git").mkdir(parents=True)
    memory_bench.WORKSPACE = str(workspace.resolve())
    started = time.perf_counter()
    memory_bench._build(home, RECORDS, memory_bench._needles())
    print(f"Built {RECORDS:,} records in {time.perf_counter() - started:.1f} s", flush=True)

    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    me = current()  # the bench process stands in for the `agent launch` supervisor
    token = CapabilityStore(store.conn).mint(memory_bench.AGENT, pid=me.pid,
                                             started_at=me.started_at, workspace=None)
    queries = _queries(home, CALLS + WARMUP)
    baseline, expected = [], []
    for query in queries:
        t0 = time.perf_counter()
        found = store.index.recall(memory_bench.AGENT, query, limit=10,
                             workspace=memory_bench.WORKSPACE)
        baseline.append((time.perf_counter() - t0) * 1000)
        assert found, query
        expected.append([r.id for r in found])

    env = {"WARDIAN_HOME": str(home), "WARDIAN_AGENT_ID": memory_bench.AGENT,
           "WARDIAN_CAPABILITY": token}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    times, pings, returned = anyio.run(_round_trips, home, workspace, env, queries, expected)
    median, p95 = statistics.median(times), sorted(times)[int(0.95 * (len(times) - 1))]
    base_median = statistics.median(baseline[WARMUP:])
    print(f"MCP memory_recall round trip at {RECORDS:,} records, {len(times)} calls "
          f"({returned} records returned and checked):")
    print(f"  median {median:.2f} ms  p95 {p95:.2f} ms  (target median <= "
          f"{TARGET_MEDIAN_MS:.0f} ms)")
    print(f"  in-process RecallIndex.recall median {base_median:.2f} ms · MCP / in-process "
          f"= {median / base_median:.1f}x")
    print(f"  MCP ping round trip (transport floor) median {statistics.median(pings):.2f} ms"
          f" (CPU per ping: server {CPU_MS['server ping']:.2f} ms, client "
          f"{CPU_MS['client ping']:.2f} ms)")
    print(f"  CPU per call: server {CPU_MS['server']:.2f} ms, client {CPU_MS['client']:.2f} ms "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: wall times on a "
          "busy machine include waiting for a CPU)")
    ok = median <= TARGET_MEDIAN_MS
    print("PASS" if ok else "MISS: the round trip is over the target")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
