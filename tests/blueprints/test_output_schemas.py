"""The output schema registry: ``output: {$ref: NAME}`` resolves what a part registered
(memory's ``wardian:curator-batch`` comes through the built-in plugin, a third party's
through its ``wardian.plugins`` entry point); an unknown name is a problem at the ``$ref``
that lists the known names."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from wardian.blueprints.library import shipped_library_dir
from wardian.blueprints.output_schemas import (
    get_output_schema,
    known_output_schemas,
    plugin_errors,
    register_output_schema,
    standard_json_schema,
    unregister_output_schema,
)
from wardian.blueprints.validate import validate_file
from wardian.engine.actions import known_actions
from wardian.errors import UsageError, ValidationError

VERDICT = {"type": "object", "required": ["verdict"], "additionalProperties": False,
           "properties": {"verdict": {"enum": ["keep", "drop"]}}}

BLUEPRINT = """\
blueprint: {id: triage, name: Triage, version: 1}
roles: {judge: decides}
steps:
  - id: decide
    role: judge
    prompt: "keep or drop?"
    output: {$ref: "%s"}
"""


def _strict_verdict(value: Any) -> None:
    if not isinstance(value, dict) or value.get("verdict") not in ("keep", "drop"):
        raise ValidationError("verdict must be keep or drop", path="$['verdict']")


@pytest.fixture
def triage_schema() -> Iterator[str]:
    name = "triage:verdict"
    register_output_schema(name, schema=VERDICT, description="a keep/drop verdict",
                           check=_strict_verdict)
    yield name
    unregister_output_schema(name)


def _write(tmp_path: Path, ref: str) -> Path:
    path = tmp_path / "triage.yaml"
    path.write_text(BLUEPRINT % ref, encoding="utf-8")
    return path


def test_a_registered_schema_validates_a_blueprint(tmp_path: Path, triage_schema: str) -> None:
    report = validate_file(_write(tmp_path, triage_schema), known_actions=known_actions())
    assert report.problems == []
    assert report.loaded is not None
    assert report.loaded.outputs["decide"] == VERDICT
    assert report.loaded.output_refs == {"decide": triage_schema}
    # the answer check is the registered one, not only the JSON Schema
    report.loaded.check_output("decide", {"verdict": "keep"})
    with pytest.raises(ValidationError, match=r"\$\['verdict'\]: verdict must be keep or drop"):
        report.loaded.check_output("decide", {"verdict": "maybe"})
    # each caller gets its own copy of the schema
    report.loaded.outputs["decide"]["required"].append("x")
    assert get_output_schema(triage_schema).schema() == VERDICT


def test_without_a_check_the_json_schema_decides(triage_schema: str) -> None:
    register_output_schema("triage:plain", schema=VERDICT, description="no check")
    try:
        entry = get_output_schema("triage:plain")
        entry.check_value({"verdict": "drop"})
        with pytest.raises(ValidationError) as caught:
            entry.check_value({"verdict": "drop", "extra": 1})
        assert caught.value.path == "$"
        with pytest.raises(ValidationError) as caught:
            entry.check_value({"verdict": "later"})
        assert caught.value.path == "$['verdict']"
    finally:
        unregister_output_schema("triage:plain")


def test_an_unknown_reference_names_the_place_and_the_known_schemas(
        tmp_path: Path, triage_schema: str) -> None:
    path = _write(tmp_path, "triage:verdikt")
    report = validate_file(path, display="triage.yaml", known_actions=known_actions())
    known = ", ".join(known_output_schemas())
    assert "triage:verdict" in known and "wardian:curator-batch" in known
    assert [p.render() for p in report.problems] == [
        f"triage.yaml:7:20: steps[0].output.$ref: unknown output schema reference; expected "
        f"one of {known}, found 'triage:verdikt' (did you mean 'triage:verdict'?)"]
    assert report.problems[0].kind == "reference"


def test_unregistering_makes_the_reference_unknown(tmp_path: Path) -> None:
    register_output_schema("triage:gone", schema=VERDICT, description="short-lived")
    unregister_output_schema("triage:gone")
    report = validate_file(_write(tmp_path, "triage:gone"))
    assert [p.message for p in report.problems] == ["unknown output schema reference"]
    with pytest.raises(KeyError):
        get_output_schema("triage:gone")


def test_the_shipped_consolidation_blueprint_uses_memorys_curator_batch() -> None:
    path = shipped_library_dir() / "memory-consolidation" / "blueprint.yaml"
    report = validate_file(path, known_actions=known_actions())
    assert report.problems == []
    assert report.loaded is not None
    assert report.loaded.output_refs == {"curate": "wardian:curator-batch"}
    from wardian.memory.batch import curator_output_schema

    # as registered: JSON Schema only (`standard_json_schema`)
    assert report.loaded.outputs["curate"] == standard_json_schema(curator_output_schema())
    assert plugin_errors() == []


def test_every_registered_schema_is_a_json_schema() -> None:
    for name in known_output_schemas():
        jsonschema.Draft202012Validator.check_schema(get_output_schema(name).schema())


def test_names_are_namespaced_and_taken_once(triage_schema: str) -> None:
    with pytest.raises(UsageError, match="already registered"):
        register_output_schema(triage_schema, schema=VERDICT, description="again")
    for bad in ("verdict", "Triage:Verdict", "triage:", ":verdict"):
        with pytest.raises(UsageError, match="namespace:name"):
            register_output_schema(bad, schema=VERDICT, description="bad name")
    with pytest.raises(UsageError, match="not JSON-serialisable"):
        register_output_schema("triage:odd", schema={"type": {1, 2}}, description="a set")
    register_output_schema(triage_schema, schema={"type": "object"}, description="replaced",
                           replace=True)
    assert get_output_schema(triage_schema).schema() == {"type": "object"}


def test_a_third_party_distribution_adds_a_schema(tmp_path: Path) -> None:
    (tmp_path / "fakeschemas.py").write_text(textwrap.dedent("""
        def register(registry):
            registry.add_output_schema("fake:summary", description="a summary",
                                       schema={"type": "object", "required": ["summary"]})
    """), encoding="utf-8")
    (tmp_path / "brokenschemas.py").write_text("raise RuntimeError('plugin bug')\n",
                                               encoding="utf-8")
    dist = tmp_path / "fakeschemas-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeschemas\nVersion: 1.0\n",
                                   encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[wardian.plugins]\nfake = fakeschemas:register\nbroken = brokenschemas:x\n",
        encoding="utf-8")
    (tmp_path / "bp.yaml").write_text(BLUEPRINT % "fake:sumary", encoding="utf-8")
    code = textwrap.dedent(f"""
        from wardian.blueprints.output_schemas import known_output_schemas, plugin_errors
        from wardian.blueprints.validate import validate_file
        names = known_output_schemas()
        assert "fake:summary" in names and "wardian:curator-batch" in names, names
        assert len(plugin_errors()) == 1 and "broken" in plugin_errors()[0], plugin_errors()
        [problem] = validate_file({str(tmp_path / "bp.yaml")!r}).problems
        print(problem.render())
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "did you mean 'fake:summary'?" in done.stdout
    assert ("plugin errors: plugin fakeschemas (broken = brokenschemas:x) failed to load: "
            "RuntimeError: plugin bug") in done.stdout
