"""The shipped JSON Schema matches the model, and accepts a valid blueprint's YAML."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.blueprints.jsonschema_export import blueprint_json_schema, blueprint_json_schema_text

REPO = Path(__file__).resolve().parents[2]


def test_shipped_schema_is_in_sync() -> None:
    shipped = (REPO / "schemas" / "blueprint.schema.json").read_text("utf-8")
    assert shipped == blueprint_json_schema_text(), (
        "regenerate with: wardian blueprint schema > schemas/blueprint.schema.json")


def test_schema_is_valid_and_checks_blueprints() -> None:
    schema = blueprint_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    base = yaml.safe_load((Path(__file__).parent / "corpus/valid/base.yaml").read_text())
    jsonschema.validate(base, schema)
    base["steps"][0]["retires"] = 3
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(base))
    assert errors


def test_cli_schema_prints_it(cli: CliRunner) -> None:
    result = invoke(cli, "blueprint", "schema")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["title"] == "Wardian blueprint"
