"""Benchmark the memory review: draft a review of an agent with 10,000 records.

Target: one ``memory-review`` run with the builtin reviewer (snapshot with the archive
evidence check, the rules reviewer, the drafted plan and its digest, the run's stored
outputs) takes <= 2 s of CPU time for an agent with 10,000 records and an archive of
10,000 messages.

The memory is invented: rules made of pseudo-words, with planted findings — duplicate
pairs (one restates the other), contradiction pairs (one negates the other), stale
``current`` checkpoints, records whose evidence is not in the archive, flagged records —
and near-miss pairs that share a sentence frame but name another tool ("Run ruff before …"
/ "Run cargo fmt before …"), which must stay two records. The drafted plan is checked: every
planted finding is in it (within the plan's 100 operations, so the plants are kept under
that), no near miss is, and memory is unchanged by the run. Exit 1 on a miss or over the
target.

Timings: CPU time (user + system of this process, `time.process_time`) of the whole run
(`execute_run`), median of 5 fresh runs (the fastest is printed too: the least disturbed
by other work on the machine), and of its phases on their own (snapshot, reviewer,
draft). Wall time is printed beside it.

Run: ``.venv/bin/python bench/review_bench.py`` (about 30 s, mostly seeding).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RECORDS = 10_000
RUNS = 5
TARGET_CPU_S = 2.0
PLANTED = {"duplicate": 15, "contradiction": 15, "stale_checkpoint": 15,
           "missing_evidence": 10, "flagged": 5}
NEAR_MISSES = 15
OLD = "2026-01-05T09:00:00.000000Z"

_SYLLABLES = ("ka", "lo", "mi", "tu", "re", "sa", "no", "vi", "pe", "do", "ga", "zu",
              "fe", "ri", "mo", "ba", "te", "ku", "ne", "ho", "li", "sy", "wa", "qu")


_FILLERS = (
    "Document the {0} {1} step of the {2} {3} guide in {4}",
    "Keep {0} fixtures next to the {1} tests of {2} {3}",
    "The {0} service reads its {1} {3} settings from {2}.toml",
    "Ask before changing the {0} schema of {1} {2} {3}",
    "Prefer small commits when touching {0} {1} or {2} {3}",
    "Deploy {0} {3} only after the {1} {2} job is green",
    "Name {0} branches after the {1} {3} ticket and {2}",
    "Write {0} {3} release notes for every {1} change in {2}",
    "Log {0} failures to the {1} {3} channel with the {2} tag",
    "Review {0} {1} pull requests within a day of {2} {3}",
    "Cache {0} {3} responses in the {1} {2} layer",
    "The {0} team owns {1} {3} and {2} dashboards",
)
"""Sentences the unplanted records are made of (pseudo-words filled in)."""


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(3))


def _texts(rng: random.Random) -> tuple[list[tuple[str, str]], dict[str, list[int]]]:
    """(text, kind) per record and the indexes of each planted kind."""
    out: list[tuple[str, str]] = []
    planted: dict[str, list[int]] = {k: [] for k in (*PLANTED, "near_miss", "kept")}
    for _ in range(PLANTED["duplicate"]):
        a, b, c = _word(rng), _word(rng), _word(rng)
        base = f"run the {a} {b} check before the {c} release"
        planted["kept"].append(len(out))
        out.append((base[0].upper() + base[1:], "stable"))
        planted["duplicate"].append(len(out))
        out.append(("Always " + base, "stable"))
    for _ in range(PLANTED["contradiction"]):
        a, b, c = _word(rng), _word(rng), _word(rng)
        planted["contradiction"].append(len(out))
        out.append((f"Use {a} for the {b} {c} builds", "stable"))
        planted["kept"].append(len(out))
        out.append((f"Never use {a} for the {b} {c} builds", "stable"))
    for _ in range(NEAR_MISSES):
        a = _word(rng)
        planted["near_miss"].append(len(out))
        out.append((f"Run ruff before the {a} commit", "stable"))
        planted["near_miss"].append(len(out))
        out.append((f"Run cargo fmt before the {a} commit", "stable"))
    for _ in range(PLANTED["stale_checkpoint"]):
        planted["stale_checkpoint"].append(len(out))
        out.append((f"The {_word(rng)} {_word(rng)} migration is half done", "current"))
    while len(out) < RECORDS:
        w = [_word(rng) for _ in range(5)]
        kind = "current" if len(out) % 50 == 0 else "stable"
        out.append((rng.choice(_FILLERS).format(*w), kind))
    free = [i for i in range(len(out)) if not any(i in v for v in planted.values())]
    picked = rng.sample(free, PLANTED["missing_evidence"] + PLANTED["flagged"])
    planted["missing_evidence"] = picked[:PLANTED["missing_evidence"]]
    planted["flagged"] = picked[PLANTED["missing_evidence"]:]
    return out, planted


def seed(home: Path) -> tuple[str, list[str], dict[str, list[int]]]:
    """The agent, its record ids (in `_texts` order) and the planted indexes."""
    os.environ["WARDIAN_HOME"] = str(home)
    from wardian._db import atomic
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.archives import ArchiveStore

    rng = random.Random(7)
    texts, planted = _texts(rng)
    agent = AgentRegistry(open_state_db()).add("bench-agent", "claude", workspace="/work/repo").id
    store = MemoryStore(open_memory_db())
    ids: list[str] = []
    missing = set(planted["missing_evidence"])
    with atomic(store.conn):
        for i, (text, kind) in enumerate(texts):
            evidence = f"an unarchived remark number {i}" if i in missing else text
            ids.append(store.insert_in_transaction(
                agent, text=text, evidence=evidence, kind=kind,  # type: ignore[arg-type]
                scope=Scope.workspace("/work/repo"), sources=[], actor="bench", reason=None,
                now=f"2026-12-01T00:{i // 6000:02d}:{(i // 100) % 60:02d}.{i:06d}Z"))
        for i in planted["stale_checkpoint"]:
            store.conn.execute("UPDATE records SET updated_at = ? WHERE id = ?", (OLD, ids[i]))
        for i in planted["flagged"]:
            store.conn.execute("UPDATE records SET flagged = 'secret_detected: bench' "
                               "WHERE id = ?", (ids[i],))
    lines = []
    for i, (text, _kind) in enumerate(texts):
        lines.append(json.dumps({
            "parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": "/work/repo", "sessionId": "bench", "version": "2.0.76", "type": "user",
            "message": {"role": "user", "content": text}, "uuid": f"u{i}",
            "timestamp": "2026-11-29T10:00:00.000Z"}))
    transcript = home / "bench-session.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    archives = ArchiveStore(open_state_db())
    archives.import_transcript(agent, transcript, event_id="bench")
    return agent, ids, planted


def _memory_state() -> list[Any]:
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return [tuple(r) for r in store.conn.execute(
        "SELECT id, status, current_revision_id, updated_at FROM records ORDER BY id")]


def _run(agent: str) -> tuple[float, float, dict[str, Any]]:
    from wardian.config import open_state_db
    from wardian.engine.executor import execute_run
    from wardian.engine.runs import RunStore

    runs = RunStore(open_state_db())
    run, _ = runs.create_run(
        blueprint_id="memory-review", agent_id=agent,
        assignments={"reviewer": {"target_type": "temporary_provider",
                                  "provider": "builtin", "model": "curator-rules"}},
        inputs={}, invocation={"trigger": "manual", "payload": {}}, idempotency_key=None,
        workspace="/work/repo")
    cpu, wall = time.process_time(), time.perf_counter()
    final = execute_run(run.id)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if final.status != "succeeded":
        raise SystemExit(f"the review run {final.status}: {final.error}")
    runs = RunStore(open_state_db())
    ((_step, draft),) = runs.action_outputs(run.id, "memory.draft_review")
    return cpu, wall, draft


def _phases(agent: str) -> dict[str, float]:
    from wardian.app.consolidation import memory_snapshot
    from wardian.app.reviews import draft_review
    from wardian.config import open_state_db
    from wardian.curator.review import review
    from wardian.memory.db import open_memory_db

    out: dict[str, float] = {}
    state, memory = open_state_db(), open_memory_db()
    start = time.process_time()
    snapshot = memory_snapshot(state=state, memory=memory, agent_id=agent, workspace=None,
                               include_flagged=True, check_evidence=True)
    out["snapshot"] = time.process_time() - start
    start = time.process_time()
    answer = review({"records": snapshot["records"],
                     "current_review_days": snapshot["current_review_days"]})
    out["reviewer"] = time.process_time() - start
    start = time.process_time()
    draft_review(run_id="bench", agent_id=agent, answer=answer, snapshot=snapshot)
    out["draft"] = time.process_time() - start
    return out


def check(draft: dict[str, Any], ids: list[str], planted: dict[str, list[int]]) -> list[str]:
    """What the drafted plan missed or got wrong, one line each ([] when all is found)."""
    ops = {op["memory_id"]: op for op in (draft.get("plan") or {}).get("operations", [])}
    misses = []
    for i in planted["duplicate"]:  # one of the pair (i - 1, i) absorbed into the other
        a, b = ops.get(ids[i - 1]), ops.get(ids[i])
        into = [op.get("target_memory_id") for op in (a, b) if op is not None]
        if into not in ([ids[i]], [ids[i - 1]]):
            misses.append(f"duplicate pair {ids[i - 1][:8]}/{ids[i][:8]} is not one merge")
    for kind in PLANTED:
        if kind == "duplicate":
            continue
        for i in planted[kind]:
            if ids[i] not in ops:
                misses.append(f"planted {kind} {ids[i][:8]} is not in the plan")
    for i in planted["near_miss"] + planted["kept"][PLANTED["duplicate"]:]:
        if ids[i] in ops:
            misses.append(f"{ids[i][:8]} should stay but is in the plan: {ops[ids[i]]}")
    extra = len(ops) - sum(PLANTED.values())
    if extra:
        misses.append(f"{extra} operation(s) beyond the planted findings")
    return misses


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="wardian-review-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        start = time.perf_counter()
        agent, ids, planted = seed(home)
        print(f"seeded {RECORDS:,} records and {RECORDS:,} archived messages in "
              f"{time.perf_counter() - start:.1f}s")
        _phases(agent)  # warm: imports, caches
        before = _memory_state()
        timings, draft = [], {}
        for _ in range(RUNS):
            cpu, wall, draft = _run(agent)
            timings.append((cpu, wall))
        unchanged = _memory_state() == before
        phases = _phases(agent)
        cpu = statistics.median(t[0] for t in timings)
        wall = statistics.median(t[1] for t in timings)
        fastest = min(t[0] for t in timings)
        print(f"review run (builtin reviewer), median of {RUNS}: {cpu:.2f} s CPU "
              f"(fastest {fastest:.2f} s), {wall:.2f} s wall (target <= {TARGET_CPU_S:.1f} s "
              f"CPU); load average {os.getloadavg()[0]:.2f}")
        print("phases (CPU s): " + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()))
        print(f"plan: {draft['operations']} operation(s) · {draft['counts']} · "
              f"{draft['findings']} finding(s) · {draft['left']} left · {draft['digest_prefix']}")
        misses = check(draft, ids, planted)
        if not unchanged:
            misses.append("memory changed during the review runs")
        for line in misses:
            print(f"MISS: {line}")
        if cpu > TARGET_CPU_S:
            print(f"OVER TARGET: {cpu:.2f} s CPU > {TARGET_CPU_S:.1f} s")
        return 1 if misses or cpu > TARGET_CPU_S else 0


if __name__ == "__main__":
    sys.exit(main())
