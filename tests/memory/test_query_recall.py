"""Query recall (`MemoryStore.recall`): BM25 then recency, scoped, bounded for common words."""

from __future__ import annotations

from pathlib import Path

import pytest

from wardian.memory.models import Scope
from wardian.memory.store import RECALL_COMMON_DOCS, RECALL_WINDOW, MemoryStore

AGENT = "cccccccc-0000-4000-8000-000000000003"


@pytest.fixture
def store(wardian_home: Path) -> MemoryStore:
    return MemoryStore()


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
    found = [r.id for r in store.recall(AGENT, "parser", workspace="/ws")]
    assert found[:2] == [twice, once] and elsewhere not in found and removed not in found
    assert elsewhere in [r.id for r in store.recall(AGENT, "parser")]
    assert [r.id for r in store.recall(AGENT, "deploy")] == [newer_tie, older_tie]
    assert store.recall(AGENT, "   ") == [] and store.recall(AGENT, 'NEAR(" OR *') == []
    assert len(store.recall(AGENT, "parser deploy", limit=1)) == 1


def test_common_words_do_not_drown_rare_ones(store: MemoryStore) -> None:
    with_rare = _save(store, "common words and a zebra")  # oldest: outside any window
    for i in range(RECALL_COMMON_DOCS + 10):
        _save(store, f"common words number {i}")
    found = store.recall(AGENT, "common zebra", limit=3)
    assert [r.id for r in found] == [with_rare]
    # Every word common: the newest RECALL_WINDOW matches are ranked, never all of them.
    only_common = store.recall(AGENT, "common words", limit=5)
    assert len(only_common) == 5
    assert all("common words number" in r.text for r in only_common)
    assert RECALL_WINDOW >= 5
