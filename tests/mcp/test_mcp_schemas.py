"""The MCP tools' published output schemas are flat and true to the models (issue 16).

`wardian.mcp_server.schemas` publishes each result's JSON Schema with nested models
inlined and nullable fields as type lists, and a listed record (recall, list) with every
field required but only the fields a caller acts on typed, so a host that validates
every result (the Python SDK's client does, with ``jsonschema``) does less work per call.
These tests pin that the schema never refuses what the server sends, refuses wrong types
and missing keys where it states them, and that the server's own check (the pydantic
model, run before every answer) refuses the rest.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

import anyio
import pytest
from jsonschema.validators import validator_for
from pydantic import BaseModel, ValidationError

from wardian.mcp_server import schemas
from wardian.mcp_server.server import TOOL_NAMES, build_server

RECORD: dict[str, Any] = {
    "id": "9f1c2b3a-0000-4000-8000-000000000001", "agent_id": "a" * 36, "kind": "stable",
    "scope": {"kind": "workspace", "path": "/src/app"}, "text": "Deploys need a tag",
    "evidence": "the user: tag every deploy", "status": "active",
    "sources": [{"source_type": "file", "locator": "NOTES.md#L3", "primary": True}],
    "removed_reason": None, "created_at": "2026-01-02T03:04:05Z",
    "updated_at": "2026-01-02T03:04:05Z",
    "current_revision_id": "9f1c2b3a-0000-4000-8000-0000000000aa",
}
RECALL: dict[str, Any] = {
    "query": "deploy tag", "workspace": "/src/app", "read_only": False, "note": None,
    "budget_chars": None, "omitted": None, "lines": ["- [9f1c2b3a] Deploys need a tag"],
    "records": [RECORD, {**RECORD, "scope": {"kind": "agent"}, "sources": []}],
}


def _published() -> dict[str, dict[str, Any]]:
    server, close = build_server()
    try:
        tools = anyio.run(server.list_tools)
    finally:
        close()
    return {t.name: t.output_schema for t in tools if t.output_schema is not None}


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [d for item in node for d in _walk(item)]
    if not isinstance(node, dict):
        return []
    return [node] + [d for value in node.values() for d in _walk(value)]


def test_every_tool_publishes_a_flat_output_schema() -> None:
    published = _published()
    assert set(published) == set(TOOL_NAMES)
    for name, schema in published.items():
        text = json.dumps(schema)
        assert "$ref" not in text and "$defs" not in text, name
        for node in _walk(schema):
            branches = node.get("anyOf", [])
            assert not (branches and all(set(b) == {"type"} for b in branches)), (name, node)
        validator_for(schema).check_schema(schema)
    recall = published["memory_recall"]
    record = recall["properties"]["records"]["items"]
    assert record["properties"]["kind"] == {"enum": ["stable", "current"], "type": "string"}
    assert recall["properties"]["query"]["type"] == ["string", "null"]
    assert record["properties"]["scope"]["required"] == ["kind"]


def _broken(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(RECALL)
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    if value is _MISSING:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


_MISSING = object()
SCHEMA_REFUSES = [  # a wrong type or a missing key the published schema catches itself
    (("query",), 7), (("read_only",), "no"), (("lines", 0), None), (("omitted",), "many"),
    (("records", 0, "kind"), "forever"), (("records", 0, "scope", "kind"), "galaxy"),
    (("records", 1, "text"), None), (("records", 0, "id"), 12),
    (("records", 0, "current_revision_id"), ["r"]), (("workspace",), _MISSING),
    (("records",), _MISSING), (("records", 0, "current_revision_id"), _MISSING),
    (("records", 1, "evidence"), _MISSING), (("records", 0, "sources"), _MISSING),
]
MODEL_REFUSES = [  # a listed record's untyped field: refused by the server before it answers
    (("records", 0, "sources", 0, "locator"), 3), (("records", 0, "removed_reason"), 5),
    (("records", 0, "status"), "lost"), (("records", 1, "evidence"), None),
]


def _accepts(doc: dict[str, Any]) -> tuple[bool, bool]:
    """(the published recall schema accepts `doc`, the server's model accepts it)."""
    schema = _published()["memory_recall"]
    flat_ok = not list(validator_for(schema)(schema).iter_errors(doc))
    try:
        schemas.RecallResult.model_validate(doc, strict=True)
        model_ok = True
    except ValidationError:
        model_ok = False
    return flat_ok, model_ok


def test_a_good_result_passes_both() -> None:
    assert _accepts(RECALL) == (True, True)


@pytest.mark.parametrize(("path", "value"), SCHEMA_REFUSES)
def test_the_schema_refuses_wrong_types_and_missing_keys(path: tuple[Any, ...],
                                                         value: Any) -> None:
    assert _accepts(_broken(path, value)) == (False, False)


@pytest.mark.parametrize(("path", "value"), MODEL_REFUSES)
def test_the_server_refuses_what_the_schema_leaves_untyped(path: tuple[Any, ...],
                                                           value: Any) -> None:
    assert _accepts(_broken(path, value))[1] is False


def test_listed_records_require_every_field_and_type_the_ones_acted_on() -> None:
    published = _published()
    full = published["memory_show"]
    fields = set(schemas.RecordOut.model_fields)
    assert set(full["properties"]) == fields  # one record: every field typed
    for tool in ("memory_recall", "memory_list"):
        item = published[tool]["properties"]["records"]["items"]
        assert set(item["properties"]) == set(schemas.ITEM_TYPED), tool
        assert set(item["required"]) == {
            name for name, f in schemas.RecordOut.model_fields.items() if f.is_required()}
        for name in schemas.ITEM_TYPED:
            assert item["properties"][name] == full["properties"][name]


class _Leaf(BaseModel):
    size: int | None = None
    tag: str


class _Tree(BaseModel):
    name: str
    leaves: list[_Leaf]
    best: _Leaf | None = None
    mode: Literal["a", "b"]


_TREE_DOCS: list[Any] = [
    {"name": "t", "leaves": [], "mode": "a"},
    {"name": "t", "leaves": [{"tag": "x", "size": None}], "best": {"tag": "y"}, "mode": "b"},
    {"name": "t", "leaves": [{"size": 3}], "mode": "a"},
    {"name": "t", "leaves": [{"tag": "x", "size": "3"}], "mode": "a"},
    {"name": "t", "leaves": [], "best": {"tag": 1}, "mode": "a"},
    {"name": "t", "leaves": [], "mode": "c"},
    {"leaves": [], "mode": "a"},
    {"name": None, "leaves": {}, "mode": "a"},
]


@pytest.mark.parametrize("doc", _TREE_DOCS)
def test_flat_schema_validates_what_the_nested_schema_validates(doc: Any) -> None:
    """On made-up nested models (a list of models, an optional model, nullable scalars,
    an enum), the flat schema and pydantic's nested one agree on every document."""
    nested = _Tree.model_json_schema()
    defs = nested["$defs"]
    flat = schemas.flat_schema(nested, lambda ref: defs[ref["$ref"].rsplit("/", 1)[1]])
    assert "$ref" not in json.dumps(flat) and "$defs" not in flat

    def ok(schema: dict[str, Any]) -> bool:
        return not list(validator_for(schema)(schema).iter_errors(doc))

    assert ok(flat) == ok(nested)
