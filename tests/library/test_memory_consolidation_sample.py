"""The shipped `memory-consolidation` sample: valid, shaped as issue 9 says, and its curator
prompt carries the spec's saving rules and the archive slice."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.blueprints.library import find_blueprint, shipped_library_dir
from wardian.blueprints.output_schemas import standard_json_schema
from wardian.memory.batch import curator_output_schema

SAMPLE = shipped_library_dir() / "memory-consolidation" / "blueprint.yaml"


def test_the_sample_passes_blueprint_validate(cli: CliRunner) -> None:
    result = invoke(cli, "blueprint", "validate", str(SAMPLE))
    assert result.exit_code == 0, result.output


def test_the_sample_has_the_issue_shape() -> None:
    loaded = find_blueprint("memory-consolidation")
    assert Path(loaded.path) == SAMPLE
    bp = loaded.blueprint
    assert list(bp.roles) == ["curator"]
    assert bp.inputs["mode"].choices == ["commit", "review"]
    assert bp.inputs["mode"].default == "commit"
    assert bp.inputs["max_changes"].default == 10
    assert bp.inputs["include_tool_output"].default is False
    assert set(bp.triggers) == {"session-close", "schedule", "manual"}
    steps = {s.id: s for s in bp.steps}
    assert [s.action or f"role:{s.role}" for s in bp.steps] == [
        "archive.load", "memory.snapshot", "role:curator", "memory.commit",
        "memory.draft_plan"]
    assert loaded.outputs["curate"] == standard_json_schema(curator_output_schema())
    assert set(steps["curate"].payload or {}) == {
        "messages", "records", "max_changes", "include_tool_output", "workspace"}
    assert steps["commit"].when == "inputs.mode == 'commit'"
    assert steps["review"].when == "inputs.mode == 'review'"


def _render(include_tool_output: bool) -> str:
    loaded = find_blueprint("memory-consolidation")
    messages = [
        {"seq": 5, "role": "user", "kind": "text", "text": "Always use pnpm here.",
         "timestamp": None, "meta": {}},
        {"seq": 6, "role": "tool", "kind": "tool_result", "text": "TOOL OUTPUT 42",
         "timestamp": None, "meta": {}},
    ]
    context = {
        "inputs": {"mode": "commit", "max_changes": 7,
                   "include_tool_output": include_tool_output},
        "invocation": {"trigger": "manual", "agent_id": "a" * 36, "agent_name": "dev",
                       "workspace": "/repo", "archive": None, "time": "t", "run_id": "r",
                       "idempotency_key": None, "payload": {}},
        "steps": {
            "archive": {"status": "succeeded", "output": {
                "agent_id": "a" * 36, "agent_name": "dev", "workspace": "/repo",
                "first_seq": 5, "last_seq": 6, "messages": messages}},
            "snapshot": {"status": "succeeded", "output": {"records": [
                {"id": "0123456789abcdef", "revision_id": "r1", "kind": "current",
                 "scope": {"kind": "workspace", "path": "/repo"},
                 "text": "Migration half done"}]}},
        },
        "roles": dict(loaded.blueprint.roles),
    }
    return str(loaded.engine.file_template("curator.md.j2").render(context))


def test_the_curator_prompt_has_the_rules_the_records_and_the_slice() -> None:
    prompt = _render(include_tool_output=False)
    for phrase in ("preferences", "conventions", "Decisions", "Corrections", "Lessons",
                   "checkpoints", "Routine progress", "task journals", "one-response-only",
                   "quoted EXACTLY", "At most 7 operations"):
        assert phrase in prompt, phrase
    assert "[01234567] (current, workspace) Migration half done" in prompt
    assert "[5] user: Always use pnpm here." in prompt
    assert "TOOL OUTPUT 42" not in prompt
    assert "TOOL OUTPUT 42" in _render(include_tool_output=True)


def test_the_curator_prompt_says_the_role_once_and_shows_the_users_tool_replies() -> None:
    loaded = find_blueprint("memory-consolidation")
    role = loaded.blueprint.roles["curator"]
    prompt = _render(include_tool_output=False)
    # the role text is the system prompt (executor); the user prompt must not repeat it
    assert role not in prompt
    for phrase in ("rejecting a tool call", "the question gives it meaning", "at most one or two",
                   "Never use npm", "Use spaces, not tabs", "no label prefix", "subagents"):
        assert phrase in prompt, phrase
    assert prompt.count("## Never save") == 1 and prompt.count("## Each operation") == 1
