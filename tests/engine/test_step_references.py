"""Step references (`wardian.engine.executor`, "Step references"): a ``<name>_step: ID``
argument hands the action step ``ID``'s output as ``<name>`` and is stored as the id; a
template that names an output path is stored as a reference read from the blueprint's text
(never from object identity); a reference to a missing or later step is refused by
validation with its line; the memory actions' typed outputs refuse a malformed output with
a clear step failure. Real SQLite run store, real executor."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import actions, create_run, write_blueprint

from wardian.blueprints.errors import BlueprintInvalid
from wardian.blueprints.validate import load_blueprint, validate_file
from wardian.config import open_state_db
from wardian.engine.actions import known_actions, output_storage
from wardian.engine.executor import execute_run
from wardian.engine.runs import RunStore


def _make(ctx: Any) -> dict[str, Any]:
    return {"rows": [{"n": i, "text": f"row number {i} " * 8} for i in range(20)]}


DECLARED = """\
blueprint: {id: refs, name: Refs, version: 1}
triggers: [manual]
steps:
  - id: make
    action: t.make
  - id: use
    action: t.use
    with:
      rows_step: make
  - id: copy
    action: t.use
    with:
      rows: "{{ steps.make.output.rows }}"
      other: "{{ steps.make.output.rows | list }}"
"""


def test_a_declared_reference_hands_the_output_and_stores_the_id(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    def use(ctx: Any, **args: Any) -> int:
        calls.append(args)
        return len(args["rows"])

    store = RunStore(open_state_db())
    fns: dict[str, Callable[..., Any]] = {"t.make": _make, "t.use": use}
    with actions(**fns):
        run = execute_run(create_run(store, write_blueprint(tmp_path / "bp", DECLARED)).id,
                          store=store)
    assert run.status == "succeeded", run.error
    rows = _make(None)["rows"]
    # `rows_step` is not registered by t.use: it reaches the action as `rows` alone, the
    # whole output of `make`
    assert calls == [{"rows": {"rows": rows}}, {"rows": rows, "other": rows}]
    attempts = {a.step_id: a for a in run.attempts}
    assert attempts["use"].input == {"action": "t.use", "with": {"rows_step": "make"}}
    assert attempts["use"].input_refs == []
    # the path template is a reference; the filtered one, though equal, is a copy
    assert [r.source() for r in attempts["copy"].input_refs] == ["steps.make.output.rows"]
    raw = store.conn.execute("SELECT input FROM step_attempts WHERE run_id = ? AND "
                             "step_id = 'copy'", (run.id,)).fetchone()[0]
    assert json.loads(raw)["with"] == {"rows": None, "other": rows}


@pytest.mark.parametrize(("value", "message"), [
    ("later", "step reference 'rows_step' names a later step: 'later'"),
    ("use", "step reference 'rows_step' names this step: 'use'"),
    ("mak", "step reference 'rows_step' names no step: 'mak'"),
    ('"{{ steps.make.id }}"', "step reference 'rows_step' must name a step by its id"),
])
def test_a_reference_to_a_missing_or_later_step_fails_validation_with_its_line(
        tmp_path: Path, value: str, message: str) -> None:
    text = DECLARED.replace("rows_step: make", f"rows_step: {value}") + (
        "  - id: later\n    action: noop\n")
    path = write_blueprint(tmp_path / "bp", text)
    line = text.splitlines().index(f"      rows_step: {value}") + 1
    report = validate_file(path, display="bp.yaml", known_actions=known_actions())
    rendered = [p.render() for p in report.problems]
    assert any(r.startswith(f"bp.yaml:{line}:18: steps[1].with.rows_step: {message}")
               for r in rendered), rendered
    with pytest.raises(BlueprintInvalid) as caught:
        load_blueprint(path, known_actions=known_actions())
    assert caught.value.exit_code == 2


def test_a_value_and_its_reference_together_are_refused(tmp_path: Path) -> None:
    text = DECLARED.replace("rows_step: make", "rows_step: make\n      rows: []")
    report = validate_file(write_blueprint(tmp_path / "bp", text), display="bp.yaml",
                           known_actions=known_actions())
    assert any("both 'rows' and its step reference 'rows_step' are given" in p.render()
               for p in report.problems), report.problems


def test_a_malformed_memory_output_fails_the_step_naming_the_action_and_field(
        tmp_path: Path) -> None:
    from wardian.app.action_outputs import MemoryCommitOutput, typed

    def bad(ctx: Any) -> Any:  # an action bug: a receipt without most of its keys
        return typed(MemoryCommitOutput, {"agent_id": "a", "counts": "three"}, "t.bad")

    store = RunStore(open_state_db())
    text = ("blueprint: {id: bad, name: Bad, version: 1}\ntriggers: [manual]\n"
            "steps:\n  - id: commit\n    action: t.bad\n")
    with actions(**{"t.bad": bad}):
        run = execute_run(create_run(store, write_blueprint(tmp_path / "bp", text)).id,
                          store=store)
    assert run.status == "failed"
    assert run.error is not None
    assert "action 't.bad' produced a malformed output: " in run.error, run.error
    assert "bug in the action" in run.error and "Traceback" not in run.error


def test_the_memory_outputs_keep_their_storage_rule() -> None:
    from wardian.app.action_outputs import ArchiveLoadOutput

    assert output_storage("archive.load") is ArchiveLoadOutput.STORAGE
    for name in ("memory.snapshot", "memory.commit", "memory.draft_plan",
                 "memory.draft_review"):
        assert output_storage(name) is None  # stored whole, as dumped
