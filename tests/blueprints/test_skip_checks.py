"""Which reads of a skippable step's output are warned about (`skip_checks`), through the
library's `validate_file` with the engine's registered actions."""

from __future__ import annotations

from pathlib import Path

import pytest

from wardian.blueprints.validate import validate_file
from wardian.engine.actions import (
    actions_accepting_skipped,
    known_actions,
    register_action,
    unregister_action,
)

HEAD = """\
blueprint: {id: guards, name: Guards, version: 1}
inputs:
  deep: {type: boolean, default: false}
  mode: {type: string, default: x}
roles: {writer: Writes.}
steps:
  - id: maybe
    when: "inputs.deep and inputs.mode == 'x'"
    action: noop
    with: {text: "t"}
"""


def _warnings(tmp_path: Path, reader: str) -> list[str]:
    path = tmp_path / "guards.yaml"
    path.write_text(HEAD + reader)
    report = validate_file(path, known_actions=known_actions(),
                           accepts_skipped=actions_accepting_skipped())
    assert report.problems == [], [p.render() for p in report.problems]
    return [w.render() for w in report.warnings]


@pytest.mark.parametrize("reader", [
    # the template tests the step itself
    '  - {id: r, action: log, with: {message: "{% if steps.maybe.output %}'
    '{{ steps.maybe.output.text }}{% endif %}"}}\n',
    '  - {id: r, action: log, with: {message: "{{ (steps.maybe.output or {}).text }}"}}\n',
    '  - {id: r, action: log, with: {message: "{{ steps.maybe.output | default({}) }}"}}\n',
    '  - {id: r, action: log, with: {message: "{{ steps.maybe.output.text '
    'if steps.maybe.status == \'succeeded\' else \'-\' }}"}}\n',
    # the reader's own `when` implies the step's (both of its conditions, any order)
    '  - {id: r, when: "inputs.mode == \'x\' and inputs.deep", action: log,'
    ' with: {message: "{{ steps.maybe.output.text }}"}}\n',
    '  - {id: r, when: "steps.maybe.output is not none", action: log,'
    ' with: {message: "{{ steps.maybe.output.text }}"}}\n',
    # only the status is read: it is always there
    '  - {id: r, action: log, with: {message: "{{ steps.maybe.status }}"}}\n',
    # an action that declared the argument accepts a skipped input, given the whole output
    '  - {id: r, action: memory.commit, with: {batch: "{{ steps.maybe.output }}"}}\n',
    # a skipped reviewer is a review without findings (`parse_review_answer(None)`)
    '  - {id: r, action: memory.draft_review, with: {review: "{{ steps.maybe.output }}"}}\n',
    # the same argument as a step reference
    '  - {id: r, action: memory.commit, with: {batch_step: maybe}}\n',
])
def test_guarded_reads_are_quiet(tmp_path: Path, reader: str) -> None:
    assert _warnings(tmp_path, reader) == []


@pytest.mark.parametrize("reader", [
    '  - {id: r, action: log, with: {message: "{{ steps.maybe.output.text }}"}}\n',
    # one of the two conditions is not enough
    '  - {id: r, when: "inputs.deep", action: log,'
    ' with: {message: "{{ steps.maybe.output.text }}"}}\n',
    # the reader's `when` itself reads it
    '  - {id: r, when: "steps.maybe.output.text == \'t\'", action: log}\n',
    # a role step's prompt and payload
    '  - {id: r, role: writer, prompt: "Use {{ steps.maybe.output.text }}",'
    ' output: {type: object}}\n',
    # an argument the action did not declare
    '  - {id: r, action: noop, with: {batch: "{{ steps.maybe.output }}"}}\n',
    # a step reference for an argument the action did not declare
    '  - {id: r, action: memory.commit, with: {archive_step: maybe}}\n',
])
def test_unguarded_reads_warn(tmp_path: Path, reader: str) -> None:
    warnings = _warnings(tmp_path, reader)
    assert len(warnings) == 1, warnings
    assert "step 'r' reads steps.maybe.output" in warnings[0]
    assert "line 8" in warnings[0] and ": warning: " in warnings[0]


def test_a_registered_action_declares_what_it_accepts_skipped(tmp_path: Path) -> None:
    reader = '  - {id: r, action: team.notify, with: {body: "{{ steps.maybe.output }}"}}\n'
    register_action("team.notify", accepts_skipped=("body",))(lambda ctx, body=None: None)
    try:
        assert actions_accepting_skipped()["team.notify"] == frozenset({"body"})
        assert _warnings(tmp_path, reader) == []
    finally:
        unregister_action("team.notify")
    assert "team.notify" not in actions_accepting_skipped()
