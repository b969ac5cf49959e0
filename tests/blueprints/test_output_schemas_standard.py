"""Output schemas are sent to providers as JSON Schema, so they hold only JSON Schema: no
OpenAPI ``discriminator`` (pydantic writes one beside a tagged union's ``oneOf``; Claude
Code's strict ``--json-schema`` refused the whole curator schema for it). Removing it
changes no verdict: the union's ``const`` tags tell the members apart."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from wardian.blueprints.output_schemas import (
    get_output_schema,
    known_output_schemas,
    standard_json_schema,
)
from wardian.memory.batch import CURATOR_BATCH_REF, CuratorBatch


def _keys(value: Any, *, in_properties: bool = False) -> set[str]:
    if isinstance(value, dict):
        own = set() if in_properties else set(value)
        return own.union(*(_keys(v, in_properties=k == "properties" and not in_properties)
                           for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


def test_no_registered_schema_carries_openapi_keywords() -> None:
    for name in known_output_schemas():
        schema = get_output_schema(name).schema()
        assert "discriminator" not in _keys(schema), name
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_the_curator_schema_judges_as_the_pydantic_one_does() -> None:
    raw = CuratorBatch.model_json_schema()
    assert "discriminator" in _keys(raw)  # what pydantic writes (else this test proves nothing)
    sent = get_output_schema(CURATOR_BATCH_REF).schema()
    cases: list[tuple[dict[str, Any], bool]] = [
        ({"operations": []}, True),
        ({"operations": [{"op": "save", "text": "Use uv", "evidence": "use uv"}]}, True),
        ({"operations": [{"op": "remove", "memory_id": "abcd1234", "evidence": "done",
                          "reason": "finished"}]}, True),
        ({"operations": [{"op": "remove", "memory_id": "abcd1234", "evidence": "done"}]},
         False),
        ({"operations": [{"op": "merge", "text": "x", "evidence": "y"}]}, False),
        ({"operations": [{"op": "save", "text": "x"}]}, False),
    ]
    for doc, valid in cases:
        for schema in (raw, sent):
            errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc))
            assert (not errors) == valid, (doc, schema is sent, errors[:1])


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"discriminator": {"type": "string"}}},
    {"type": "object", "properties": {"p": {"type": "object", "properties": {
        "discriminator": {"const": 1}}}}},
])
def test_a_property_named_discriminator_is_kept(schema: dict[str, Any]) -> None:
    assert standard_json_schema(schema) == schema


def test_nested_openapi_discriminators_are_removed() -> None:
    schema = {"$defs": {"U": {"oneOf": [{"$ref": "#/$defs/A"}],
                              "discriminator": {"propertyName": "kind",
                                                "mapping": {"a": "#/$defs/A"}}}},
              "items": [{"discriminator": {"propertyName": "t"}, "type": "object"}]}
    assert standard_json_schema(schema) == {"$defs": {"U": {"oneOf": [{"$ref": "#/$defs/A"}]}},
                                            "items": [{"type": "object"}]}
