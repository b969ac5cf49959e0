"""Structured results of the MCP memory tools (their published ``outputSchema``).

The field names are those of the CLI's ``--json`` documents (`Record.to_json`,
`Revision.to_json`), so an agent reads the same shapes whichever surface it uses.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "ChangeResult",
    "DraftPlanResult",
    "HistoryResult",
    "ListResult",
    "RecallResult",
    "RecordOut",
    "RevisionOut",
]


class ScopeOut(BaseModel):
    """``{"kind": "agent"}`` or ``{"kind": "workspace", "path": ABS}``."""

    kind: Literal["agent", "workspace"]
    path: str | None = None


class SourceOut(BaseModel):
    """A source link kept for deeper inspection."""

    source_type: str
    locator: str
    primary: bool = False


class RecordOut(BaseModel):
    """One memory record's current state."""

    id: str = Field(description="The record id (UUID4); any unique prefix is accepted back.")
    agent_id: str
    kind: Literal["stable", "current"]
    scope: ScopeOut
    text: str
    evidence: str
    sources: list[SourceOut]
    status: Literal["active", "removed"]
    removed_reason: str | None = None
    created_at: str
    updated_at: str
    current_revision_id: str = Field(description="The revision this state was written as.")


class ChangeResult(BaseModel):
    """What a save, update or remove did: the spec's chat row and the changed record."""

    row: str = Field(description='The chat row, e.g. "Memory saved · This agent".')
    id: str
    revision_id: str = Field(description="The revision the change wrote.")
    record: RecordOut


class RecallResult(BaseModel):
    """Recalled records: the startup set (no query) or ranked matches."""

    query: str | None
    workspace: str
    read_only: bool = Field(
        description="True when this process holds no memory capability: recall only."
    )
    note: str | None = None
    budget_chars: int | None = None
    omitted: int | None = Field(
        default=None, description="Startup set only: records left out for the budget."
    )
    lines: list[str] = Field(description="Each record as the startup context shows it.")
    records: list[RecordOut]


class ListResult(BaseModel):
    """The agent's records, newest first."""

    count: int
    records: list[RecordOut]


class RevisionOut(BaseModel):
    """One immutable revision (a full snapshot of the record at that time)."""

    revision_id: str
    record_id: str
    seq: int
    snapshot: dict[str, Any]
    actor: str
    reason: str | None = None
    created_at: str


class HistoryResult(BaseModel):
    """Every revision of one record, oldest first."""

    record_id: str
    current_revision_id: str
    revisions: list[RevisionOut]


class DraftPlanResult(BaseModel):
    """A maintenance plan skeleton (schema v1); nothing was written to memory."""

    operation_count: int
    note: str
    plan: dict[str, Any]
