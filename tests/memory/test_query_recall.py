"""Query recall (`RecallIndex.recall`): BM25 then recency, scoped, bounded for common words."""

from __future__ import annotations

import pytest

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.recall_index import RECALL_EXACT_POSTINGS
from wardian.memory.store import MemoryStore

AGENT = "cccccccc-0000-4000-8000-000000000003"


@pytest.fixture
def store(backend: str) -> MemoryStore:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    return MemoryStore(open_memory_db())


def _save(store: MemoryStore, text: str, *, agent: str = AGENT,
          scope: Scope | None = None) -> str:
    return store.save(agent, text, evidence="e", scope=scope or Scope.agent(), actor="t").id


def test_bm25_then_recency_scope_and_owner(store: MemoryStore) -> None:
    once = _save(store, "the parser handles tokens")
    twice = _save(store, "parser parser: rewrite the parser")
    older_tie = _save(store, "deploy with make")
    newer_tie = _save(store, "deploy with make")
    _save(store, "parser of another agent", agent="someone-else")
    elsewhere = _save(store, "parser notes", scope=Scope.workspace("/other"))
    removed = _save(store, "parser removed")
    store.remove(AGENT, removed, actor="t")
    found = [r.id for r in store.index.recall(AGENT, "parser", workspace="/ws")]
    assert found[:2] == [twice, once] and elsewhere not in found and removed not in found
    assert elsewhere in [r.id for r in store.index.recall(AGENT, "parser")]
    assert [r.id for r in store.index.recall(AGENT, "deploy")] == [newer_tie, older_tie]
    assert store.index.recall(AGENT, "   ") == [] and store.index.recall(AGENT, 'NEAR(" OR *') == []
    assert len(store.index.recall(AGENT, "parser deploy", limit=1)) == 1


def _fill(store: MemoryStore, count: int, text: str) -> None:
    """`count` records of `text` + a number, in one transaction (fast to build)."""
    from wardian._db import atomic
    from wardian._util import utc_now_iso

    with atomic(store.conn):
        for i in range(count):
            store.insert_in_transaction(
                AGENT, text=f"{text} {i}", evidence="filler", kind="stable",
                scope=Scope.agent(), sources=(), actor="t", reason=None, now=utc_now_iso())


@pytest.mark.pg_slow
def test_reported_case_every_word_common_still_finds_the_record(store: MemoryStore) -> None:
    # Issue 19: at 100k records each of these words was "too common" and the query's one
    # word that matched nothing was ranked alone, so recall returned [].
    target = _save(store, "Cache payments responses in heron with memcached for 15 seconds")
    # Each word is in more records than the old cut-off (500), each in a minority.
    _fill(store, 700, "payments ledger settings")
    _fill(store, 700, "heron rollout calendar")
    _fill(store, 700, "memcached eviction graphs")
    _fill(store, 3000, "unrelated filler for invoices")
    found = store.index.recall(AGENT, "memcached ttl for payments heron", limit=5)
    assert found and found[0].id == target


def test_a_word_nothing_contains_does_not_hide_the_words_that_match(
    store: MemoryStore,
) -> None:
    target = _save(store, "Deploy the lighthouse service with blue green switching")
    _save(store, "Lighthouse dashboards live in grafana")
    found = store.index.recall(AGENT, "lighthouse deploy zqxjv", limit=5)
    assert found[0].id == target


def test_no_word_matches_gives_nothing(store: MemoryStore) -> None:
    _save(store, "Deploy the lighthouse service with blue green switching")
    assert store.index.recall(AGENT, "zqxjv wubble") == []


def test_a_question_about_something_never_stored_gives_nothing(store: MemoryStore) -> None:
    for text in ("Use pnpm for the web app, not npm", "The staging database is postgres 16",
                 "Release notes are written in docs/releases", "Run the linter before pushing"):
        _save(store, text)
    assert store.index.recall(AGENT, "what is the name of the office cat?") == []
    assert store.index.recall(AGENT, "how do we do it here?") == []  # only stop words
    # One shared, ordinary word is not enough to answer a different question.
    assert store.index.recall(AGENT, "which release of kubernetes runs the cluster") == []


def test_limit_still_caps(store: MemoryStore) -> None:
    for i in range(8):
        _save(store, f"orchard sensor calibration step {i}")
    assert len(store.index.recall(AGENT, "orchard sensor calibration", limit=3)) == 3
    assert len(store.index.recall(AGENT, "orchard sensor calibration")) == 8


@pytest.mark.pg_slow
def test_every_word_very_common_ranks_the_newest(store: MemoryStore) -> None:
    _fill(store, RECALL_EXACT_POSTINGS + 10, "common words number")
    only_common = store.index.recall(AGENT, "common", limit=5)
    assert len(only_common) == 5
    assert all("common words number" in r.text for r in only_common)


@pytest.fixture
def scaled(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> MemoryStore:
    """A store whose exact-postings budget is shrunk to 40, so a few hundred records have
    the word statistics of 100k (every topic word "common": past `RECALL_EXACT_POSTINGS`,
    yet each in a minority of records)."""
    import wardian.memory.recall_index as index_module

    monkeypatch.setattr(index_module, "RECALL_EXACT_POSTINGS", 40)
    _fill(store, 60, "kiln firing notes")
    _fill(store, 60, "glaze recipe shelf")
    _fill(store, 60, "clay supplier invoice")
    _fill(store, 60, "kiln glaze clay mixed batch")  # every word in > 40 records
    _fill(store, 600, "lorem ipsum dolor")  # ... yet each in a minority, as at 100k
    return store


@pytest.mark.pg_slow
@pytest.mark.parametrize("query", [
    "kiln glaze supplier",                             # each word common, the three rare
    "what kiln temperature for the glaze supplier",    # + stop words + a word nowhere
    "Kiln GLAZE supplier zqxjv wubble",                # + two words nowhere, any case
])
def test_all_words_common_only_their_combination_rare_finds_the_record(
    scaled: MemoryStore, query: str,
) -> None:
    target = _save(scaled, "The kiln glaze comes from the supplier in Leeds")
    found = scaled.index.recall(AGENT, query, limit=5)
    assert found and found[0].id == target


@pytest.mark.pg_slow
def test_all_words_common_without_a_record_holding_them_all_stays_on_topic(
    scaled: MemoryStore,
) -> None:
    found = scaled.index.recall(AGENT, "firing recipe invoice", limit=5)
    assert len(found) <= 5
    assert all({"firing", "recipe", "invoice"} & set(r.text.split()) for r in found)


@pytest.mark.pg_slow
@pytest.mark.parametrize("query", ["zqxjv wubble", "zqxjv", "what is the wubble of it",
                                   "how do we do it here", "?! -- *"])
def test_no_word_matches_or_only_stop_words_gives_nothing_at_scale(
    scaled: MemoryStore, query: str,
) -> None:
    assert scaled.index.recall(AGENT, query) == []


@pytest.mark.pg_slow
def test_one_common_word_beside_a_rare_one_ranks_the_rare_match_first(
    scaled: MemoryStore,
) -> None:
    target = _save(scaled, "The raku kiln is outside by the shed")
    found = scaled.index.recall(AGENT, "raku kiln", limit=5)
    assert found and found[0].id == target
