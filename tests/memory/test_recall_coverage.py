"""A record's coverage of a query is the record's, however recall found it: a record that
only the semantic search brought in (outside the lexical candidates' cut) is credited
with the query words it holds, exactly as if BM25 had found it. In a large store the
lexical cut keeps a smaller share of the records holding the query's words, so without
this the right answer, found by meaning, scored as if it held none of them. Real store
files, made-up records, on both backends."""

from __future__ import annotations

import random
import re

import pytest

from wardian._db import atomic
from wardian._util import utc_now_iso
from wardian.memory.db import open_memory_db
from wardian.memory.embedding import model_files
from wardian.memory.models import Scope
from wardian.memory.ranking import query_terms
from wardian.memory.store import MemoryStore

pytestmark = pytest.mark.skipif(model_files() is None, reason="wordllama is not installed")

AGENT = "eeeeeeee-0000-4000-8000-000000000011"
BIRDS = ("heron", "egret", "ibis", "stork", "crane", "plover")
THINGS = ("nests", "feeds", "roosts", "migrates", "wades", "calls")


def _fill(store: MemoryStore) -> None:
    rng = random.Random(5)
    with atomic(store.conn):
        for i in range(240):
            text = (f"The {rng.choice(BIRDS)} {rng.choice(THINGS)} near the"
                    f" {rng.choice(('river', 'marsh', 'lake', 'estuary'))} at {i % 12} o'clock.")
            store.insert_in_transaction(
                AGENT, text=text, evidence="field notes", kind="stable", scope=Scope.agent(),
                sources=(), actor="t", reason=None, now=utc_now_iso())


def test_every_candidate_holds_the_query_words_its_text_holds(backend: str) -> None:
    store = MemoryStore(open_memory_db())
    _fill(store)
    query = "where does the heron nest by the marsh"
    terms = query_terms(query)
    texts = {int(r[0]): str(r[1]).lower() for r in store.conn.execute(
        "SELECT rowid, text FROM records")}
    seen = store.index.recall_considered(AGENT, query, limit=10)
    assert len(seen.candidates) > 30  # the lexical cut (depth 30) plus what meaning added
    stems = {"heron": "heron", "nest": "nest", "marsh": "marsh"}
    credited = 0
    for candidate in seen.candidates:
        words = set(re.findall(r"\w+", texts[candidate.rowid]))
        holds = {t for t in terms if any(w.startswith(stems[t]) for w in words)}
        assert set(candidate.held) == holds, (texts[candidate.rowid], candidate)
        assert (candidate.coverage > 0) == bool(holds)
        credited += bool(holds) and candidate.lexical == 0.0
    assert credited, "no candidate found by meaning alone held a query word"


def test_the_private_table_for_held_words_is_closed_with_its_index() -> None:
    # Nothing calls a close on the index: the in-memory table it opens for `_terms_held`
    # must go with it, or every recall process leaves an unclosed connection behind.
    import gc
    import sqlite3

    from wardian.memory.recall_index import RecallIndex

    index = RecallIndex(open_memory_db())
    index._terms_held([], ["kiln"])
    side = index._held_db
    assert side is not None
    del index
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        side.execute("SELECT 1")
