"""Vector backfill: give records saved without a vector their vector.

A record saved while the embedding model (the ``wordllama`` dependency) was missing or
unreadable, or under an older model, has no current vector, so semantic recall
cannot find it by meaning (it is still found by its words). `reindex_vectors` computes
the missing vectors from each record's current text; ``wardian garden memory reindex``
runs it and ``wardian doctor`` (check ``recall``) names it as the fix.

Spec: DESIGN.md "Storage" → Recall (vector backfill).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wardian.memory.db import MemoryDB

__all__ = ["ReindexResult", "reindex_vectors"]


@dataclass(frozen=True)
class ReindexResult:
    """What a backfill did.

    Attributes:
        semantic: whether the embedding model is installed (False: nothing to do).
        model: the model's name (``wordllama/l2_supercat_256``) or None.
        filled: records that got a vector.
        missing: active records still without one afterwards (normally 0).
    """

    semantic: bool
    model: str | None
    filled: int
    missing: int

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON document (the fields above)."""
        return asdict(self)


def reindex_vectors(memory: MemoryDB, *, batch: int = 500) -> ReindexResult:
    """Backfill the vectors of every agent's active records in `memory`
    (`RecallIndex.backfill_vectors`). Idempotent; safe beside running
    agents (short transactions of `batch` records).
    """
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    if not store.index.semantic_enabled():
        return ReindexResult(False, None, 0, 0)
    from wardian.memory.embedding import MODEL

    filled = store.index.backfill_vectors(batch=batch)
    return ReindexResult(True, MODEL, filled, store.index.missing_vectors())
