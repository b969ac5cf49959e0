"""The MCP tools' published output schemas are flat and say what the models say (issue 16).

`wardian.mcp_server.schemas` publishes each result's JSON Schema with nested models
inlined and nullable fields as type lists, so a host that validates every result (the
Python SDK's client does, with ``jsonschema``) does less work per call. These tests pin
that the flat schema is still the whole contract: the same keys required, the same
types and enums, accepting and refusing exactly what the pydantic models do.
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
    assert set(record["required"]) >= {"id", "current_revision_id", "text", "kind", "scope"}
    assert record["properties"]["kind"] == {"enum": ["stable", "current"], "type": "string"}
    assert recall["properties"]["query"]["type"] == ["string", "null"]
    assert record["properties"]["scope"]["required"] == ["kind"]


def _bad_documents() -> list[dict[str, Any]]:
    """Recall results each wrong in one way."""
    docs = []
    for path, value in [
        (("query",), 7), (("read_only",), "no"), (("lines", 0), None),
        (("records", 0, "kind"), "forever"), (("records", 0, "scope", "kind"), "galaxy"),
        (("records", 0, "sources", 0, "locator"), 3), (("records", 1, "text"), None),
        (("omitted",), "many"), (("records", 0, "removed_reason"), 5),
    ]:
        doc = copy.deepcopy(RECALL)
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        docs.append(doc)
    for key in ("workspace", "records"):
        doc = copy.deepcopy(RECALL)
        del doc[key]
        docs.append(doc)
    doc = copy.deepcopy(RECALL)
    del doc["records"][0]["current_revision_id"]
    docs.append(doc)
    return docs


@pytest.mark.parametrize("doc", [RECALL, *_bad_documents()])
def test_the_flat_schema_accepts_exactly_what_the_model_accepts(doc: dict[str, Any]) -> None:
    schema = _published()["memory_recall"]
    flat_ok = not list(validator_for(schema)(schema).iter_errors(doc))
    try:
        schemas.RecallResult.model_validate(doc, strict=True)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert flat_ok == model_ok, doc


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
