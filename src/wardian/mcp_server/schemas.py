"""Structured results of the MCP memory tools (their published ``outputSchema``).

The field names are those of the CLI's ``--json`` documents (`Record.to_json`,
`Revision.to_json`), so an agent reads the same shapes whichever surface it uses.

Each result's schema is published flat (`flat_schema`): nested models inlined instead of
``$ref``/``$defs``, nullable fields as ``"type": [T, "null"]`` instead of ``anyOf``, no
generated titles. It states the same keys, types, enums and requirements; a host that
validates every result against it (the Python SDK's client does, with ``jsonschema``)
does about half the work per result (bench/mcp_bench.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = [
    "ChangeResult",
    "DraftPlanResult",
    "HistoryResult",
    "ListResult",
    "RecallResult",
    "RecordItem",
    "RecordOut",
    "RevisionOut",
    "flat_schema",
]


_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "contains")


def flat_schema(schema: JsonSchemaValue,
                resolve: Callable[[JsonSchemaValue], JsonSchemaValue]) -> JsonSchemaValue:
    """`schema` (a JSON Schema object) with every ``$ref`` replaced by what `resolve`
    returns for it, ``anyOf`` of bare types merged into one ``"type"`` list, and
    ``title``/``$defs`` dropped; every other keyword is kept as it is. Validates exactly
    the same documents (the models have no recursive types, so inlining ends)."""
    if "$ref" in schema:
        target = resolve({"$ref": schema["$ref"]})
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "$defs"):
            continue
        if key == "properties":
            value = {name: flat_schema(sub, resolve) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS:
            value = [flat_schema(sub, resolve) for sub in value]
        elif key in _SUBSCHEMAS and isinstance(value, dict):
            value = flat_schema(value, resolve)
        out[key] = value
    branches = out.get("anyOf")
    if branches and all(set(b) == {"type"} and isinstance(b["type"], str) for b in branches):
        del out["anyOf"]
        out["type"] = [b["type"] for b in branches]
    return out


class _Result(BaseModel):
    """A model whose JSON Schema is generated flat (`flat_schema`)."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler.resolve_ref_schema(handler(core_schema))
        return flat_schema(schema, handler.resolve_ref_schema)

class ScopeOut(_Result):
    """``{"kind": "agent"}`` or ``{"kind": "workspace", "path": ABS}``."""

    kind: Literal["agent", "workspace"]
    path: str | None = None


class SourceOut(_Result):
    """A source link kept for deeper inspection."""

    source_type: str
    locator: str
    primary: bool = False


class RecordOut(_Result):
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


class RecordItem(RecordOut):
    """A record in a list (recall, list): the fields of `RecordOut`, all of them present.

    Its published schema requires every field but gives the type of only those a caller
    acts on (`ITEM_TYPED`): a host that validates every result against the schema pays
    per record and typed field (the Python SDK's client, with ``jsonschema``), so
    typing all twelve fields would multiply the host's CPU per recall and list result. The server
    itself validates every field against this
    model before it answers; ``memory_show`` publishes the fully typed record.
    """

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler.resolve_ref_schema(handler(core_schema))
        flat = flat_schema(schema, handler.resolve_ref_schema)
        flat["properties"] = {k: v for k, v in flat["properties"].items() if k in ITEM_TYPED}
        flat["description"] = (
            "One record, with every field of memory_show's record (all required); the "
            "types of " + ", ".join(ITEM_TYPED) + " are given here.")
        return flat


ITEM_TYPED = ("id", "current_revision_id", "kind", "scope", "text")
"""The fields of a listed record whose types the published schema states."""


class ChangeResult(_Result):
    """What a save, update or remove did: the spec's chat row and the changed record."""

    row: str = Field(description='The chat row, e.g. "Memory saved · This agent".')
    id: str
    revision_id: str = Field(description="The revision the change wrote.")
    record: RecordOut


class RecallResult(_Result):
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
    records: list[RecordItem]
    nearest: list[RecordItem] | None = Field(
        default=None, description="A query only (absent for the startup set): when "
        "nothing matches, the records that came nearest below the relevance floor. They "
        "may not answer the query and are never matches; empty when something matches. "
        "lines shows the matches only.")


class ListResult(_Result):
    """The agent's records, newest first."""

    count: int
    records: list[RecordItem]
    read_only: bool = Field(
        description="True when this process holds no memory capability: reads only."
    )
    note: str | None = None


class RevisionOut(_Result):
    """One immutable revision (a full snapshot of the record at that time)."""

    revision_id: str
    record_id: str
    seq: int
    snapshot: dict[str, Any]
    actor: str
    reason: str | None = None
    created_at: str


class HistoryResult(_Result):
    """Every revision of one record, oldest first."""

    record_id: str
    current_revision_id: str
    revisions: list[RevisionOut]
    read_only: bool = Field(
        description="True when this process holds no memory capability: reads only."
    )
    note: str | None = None


class DraftPlanResult(_Result):
    """A maintenance plan skeleton (schema v1); nothing was written to memory."""

    operation_count: int
    note: str
    plan: dict[str, Any]
