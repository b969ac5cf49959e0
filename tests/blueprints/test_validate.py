"""Validation reports every problem of every file, with positions, through the library API
and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.blueprints.errors import BlueprintInvalid, BlueprintSyntaxError
from wardian.blueprints.validate import load_blueprint, validate_file
from wardian.engine.actions import known_actions

CORPUS = Path(__file__).parent / "corpus"

MANY = """\
blueprint: {id: many, name: Many, version: 1}
roles: {curator: c}
inputs:
  n: {type: integer, default: 3}
steps:
  - id: a
    action: noop
    with: {x: "{{ inputz.n }}", y: "{{ steps.b.output }}"}
  - id: b
    role: curatr
    prompt: "hi"
    output: {type: object}
  - id: a
    action: nop
"""


def test_one_file_reports_all_its_reference_problems(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text(MANY)
    report = validate_file(path, display="many.yaml", known_actions=known_actions())
    assert [p.render() for p in report.problems] == [
        "many.yaml:8:15: steps[0].with.x: undefined variable 'inputz'; expected one of inputs, "
        "invocation, steps, roles, found 'inputz' (did you mean 'inputs'?)",
        "many.yaml:8:36: steps[0].with.y: step 'a' refers to a later step 'b'; expected a step "
        "that runs before 'a', found steps[1] 'b'",
        "many.yaml:10:11: steps[1].role: unknown role 'curatr'; expected a role declared under "
        "'roles' (curator), found 'curatr' (did you mean 'curator'?)",
        "many.yaml:13:9: steps[2].id: duplicate step id 'a'; expected a unique step id, found "
        "'a' again (first used by steps[0])",
        "many.yaml:14:13: steps[2].action: unknown action 'nop'; expected a registered action "
        f"({', '.join(known_actions())}), found 'nop' (did you mean 'noop'?)",
    ]
    with pytest.raises(BlueprintInvalid) as caught:
        load_blueprint(path, display="many.yaml", known_actions=known_actions())
    assert caught.value.exit_code == 2
    assert len(caught.value.problems) == 5
    assert "(and 4 more problem(s))" in str(caught.value)


def test_syntax_error_raises_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("blueprint: [\n")
    with pytest.raises(BlueprintSyntaxError):
        load_blueprint(path)


def test_unreadable_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    report = validate_file(tmp_path / "missing.yaml", display="missing.yaml")
    assert report.problems[0].render().startswith("missing.yaml:1:1: (root): cannot read file")


def test_hash_covers_prompt_files(tmp_path: Path) -> None:
    for name in ("base.yaml", "curate.md.j2"):
        (tmp_path / name).write_text((CORPUS / "valid" / name).read_text())
    first = load_blueprint(tmp_path / "base.yaml").source_hash
    (tmp_path / "curate.md.j2").write_text("Changed {{ inputs.limit }}\n")
    second = load_blueprint(tmp_path / "base.yaml").source_hash
    assert first.startswith("sha256:") and first != second


def test_cli_validate_reports_every_file_and_exits_2(cli: CliRunner,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    result = invoke(cli, "blueprint", "validate", "valid", "broken")
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    expected = json.loads((CORPUS / "expected.json").read_text())
    actions = ", ".join(known_actions())
    for messages in expected.values():
        for message in messages:
            assert message.replace("{ACTIONS}", actions) in lines
    assert "ok  valid/base.yaml (corpus-base)" in lines
    assert f"{len(expected) + 1} file(s) checked, {len(expected)} with problems" in result.stderr


def test_cli_validate_json_and_ok(cli: CliRunner) -> None:
    result = invoke(cli, "blueprint", "validate", str(CORPUS / "valid" / "base.yaml"), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc[0]["ok"] is True and doc[0]["id"] == "corpus-base"


def test_schema_and_template_problems_are_reported_together(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(
        "blueprint: {id: two, name: Two, version: one}\n"
        "inputs:\n"
        "  n: {type: integer, default: 3}\n"
        "steps:\n"
        "  - id: a\n"
        "    action: noop\n"
        '    with: {x: "{{ inputz.n }}", y: "{{ steps.b.output }}"}\n'
        "  - id: b\n"
        "    action: noop\n")
    report = validate_file(path, display="two.yaml")
    assert [p.render() for p in report.problems] == [
        "two.yaml:1:42: blueprint.version: invalid value; expected an integer version such as "
        "1, found 'one' (string)",
        "two.yaml:7:15: steps[0].with.x: undefined variable 'inputz'; expected one of inputs, "
        "invocation, steps, roles, found 'inputz' (did you mean 'inputs'?)",
        "two.yaml:7:36: steps[0].with.y: step 'a' refers to a later step 'b'; expected a step "
        "that runs before 'a', found steps[1] 'b'",
    ]


def test_action_names_come_from_the_caller(tmp_path: Path) -> None:
    # The validator sits below the engine: it checks `action:` names against the set its
    # caller passes (the engine's registry in production), and only when one is passed.
    path = tmp_path / "one.yaml"
    path.write_text("blueprint: {id: one, name: One, version: 1}\n"
                    "steps:\n  - id: a\n    action: mine.sync\n")
    assert validate_file(path, known_actions=known_actions()).problems[0].render() == (
        f"{path}:4:13: steps[0].action: unknown action 'mine.sync'; expected a registered "
        f"action ({', '.join(known_actions())}), found 'mine.sync'")
    listed = validate_file(path, display="one.yaml", known_actions={"mine.sink", "log"})
    assert [p.render() for p in listed.problems] == [
        "one.yaml:4:13: steps[0].action: unknown action 'mine.sync'; expected a registered "
        "action (log, mine.sink), found 'mine.sync' (did you mean 'mine.sink'?)"]
    assert validate_file(path, known_actions=["mine.sync"]).ok
    assert validate_file(path, known_actions=None).ok  # None: action names not checked
    assert load_blueprint(path).id == "one"


def test_cli_list_and_show_check_action_names(cli: CliRunner, wardian_home: Path) -> None:
    user = wardian_home / "library"
    user.mkdir()
    (user / "typo.yaml").write_text("blueprint: {id: typo, name: T, version: 1}\n"
                                    "steps:\n  - id: a\n    action: nop\n")
    for group in ("blueprint", "library"):
        listed = invoke(cli, group, "list", "--json")
        assert listed.exit_code == 0, listed.output
        entry = next(e for e in json.loads(listed.stdout) if e["id"] == "typo")
        assert entry["ok"] is False
        assert "unknown action 'nop'" in entry["problems"][0]
    shown = invoke(cli, "blueprint", "show", "typo")
    assert shown.exit_code == 2
    assert "unknown action 'nop'" in shown.output
