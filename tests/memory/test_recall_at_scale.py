"""Recall where the store is large enough that its words stop telling records apart:

* a compound name in the query (``marsh-lantern-kiosk``) finds the one record holding it
  even when each of its words is in more records than recall ranks exactly (every word
  is "common") and the record words the question otherwise;
* the semantic search returns the exact nearest record even when the vector's leading
  dimensions alone rank it far down (beyond a shortlist of a few hundred by the first 64);
* a process that has not loaded NumPy answers from a large scope's vector file without
  importing it, with the same answers and the same nearest records as the NumPy search.

Real SQLite (and PostgreSQL) stores, real embedding model."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wardian._db import atomic
from wardian._util import utc_now_iso
from wardian.memory.db import open_memory_db
from wardian.memory.embedding import model_files
from wardian.memory.models import Scope
from wardian.memory.ranking import query_terms
from wardian.memory.recall_index import _NUMPY_FROM, RECALL_EXACT_POSTINGS
from wardian.memory.store import MemoryStore

pytestmark = pytest.mark.skipif(model_files() is None, reason="wordllama is not installed")

AGENT = "ffffffff-0000-4000-8000-000000000006"


def _insert(store: MemoryStore, texts: list[str]) -> list[str]:
    with atomic(store.conn):
        return [store.insert_in_transaction(
            AGENT, text=text, evidence="e", kind="stable", scope=Scope.agent(), sources=(),
            actor="t", reason=None, now=utc_now_iso()) for text in texts]


def test_query_terms_keep_a_compound_name_beside_its_words() -> None:
    assert query_terms("which port does marsh-lantern-kiosk listen on?") == [
        "port", "marsh", "lantern", "kiosk", "marsh-lantern-kiosk", "listen"]
    assert query_terms("where is conf/app.ini read") == [
        "conf", "app", "ini", "conf/app.ini", "read"]
    # Fewer than two informative words joined: nothing more than the word.
    assert query_terms("a how-to for x-ray") == ["x", "ray", "x-ray"]
    assert query_terms("how-to") == []


@pytest.fixture
def store(backend: str) -> MemoryStore:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    return MemoryStore(open_memory_db())


def test_a_compound_name_finds_its_record_when_each_of_its_words_is_common(
        store: MemoryStore) -> None:
    """Every word of the name is in more than `RECALL_EXACT_POSTINGS` records, none of
    which holds the name itself; the answer holds the name and none of the question's
    other words, and is the oldest record. Counted word by word, it covers no more of the
    question than any of the others and is not among the newest holding them all."""
    rng = random.Random(3)
    shapes = ("the kiosk crew keeps a lantern by the marsh {x}",
              "marsh notes: lantern {x} moved, kiosk port unchanged",
              "a lantern for the {x} kiosk near the marsh listens at dusk",
              "kiosk {x} and marsh lantern share a port")
    fillers = ["tide", "reed", "heron", "dock", "rope", "sail", "gull", "pier", "net", "oar"]
    decoys = [rng.choice(shapes).format(x=rng.choice(fillers))
              for _ in range(RECALL_EXACT_POSTINGS + 100)]
    assert not any("marsh lantern kiosk" in d.replace("-", " ") for d in decoys)
    answer = _insert(store, ["Connections to marsh-lantern-kiosk arrive on 7411."])[0]
    _insert(store, decoys)
    found = [r.id for r in store.index.recall(
        AGENT, "which port does marsh-lantern-kiosk listen on?", limit=5)]
    assert found[:1] == [answer]


def test_the_nearest_record_is_found_when_its_leading_dimensions_rank_it_low(
        wardian_home: Any) -> None:
    """A record whose vector holds nothing in its first 64 dimensions and the query's
    direction in the rest: by those 64 it ranks below hundreds of records, by the whole
    vector among the nearest few. The search must return it (the shortlist is rescored with
    the whole vectors, so what counts is that it makes the shortlist)."""
    import numpy as np

    from wardian.memory.embedding import Embedder

    store = MemoryStore(open_memory_db())
    rng = random.Random(8)
    words = ["kiln", "glaze", "clay", "shelf", "batch", "firing", "cone", "raku", "slip",
             "wheel", "trim", "bisque", "stoneware", "porcelain", "oxide", "wax", "tongs",
             "studio", "order", "supplier"]
    ids = _insert(store, [" ".join(rng.choices(words, k=8)) for _ in range(_NUMPY_FROM + 500)])
    embedder = store.index.embedder()
    assert embedder is not None
    question = "which supplier sells porcelain slip"
    query = np.asarray(embedder.embed(question), dtype=np.float32)
    odd = query.copy()
    odd[:64] = 0.0
    odd /= float(np.linalg.norm(odd))
    with atomic(store.conn):
        store.conn.execute("UPDATE record_vectors SET vector = ? WHERE record_id = ?",
                           (Embedder.pack(odd.tolist()), ids[0]))
    rowid = int(store.conn.execute("SELECT rowid FROM records WHERE id = ?",
                                   (ids[0],)).fetchone()[0])
    rows = store.conn.execute("SELECT r.rowid, v.vector FROM records r JOIN record_vectors v"
                              " ON v.record_id = r.id ORDER BY r.rowid").fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f2").reshape(
        len(rows), -1).astype(np.float32)
    at = [int(r[0]) for r in rows].index(rowid)
    full, lead = matrix @ query, matrix[:, :64] @ query[:64]
    assert int((full > full[at]).sum()) < 5  # among the nearest by the whole vector
    assert int((lead > lead[at]).sum()) > 600  # beyond a 64-d shortlist of a few hundred
    found: dict[int, Any] = {}
    store.index._semantic_candidates(AGENT, None, query.tolist(), 30, found)
    assert rowid in found
    assert abs(found[rowid].cosine - float(full[at])) < 1e-3
    assert set(found) == {int(rows[i][0]) for i in np.argsort(-full)[:30]}


_CHILD = r"""
import json, sys
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
agent, query = sys.argv[1], sys.argv[2]
store = MemoryStore(open_memory_db())
answers = [r.id for r in store.index.recall(agent, query, limit=10)]
found = {}
store.index._semantic_candidates(agent, None, store.index.embedder().embed(query), 30, found)
one_query = "numpy" in sys.modules
again = [r.id for r in store.index.recall(agent, query, limit=10)]
print(json.dumps({"numpy": one_query, "numpy_after_two": "numpy" in sys.modules,
                  "answers": answers, "again": again,
                  "nearest": {str(k): v.cosine for k, v in found.items()}}))
"""


def test_a_one_shot_recall_over_a_large_scope_does_not_import_numpy(
        wardian_home: Any) -> None:
    """A new process (no NumPy loaded) recalls over a scope with more than `_NUMPY_FROM`
    vectors whose set an earlier process wrote to disk: answering one query, it does not
    import NumPy, returns the same answers as the NumPy search in the process that wrote
    the set, and its semantic candidates are the exact 30 nearest records with their
    cosines. One process per query, as ``wardian memory recall`` runs."""
    import numpy as np

    import wardian

    store = MemoryStore(open_memory_db())
    rng = random.Random(21)
    words = ["harbour", "ferry", "tide", "ticket", "pier", "crane", "cargo", "manifest",
             "berth", "pilot", "buoy", "anchor", "dredge", "customs", "quay", "tug",
             "ballast", "hull", "winch", "lighthouse", "schedule", "fuel", "deck", "crew"]
    _insert(store, [" ".join(rng.choices(words, k=rng.randint(5, 11)))
                    for _ in range(_NUMPY_FROM + 700)])
    queries = ["when does the ferry leave the pier", "customs manifest for cargo",
               "which tug pulls the crane barge", "anchor and ballast on the hull"]
    built = [[r.id for r in store.index.recall(AGENT, q, limit=10)] for q in queries]
    assert list((Path(store.path).parent / "vectors").glob("*.wvs")), "no set was written"
    rows = store.conn.execute("SELECT r.rowid, v.vector FROM records r JOIN record_vectors v"
                              " ON v.record_id = r.id ORDER BY r.rowid").fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f2").reshape(
        len(rows), -1).astype(np.float64)
    embedder = store.index.embedder()
    assert embedder is not None
    env = {**os.environ, "PYTHONPATH": str(Path(wardian.__file__).parents[1])}
    for query, answers in zip(queries, built, strict=True):
        done = subprocess.run([sys.executable, "-c", _CHILD, AGENT, query], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["numpy"] is False, query
        assert seen["answers"][:5] == answers[:5], query
        scores = matrix @ np.asarray(embedder.embed(query), dtype=np.float64)
        exact = {int(rows[i][0]): float(scores[i]) for i in np.argsort(-scores)[:30]}
        nearest = {int(k): v for k, v in seen["nearest"].items()}
        assert set(nearest) == set(exact), query
        assert all(abs(nearest[k] - exact[k]) < 1e-4 for k in exact), query
        # A second query in the same process: it is long-running, and searches with
        # NumPy from then on, with the same answers.
        assert seen["numpy_after_two"] is True and seen["again"] == seen["answers"], query
