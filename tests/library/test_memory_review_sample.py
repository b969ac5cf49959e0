"""The shipped `memory-review` sample: valid, shaped as the issue says, its reviewer's answer
registered as `wardian:memory-review`, and its prompt shows the records with their marks."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.blueprints.library import find_blueprint, shipped_library_dir
from wardian.blueprints.output_schemas import get_output_schema, standard_json_schema
from wardian.memory.review import REVIEW_REF, REVIEW_SCHEMA_TITLE, review_output_schema

SAMPLE = shipped_library_dir() / "memory-review" / "blueprint.yaml"


def test_the_sample_passes_blueprint_validate(cli: CliRunner) -> None:
    result = invoke(cli, "blueprint", "validate", str(SAMPLE))
    assert result.exit_code == 0, result.output


def test_the_sample_has_the_issue_shape() -> None:
    loaded = find_blueprint("memory-review")
    assert Path(loaded.path) == SAMPLE
    bp = loaded.blueprint
    assert list(bp.roles) == ["reviewer"]
    assert set(bp.triggers) == {"schedule", "manual"}
    assert [s.action or f"role:{s.role}" for s in bp.steps] == [
        "memory.snapshot", "role:reviewer", "memory.draft_review"]
    snapshot = bp.steps[0].with_ or {}
    assert snapshot == {"all_workspaces": True, "include_flagged": True,
                        "check_evidence": True}
    assert loaded.outputs["review"] == standard_json_schema(review_output_schema())
    assert loaded.outputs["review"]["title"] == REVIEW_SCHEMA_TITLE
    assert get_output_schema(REVIEW_REF).name == REVIEW_REF


def _record(n: int, **extra: object) -> dict[str, object]:
    return {"id": f"{n:08d}abcdef", "revision_id": "r", "kind": "stable",
            "scope": {"kind": "workspace", "path": "/repo"}, "text": f"Rule number {n}",
            "updated_days": n, "flagged": None, "evidence_in_archive": True, **extra}


def test_the_reviewer_prompt_lists_the_records_with_their_marks() -> None:
    loaded = find_blueprint("memory-review")
    records = [_record(1), _record(2, flagged="secret_detected: x",
                                   text="<withheld: flagged record>"),
               _record(3, evidence_in_archive=False), *[_record(n) for n in range(4, 2105)]]
    context = {
        "inputs": {}, "invocation": {"trigger": "manual", "run_id": "r", "payload": {}},
        "steps": {"snapshot": {"status": "succeeded", "output": {
            "count": len(records), "taken_at": "2026-12-07T00:00:00Z",
            "current_review_days": 14, "records": records}}},
        "roles": dict(loaded.blueprint.roles),
    }
    prompt = str(loaded.engine.file_template("reviewer.md.j2").render(context))
    assert "[00000001] (stable, workspace /repo, revised 1d ago) Rule number 1" in prompt
    assert "[00000002] (stable, workspace /repo, revised 2d ago, flagged)" in prompt
    assert "revised 3d ago, evidence: gone) Rule number 3" in prompt
    assert "1000 of 2104 shown" in prompt and "Rule number 1001" not in prompt
    assert "14 days or more" in prompt and '"kind": "duplicate"' in prompt
    assert "Run cargo fmt before committing" in prompt  # the near-miss rule is spelled out
    assert loaded.blueprint.roles["reviewer"] not in prompt
