"""Benchmark reviewed maintenance: preview and apply of a 100-operation plan.

Stores of 1,000 and 100,000 records (one owner); the plan has 50 revise (with a source
addition), 20 create, 15 retire and 15 retire_into operations. Targets (issue 3): preview
<= 50 ms and apply <= 100 ms at 100k records.

Timings (wall clock, milliseconds, median of 5 fresh plans per store):

* ``preview`` — `build_preview` on an open store (validation excluded);
* ``preview+cache`` — what ``garden maintain preview`` does after parsing: open memory.db,
  preview, open state.db and remember the preview;
* ``apply`` — `apply_plan` with ``--confirm`` and the operator's yes (the terminal question
  answered at once): replay check, cached-preview check, one
  ``BEGIN IMMEDIATE`` that re-verifies and writes 100 records + revisions + the receipt,
  COMMIT.

Run: ``.venv/bin/python bench/maintenance_bench.py`` (about 30 s).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from wardian._db import StateDB, atomic
from wardian.memory.db import MemoryDB
from wardian.memory.maintenance.apply import apply_plan
from wardian.memory.maintenance.plan import load_plan_bytes
from wardian.memory.maintenance.preview import build_preview, digest_prefix
from wardian.memory.maintenance.previews import PreviewCache
from wardian.memory.store import MemoryStore

OWNER = str(uuid.uuid4())
RUNS = 5
NOW = "2026-01-01T00:00:00.000000Z"


def populate(store: MemoryStore, count: int) -> list[tuple[str, str]]:
    """Bulk-insert `count` active records with 2 sources and 1 revision each."""
    ids: list[tuple[str, str]] = []
    records, revisions, sources = [], [], []
    for i in range(count):
        rid, rev = str(uuid.uuid4()), str(uuid.uuid4())
        text = f"record {i}: prefer concise technical handoffs in workspace {i % 50}"
        records.append((rid, OWNER, "stable" if i % 3 else "current", "workspace",
                        f"/work/repo{i % 50}", text, f"evidence {i}", "active", NOW, NOW, rev))
        snapshot = json.dumps({"text": text, "status": "active"})
        revisions.append((rev, rid, 1, snapshot, "bench", None, NOW))
        sources += [(rid, 0, "file", f"notes/{i}.md", 1), (rid, 1, "url", f"https://x/{i}", 0)]
        ids.append((rid, rev))
    with atomic(store.conn):
        store.conn.executemany(
            "INSERT INTO records (id, agent_id, kind, scope_kind, scope_path, text, evidence,"
            " status, created_at, updated_at, current_revision_id)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)", records)
        store.conn.executemany(
            "INSERT INTO revisions (revision_id, record_id, seq, snapshot_json, actor, reason,"
            " created_at) VALUES (?,?,?,?,?,?,?)", revisions)
        store.conn.executemany(
            "INSERT INTO record_sources (record_id, position, source_type, locator, is_primary)"
            " VALUES (?,?,?,?,?)", sources)
    return ids


def make_plan(pool: list[tuple[str, str]], run: int) -> bytes:
    """A 100-operation plan over 80 records taken from `pool` (consumed)."""
    chosen = [pool.pop() for _ in range(80)]
    ops: list[dict[str, Any]] = []
    for rid, rev in chosen[:50]:
        ops.append({"op": "revise", "memory_id": rid, "expected_revision_id": rev,
                    "text": "revised text", "kind": "stable",
                    "add_sources": [{"source_type": "artifact", "locator": "Cargo.toml"}]})
    for i in range(20):
        ops.append({"op": "create", "client_key": f"c{i}", "text": f"new {i}",
                    "kind": "current", "scope": {"kind": "agent"}, "evidence_excerpt": "ev",
                    "sources": [{"source_type": "file", "locator": f"n{i}.md"}]})
    for rid, rev in chosen[50:65]:
        ops.append({"op": "retire", "memory_id": rid, "expected_revision_id": rev,
                    "reason": "stale"})
    for i, (rid, rev) in enumerate(chosen[65:80]):
        ops.append({"op": "retire_into", "memory_id": rid, "expected_revision_id": rev,
                    "target_memory_id": chosen[i][0]})
    plan = {"schema_version": 1, "plan_id": f"bench-{run}", "agent_id": OWNER,
            "idempotency_key": f"bench-{run}", "operations": ops}
    return json.dumps(plan).encode()


def bench(size: int, folder: Path) -> dict[str, float]:
    memory_db, state_db = folder / f"memory-{size}.db", folder / f"state-{size}.db"
    store = MemoryStore(MemoryDB.open(memory_db))
    cache = PreviewCache(StateDB.open(state_db))
    started = time.perf_counter()
    pool = populate(store, size)
    setup_s = time.perf_counter() - started
    times: dict[str, list[float]] = {"preview": [], "preview+cache": [], "apply": []}
    for run in range(RUNS):
        plan = load_plan_bytes(make_plan(pool, run))

        t0 = time.perf_counter()
        build_preview(plan, store, OWNER)
        times["preview"].append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        fresh = MemoryStore(MemoryDB.open(memory_db))
        preview = build_preview(plan, fresh, OWNER)
        writer = PreviewCache(StateDB.open(state_db))
        writer.put(owner_id=OWNER, digest=preview.digest, plan_id=plan.plan_id,
                   idempotency_key=plan.idempotency_key, conflict_count=len(preview.conflicts),
                   document=preview.to_json())
        times["preview+cache"].append(time.perf_counter() - t0)
        assert preview.conflict_free, preview.conflicts

        t0 = time.perf_counter()
        result = apply_plan(plan, store, cache, owner_id=OWNER, confirm=lambda _: True,
                            confirm_digest=digest_prefix(preview.digest))
        times["apply"].append(time.perf_counter() - t0)
        assert not result.replayed
    out = {name: statistics.median(v) * 1000 for name, v in times.items()}
    out["apply_max"] = max(times["apply"]) * 1000
    out["preview_max"] = max(times["preview"]) * 1000
    out["setup_s"] = setup_s
    return out


def main() -> int:
    print(f"maintenance bench: 100-operation plan, median of {RUNS} runs (ms)")
    print(f"{'records':>8} {'preview':>9} {'(max)':>7} {'prev+cache':>11} {'apply':>8} "
          f"{'(max)':>7}  setup")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for size in (1_000, 100_000):
            r = bench(size, Path(tmp))
            print(f"{size:>8} {r['preview']:>9.1f} {r['preview_max']:>7.1f} "
                  f"{r['preview+cache']:>11.1f} {r['apply']:>8.1f} {r['apply_max']:>7.1f}  "
                  f"{r['setup_s']:.1f}s")
            if size == 100_000:
                failed = r["preview"] > 50 or r["apply"] > 100
    print("targets at 100k: preview <= 50 ms, apply <= 100 ms:",
          "MISSED" if failed else "met")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
