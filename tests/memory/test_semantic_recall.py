"""Semantic recall with the optional embedding model (`wardian.memory.embedding`):
the light tokenizer matches the real one, vectors follow revisions, paraphrases are found
and nothing is found for a question nothing fits (issue 19)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wardian.memory.db import open_memory_db
from wardian.memory.embedding import DIM, Embedder, model_files
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

pytestmark = pytest.mark.skipif(model_files() is None, reason="wordllama is not installed")

AGENT = "dddddddd-0000-4000-8000-000000000004"


@pytest.fixture
def store(backend: str) -> MemoryStore:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    return MemoryStore(open_memory_db())


def test_light_tokenizer_matches_the_packaged_tokenizer(
        light_and_reference: tuple[Embedder, Any], tmp_path: Path) -> None:
    embedder, reference = light_and_reference
    for text in ("Rotate the owl-keys of ferngrove every 9 days.", "Ünïcode naïve façade ✓",
                 "snake_case and CamelCaseIdentifiers/with/paths.yaml --flag=3"):
        assert embedder.tokenise(text) == reference.encode(text, add_special_tokens=False).ids
    # The vocabulary cache is written once and read back the same.
    assert list(tmp_path.glob("wordllama-vocab-*.table"))
    again = Embedder.load(cache_dir=tmp_path)
    assert again is not None and again.tokenise("owl keys") == embedder.tokenise("owl keys")
    vector = embedder.embed("owl keys")
    assert vector is not None and len(vector) == DIM
    assert abs(sum(v * v for v in vector) - 1) < 1e-6
    assert embedder.embed("   ") is None


def test_vectors_follow_the_revision(store: MemoryStore) -> None:
    rec = store.save(AGENT, "Bake sourdough at 240 degrees", evidence="e",
                     scope=Scope.agent(), actor="t")
    row = store.conn.execute("SELECT revision_id, vector FROM record_vectors"
                             " WHERE record_id = ?", (rec.id,)).fetchone()
    assert row["revision_id"] == rec.current_revision_id
    updated = store.update(AGENT, rec.id, text="Bake rye at 220 degrees", actor="t")
    after = store.conn.execute("SELECT revision_id, vector FROM record_vectors"
                               " WHERE record_id = ?", (rec.id,)).fetchone()
    assert after["revision_id"] == updated.current_revision_id
    assert after["vector"] != row["vector"]


def test_a_paraphrase_finds_its_record_and_an_unrelated_question_nothing(
    store: MemoryStore,
) -> None:
    texts = ["Use pnpm, not npm or yarn, in the web workspace",
             "The staging database is postgres 16 on host db-stage-3",
             "Release notes are written in docs/releases by the release captain",
             "Run the linter before pushing to any shared branch",
             "The mobile app supports Portuguese and Polish",
             "Payments are retried three times with jittered backoff"]
    ids = [store.save(AGENT, t, evidence="e", scope=Scope.workspace("/w"), actor="t").id
           for t in texts]
    question = "what languages does the phone app ship in"
    found = store.index.recall(AGENT, question, workspace="/w")
    assert found and found[0].id == ids[4]
    # Its words alone ("app") cover too little of the question: meaning found it.
    store.index._embedder = None
    assert store.index.recall(AGENT, question, workspace="/w") == []
    assert store.index.recall(AGENT, "what is the name of the office cat", workspace="/w") == []


@pytest.mark.pg_slow
def test_vector_search_at_numpy_size_returns_the_exact_nearest(store: MemoryStore) -> None:
    """Past `_NUMPY_FROM` records the search scans the vectors' leading dimensions, keeps
    the rows above a cut from the exact head mean/spread and rescores them: the result
    must be the true top."""
    import random

    import numpy as np

    from wardian._db import atomic
    from wardian._util import utc_now_iso
    from wardian.memory.recall_index import _NUMPY_FROM

    rng = random.Random(5)
    words = ["kiln", "glaze", "clay", "shelf", "batch", "firing", "cone", "raku", "slip",
             "wheel", "trim", "bisque", "stoneware", "porcelain", "oxide", "wax", "tongs",
             "studio", "order", "supplier"]
    with atomic(store.conn):
        for _ in range(_NUMPY_FROM + 300):
            store.insert_in_transaction(
                AGENT, text=" ".join(rng.choices(words, k=8)), evidence="e", kind="stable",
                scope=Scope.agent(), sources=(), actor="t", reason=None, now=utc_now_iso())
    embedder = store.index.embedder()
    assert embedder is not None
    rows = store.conn.execute("SELECT r.rowid, v.vector FROM records r JOIN record_vectors v"
                              " ON v.record_id = r.id").fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f2").reshape(
        len(rows), -1).astype(np.float32)
    for question in ("which supplier sells porcelain slip", "raku firing with wax"):
        vector = embedder.embed(question)
        assert vector is not None
        found: dict[int, Any] = {}
        store.index._semantic_candidates(AGENT, None, vector, 30, found)
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        best = {int(rows[i][0]) for i in np.argsort(-scores)[:30]}
        assert set(found) == best
        top = max(found.values(), key=lambda c: c.cosine)
        assert abs(top.cosine - float(scores.max())) < 1e-4
