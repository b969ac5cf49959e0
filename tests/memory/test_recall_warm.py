"""Recall's warm word statistics (`wardian.memory.bm25_warm`, issue 16) answer exactly as
the SQL they stand in for, and are dropped as soon as anything writes to ``memory.db``."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from wardian.memory.bm25_warm import TermStats, rank_rare
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.recall_index import RECALL_EXACT_POSTINGS
from wardian.memory.store import MemoryStore

AGENT = "dddddddd-0000-4000-8000-000000000016"
WORDS = ("quartz", "lemur", "fjord", "tundra", "basalt", "ember", "walrus", "nickel")


def _fill(store: MemoryStore) -> None:
    """Records made of a few made-up words: many equal BM25 scores (same length, one
    occurrence), several scopes, another agent, removed records, equal and unequal times."""
    from wardian._db import atomic

    rng = random.Random(16)
    with atomic(store.conn):
        for i in range(240):
            words = rng.sample(WORDS, rng.choice((1, 2, 3))) * rng.choice((1, 1, 2))
            scope = rng.choice((Scope.agent(), Scope.workspace("/ws"), Scope.workspace("/x")))
            agent = AGENT if i % 9 else "eeeeeeee-0000-4000-8000-000000000016"
            record_id = store.insert_in_transaction(
                agent, text=" ".join(words), evidence="filler note", kind="stable",
                scope=scope, sources=(), actor="t", reason=None,
                now=f"2026-01-{1 + i % 3:02d}T00:00:00Z")
            if i % 11 == 0:
                store.conn.execute("UPDATE records SET status = 'removed' WHERE id = ?",
                                   (record_id,))


def test_warm_bm25_ranking_is_the_sql_ranking(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    _fill(store)
    stats = TermStats(store.index._version())
    cases = 0
    for workspace in ("/ws", "/x", None):
        where, params = store.index._scope_sql(AGENT, workspace)
        in_scope = {int(r[0]): r[1] for r in store.conn.execute(
            "SELECT r.rowid, r.updated_at FROM records r WHERE 1" + where, params)}
        for size in (1, 2, 3):
            for rare in ([list(c) for c in (WORDS[:size], WORDS[2:2 + size], WORDS[5:5 + size])]):
                freq = {t: stats.doc_freq(store.conn, t, RECALL_EXACT_POSTINGS + 1)
                        for t in rare}
                used = sum(freq.values())
                for depth in (1, 3, 30):  # depth 1 and 3: few in scope among the first 8x
                    sql = [(int(r["rid"]), float(r["score"]), r["updated_at"]) for r in
                           store.index._rank_rare(rare, freq, where, params, depth, used)]
                    warm = rank_rare([stats.bm25(store.conn, t) for t in rare],
                                     in_scope, depth=depth, wide=8 * depth, used=used)
                    assert warm == sql, (rare, workspace, depth)
                    cases += 1
    assert cases == 81


def test_a_write_drops_the_warm_statistics(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    if not store.index.semantic_enabled():
        pytest.skip("the warm path needs the embedding model (it brings the scope)")
    first = store.save(AGENT, "the lemur sleeps", evidence="e", scope=Scope.agent(),
                       actor="t").id
    assert [r.id for r in store.index.recall(AGENT, "lemur")] == [first]
    before = store.index._terms
    second = store.save(AGENT, "a lemur and a lemur", evidence="e", scope=Scope.agent(),
                        actor="t").id
    assert [r.id for r in store.index.recall(AGENT, "lemur")] == [second, first]
    assert store.index._terms is not before


SAVER = r"""
import sys
from wardian.memory.models import Scope
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore

store = MemoryStore(open_memory_db())
if sys.argv[1] == "save":
    print(store.save(sys.argv[2], sys.argv[3], evidence="from another process",
                     scope=Scope.agent(), actor="t").id)
elif sys.argv[1] == "update":
    store.update(sys.argv[2], sys.argv[3], text=sys.argv[4], actor="t")
else:
    store.remove(sys.argv[2], sys.argv[3], actor="t")
"""


def test_another_process_writing_is_seen_by_the_next_recall(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    first = store.save(AGENT, "walrus migration route", evidence="e", scope=Scope.agent(),
                       actor="t").id
    for _ in range(2):  # the second recall is answered from the warm state
        assert [r.id for r in store.index.recall(AGENT, "walrus")] == [first]

    def other(*args: str) -> str:
        done = subprocess.run([sys.executable, "-c", SAVER, *args], check=True,
                              capture_output=True, text=True)
        return done.stdout.strip()

    second = other("save", AGENT, "walrus walrus colony")
    assert [r.id for r in store.index.recall(AGENT, "walrus")] == [second, first]
    other("update", AGENT, first, "walrus migration route, revised")
    assert [r.text for r in store.index.recall(AGENT, "walrus")] == [
        "walrus walrus colony", "walrus migration route, revised"]
    other("remove", AGENT, first)
    assert [r.id for r in store.index.recall(AGENT, "walrus")] == [second]


def test_recalled_records_kept_past_their_bound_are_all_returned(wardian_home: Path) -> None:
    from wardian.memory.recall_index import _KEPT_RECORDS

    store = MemoryStore(open_memory_db())
    ids = [store.save(AGENT, f"ember note {i}", evidence="e", scope=Scope.agent(),
                      actor="t").id for i in range(3)]
    rowids = [int(store.conn.execute("SELECT rowid FROM records WHERE id = ?", (i,))
                  .fetchone()[0]) for i in ids]
    kept: dict[int, object] = {}
    first = store.index._records_by_rowid(AGENT, rowids[:2], kept)  # type: ignore[arg-type]
    kept.update({-n: first[0] for n in range(1, _KEPT_RECORDS)})  # the bound is reached
    assert [r.id for r in store.index._records_by_rowid(AGENT, rowids, kept)] == ids  # type: ignore[arg-type]
