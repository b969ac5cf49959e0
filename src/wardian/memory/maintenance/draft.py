"""Draft plan skeletons for an agent's own records (``wardian memory draft-plan``).

Spec "Operator maintenance in Garden": managed agents may draft a local JSON plan file,
but only the operator can preview, confirm and apply it. A draft is a proposal, not
authority: this module only reads the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wardian._util import new_id, utc_now
from wardian.errors import UsageError
from wardian.memory.maintenance.limits import MAX_OPERATIONS
from wardian.memory.store import MemoryStore

__all__ = ["draft_plan"]


def draft_plan(agent_id: str, memory_ids: Sequence[str], store: MemoryStore) -> dict[str, Any]:
    """A schema-v1 plan skeleton for `agent_id` naming `memory_ids`. Read-only.

    Each named record becomes a ``revise`` operation pre-filled with its current text, kind,
    scope and evidence and its current revision as ``expected_revision_id``; the agent edits
    it (or turns it into ``retire``/``retire_into``) before handing it to the operator.

    Args:
        agent_id: the calling agent's id (the plan's ``agent_id``); only its records resolve.
        memory_ids: full ids or unique prefixes of the agent's records (at most 100).
        store: the memory store (only read).

    Returns:
        The plan document (JSON-ready dict) with a fresh ``plan_id`` and ``idempotency_key``.

    Raises:
        NotFoundError / AmbiguousIdError: an id is not one of the agent's records.
        UsageError: more than 100 ids, the same record twice, or a removed record.
    """
    if len(memory_ids) > MAX_OPERATIONS:
        raise UsageError(
            f"{len(memory_ids)} memory ids given; a plan holds at most {MAX_OPERATIONS} "
            "operations", hint="split the ids over several plans",
        )
    operations: list[dict[str, Any]] = []
    seen: set[str] = set()
    for given in memory_ids:
        record = store.get(given, agent_id=agent_id)
        if record.id in seen:
            raise UsageError(f"memory {record.short_id} is named twice", hint="name it once")
        seen.add(record.id)
        if record.status != "active":
            raise UsageError(
                f"memory {record.short_id} is removed; a plan cannot revise or retire it",
                hint="leave it out of the plan",
            )
        operations.append({
            "op": "revise",
            "memory_id": record.id,
            "expected_revision_id": record.current_revision_id,
            "text": record.text,
            "kind": record.kind,
            "scope": record.scope.to_json(),
            "evidence_excerpt": record.evidence,
            "add_sources": [],
        })
    stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
    return {
        "schema_version": 1,
        "plan_id": f"draft-{agent_id[:8]}-{stamp}",
        "agent_id": agent_id,
        "idempotency_key": f"draft-{new_id()}",
        "operations": operations,
    }
