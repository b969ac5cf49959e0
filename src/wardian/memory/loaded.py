"""``Memory loaded`` events: what a newly launched process was given, exactly.

The spec's chat shows "a collapsed Memory loaded row" for a provider process that received
memory; expanding it shows the exact context, and no row appears when there was nothing to
load. Here each event keeps the exact context text, the record ids loaded, how many were
left out for the budget, and the process that received it (pid + start time of the
runtime holding the capability). The operator lists them with
``wardian garden memory loaded --agent A``.

Spec: "What appears in chat".
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from wardian._backend import Connection
from wardian._db import atomic
from wardian._util import new_id, utc_now_iso

if TYPE_CHECKING:
    from typing import Any

__all__ = ["LoadedEvent", "LoadedEvents"]


class LoadedEvent(NamedTuple):
    """One ``Memory loaded`` event.

    Attributes:
        id: event id (UUID4).
        agent_id: the agent whose process received the context.
        pid: the runtime's pid; `process_started_at` its start time (seconds since epoch).
        workspace: the launch workspace.
        created_at: when (UTC ISO-8601 ``Z``).
        context: the exact text given to the process.
        record_ids: the full ids of the records loaded, in order.
        omitted_count: records left out for the budget.
        source: what produced it, e.g. ``exec``.
    """

    id: str
    agent_id: str
    pid: int | None
    process_started_at: float | None
    workspace: str | None
    created_at: str
    context: str
    record_ids: tuple[str, ...]
    omitted_count: int
    source: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (``--json`` output)."""
        return {
            "id": self.id,
            "agent_id": self.agent_id,
            "created_at": self.created_at,
            "process": {"pid": self.pid, "started_at": self.process_started_at},
            "workspace": self.workspace,
            "record_ids": list(self.record_ids),
            "omitted_count": self.omitted_count,
            "source": self.source,
            "context": self.context,
        }


class LoadedEvents:
    """SQL over the ``loaded_events`` table of an open ``memory.db`` connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def record_in_transaction(
        self,
        agent_id: str,
        *,
        context: str,
        record_ids: Sequence[str],
        omitted_count: int,
        pid: int | None,
        process_started_at: float | None,
        workspace: str | None,
        source: str,
        now: str,
    ) -> str:
        """Store one event inside the caller's open transaction; returns its id."""
        event_id = new_id()
        self.conn.execute(
            "INSERT INTO loaded_events (id, agent_id, pid, process_started_at, workspace,"
            " created_at, context, record_ids_json, omitted_count, source)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (event_id, agent_id, pid, process_started_at, workspace, now, context,
             json.dumps(list(record_ids)), omitted_count, source),
        )
        return event_id

    def record(self, agent_id: str, **fields: Any) -> str:
        """Store one event (atomic); keyword fields as in `record_in_transaction`."""
        with atomic(self.conn):
            return self.record_in_transaction(agent_id, now=utc_now_iso(), **fields)

    def list(self, agent_id: str, *, limit: int | None = None) -> builtins.list[LoadedEvent]:
        """The agent's events, newest first. Read-only."""
        sql = "SELECT * FROM loaded_events WHERE agent_id = ? ORDER BY created_at DESC, id"
        params: builtins.list[Any] = [agent_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [
            LoadedEvent(
                id=r["id"], agent_id=r["agent_id"], pid=r["pid"],
                process_started_at=r["process_started_at"], workspace=r["workspace"],
                created_at=r["created_at"], context=r["context"],
                record_ids=tuple(json.loads(r["record_ids_json"])),
                omitted_count=int(r["omitted_count"]), source=r["source"],
            )
            for r in self.conn.execute(sql, params)
        ]
