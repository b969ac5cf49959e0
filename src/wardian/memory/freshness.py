"""Stale ``current`` checkpoints: which are due for review, and a retire plan for them.

A ``current`` record is an active checkpoint carried to the next session; one that has not
been updated for ``memory.current_review_days`` (default 14) days is *stale*: the startup
context marks it, ``wardian garden memory stale --agent A`` lists it, and ``--draft-plan``
writes a schema-v1 maintenance plan retiring the stale ones, for the operator to preview
and apply like any plan (nothing here writes to memory).

Spec: "Operator maintenance in Garden" (freshness).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from wardian._util import format_utc, new_id, utc_now
from wardian.memory.maintenance.limits import MAX_OPERATIONS
from wardian.memory.models import Record
from wardian.memory.recall import age_days
from wardian.memory.store import MemoryStore

__all__ = ["StaleRecord", "retire_plan", "stale_records"]


@dataclass(frozen=True)
class StaleRecord:
    """An active ``current`` record older than the review age, with its age in days."""

    record: Record
    age_days: int

    def to_json(self) -> dict[str, Any]:
        """The record's JSON plus ``age_days``."""
        return {**self.record.to_json(), "age_days": self.age_days}


def stale_records(
    store: MemoryStore, agent_id: str, *, review_days: int, now: datetime | None = None
) -> list[StaleRecord]:
    """The agent's active ``current`` records last saved `review_days` or more days ago,
    oldest first. Read-only.

    Args:
        review_days: setting ``memory.current_review_days`` (>= 1).
        now: the reference time (default: now, UTC).
    """
    moment = now or utc_now()
    cutoff = format_utc(moment - timedelta(days=review_days))
    out = []
    for record_id in store.current_saved_before(agent_id, cutoff):
        record = store.get(record_id)
        out.append(StaleRecord(record, age_days(record.updated_at, moment)))
    return out


def retire_plan(
    agent_id: str, stale: list[StaleRecord], *, review_days: int, now: datetime | None = None
) -> dict[str, Any]:
    """A schema-v1 plan retiring the first 100 of `stale` (each bound to its current
    revision), for ``wardian garden maintain preview|apply``. Pure.

    Raises:
        ValueError: `stale` is empty (a plan needs at least one operation).
    """
    if not stale:
        raise ValueError("no stale records to retire")
    stamp = (now or utc_now()).strftime("%Y%m%dT%H%M%SZ")
    return {
        "schema_version": 1,
        "plan_id": f"stale-{agent_id[:8]}-{stamp}",
        "agent_id": agent_id,
        "idempotency_key": f"stale-{new_id()}",
        "operations": [
            {
                "op": "retire",
                "memory_id": item.record.id,
                "expected_revision_id": item.record.current_revision_id,
                "reason": f"stale current checkpoint: saved {item.age_days} days ago, not "
                          f"updated since (memory.current_review_days = {review_days})",
            }
            for item in stale[:MAX_OPERATIONS]
        ],
    }
