"""The JSON Schema of the blueprint format, for editors (YAML language server) and checks.

The repo ships the output at ``schemas/blueprint.schema.json``; a test keeps the two in sync.
Put ``# yaml-language-server: $schema=<path or URL>/blueprint.schema.json`` at the top of a
blueprint to get completion and checking offline.

Spec: docs/blueprint-guide.md (JSON Schema export).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["SCHEMA_ID", "blueprint_json_schema", "blueprint_json_schema_text"]

SCHEMA_ID = "https://wardian.dev/schemas/blueprint.schema.json"


def blueprint_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a blueprint file, generated from `schema.Blueprint`."""
    from wardian.blueprints.schema import Blueprint

    generated = Blueprint.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Wardian blueprint",
        "description": (
            "A Wardian automation blueprint: metadata, roles, typed inputs, accepted "
            "triggers and ordered steps (action steps or role steps). "
            "See docs/blueprint-guide.md."
        ),
        **{k: v for k, v in generated.items() if k not in ("title", "description")},
    }


def blueprint_json_schema_text() -> str:
    """`blueprint_json_schema` as the exact text shipped in ``schemas/blueprint.schema.json``."""
    return json.dumps(blueprint_json_schema(), indent=2, sort_keys=True) + "\n"
