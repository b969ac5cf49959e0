"""What a new blueprint author meets, through the real `wardian` CLI in a child process on
a temp WARDIAN_HOME: skipped outputs read later, every schema error of a file at once, a
role assigned to a provider that cannot answer its output schema, and where the role's
description goes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "wardian" / "library"


def wardian(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`wardian ARGS…` as a child process (the environment carries WARDIAN_HOME)."""
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, cwd=cwd, env=dict(os.environ), check=False,
                          stdin=subprocess.DEVNULL)


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "blueprint.yaml"
    path.write_text(text)
    return path


# --- 1. a step that reads the output of a step its `when` can skip -------------------------

SKIPPY = """\
blueprint: {id: skippy, name: Skippy, version: 1}
inputs:
  deep: {type: boolean, default: false}
  n: {type: integer, default: 1}
steps:
  - id: summarise
    when: "inputs.deep"
    action: noop
    with: {text: "long", operations: "{{ [] }}"}
  - id: report
    action: log
    with: {message: "{{ steps.summarise.output.text }}"}
  - id: same_guard
    when: "inputs.deep"
    action: log
    with: {message: "{{ steps.summarise.output.text }}"}
  - id: stronger_guard
    when: "inputs.n > 1 and inputs.deep"
    action: log
    with: {message: "{{ steps.summarise.output.text }}"}
  - id: status_guard
    when: "steps.summarise.status == 'succeeded'"
    action: log
    with: {message: "{{ steps.summarise.output.text }}"}
  - id: tolerant
    action: memory.draft_plan
    with: {batch: "{{ steps.summarise.output }}"}
  - id: tolerant_arg_but_a_part
    action: memory.draft_plan
    with: {batch: "{{ steps.summarise.output.operations }}"}
"""


def test_reading_a_skippable_output_warns_naming_both_steps(tmp_path: Path) -> None:
    path = write(tmp_path / "skippy", SKIPPY)
    result = wardian("blueprint", "validate", str(path))
    assert result.returncode == 0, result.stdout + result.stderr  # a warning, not an error
    warnings = [line for line in result.stdout.splitlines() if ": warning: " in line]
    assert len(warnings) == 2, result.stdout
    first, second = warnings
    assert first.startswith(f"{path}:12:")  # report's with.message
    assert "steps[1].with.message" in first
    assert "'report'" in first and "'summarise'" in first and "line 7" in first
    assert second.startswith(f"{path}:30:") and "'tolerant_arg_but_a_part'" in second
    assert "1 warning" in result.stderr or "2 warning" in result.stderr

    data = json.loads(wardian("blueprint", "validate", str(path), "--json").stdout)
    assert data[0]["ok"] is True and data[0]["problems"] == []
    assert [w["path"] for w in data[0]["warnings"]] == [
        "steps[1].with.message", "steps[6].with.batch"]
    assert data[0]["warnings"][0]["kind"] == "skipped-output"


def test_the_shipped_blueprints_validate_without_warnings() -> None:
    result = wardian("blueprint", "validate", str(SHIPPED))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stdout + result.stderr


# --- 2. every schema error of one file in one pass ------------------------------------------

MULTI = """\
blueprint:
  id: Multi
  name: Multi
  version: 0
roles:
  writer: Writes things.
  editor: 5
inputs:
  mode: {type: enum, choices: [a, b], default: a}
  limit: {type: integer, min: 5, max: 1, defualt: 3}
triggers: [manual, nightly]
steps:
  - id: first
    action: noop
    retry: {attempts: 0}
    prompt: "hi"
  - id: second
    role: writer
    timeout: forever
    with: {a: 1}
    prompt: "{{ inputs.nope }}"
    output: {type: object}
  - id: third
    action: log
    with: {message: "{{ steps.fourth.output }}"}
  - id: fourth
    role: ghost
    prompt: "{{ roles.nobody }}"
    output: {type: objekt}
"""


def test_every_schema_error_of_a_file_is_listed_at_once(tmp_path: Path) -> None:
    path = write(tmp_path / "multi", MULTI)
    result = wardian("blueprint", "validate", str(path), "--json")
    assert result.returncode == 2
    problems = json.loads(result.stdout)[0]["problems"]
    found = {(p["line"], p["path"], p["message"]) for p in problems}
    expected = {
        (2, "blueprint.id", "invalid value"),
        (4, "blueprint.version", "invalid value"),
        (7, "roles.editor", "invalid value"),
        (10, "inputs.limit.defualt", "unknown key 'defualt'"),
        (10, "inputs.limit", "empty range"),                 # hidden by the unknown key
        (11, "triggers[1]", "invalid value"),
        (15, "steps[0].retry.attempts", "invalid value"),
        (13, "steps[0]", "'prompt' belongs to role steps"),  # hidden by retry
        (19, "steps[1].timeout", "invalid value"),
        (17, "steps[1]", "'with' belongs to action steps"),  # hidden by timeout
        (21, "steps[1].prompt", "undefined input 'nope'"),   # hidden by any schema error
        (25, "steps[2].with.message", "step 'third' refers to a later step 'fourth'"),
        (27, "steps[3].role", "unknown role 'ghost'"),
        (28, "steps[3].prompt", "undefined role 'nobody'"),
        (29, "steps[3].output.type", "invalid JSON Schema"),
    }
    assert expected <= found, sorted(expected - found)
    for problem in problems:
        assert problem["file"] == str(path) and problem["line"] >= 1 and problem["path"]


# --- 3. a role assigned to a provider that cannot answer the step's output schema ---------

VERDICT = """\
blueprint: {id: verdict, name: Verdict, version: 1}
roles: {judge: Says whether the change is safe.}
steps:
  - id: judge
    role: judge
    prompt: "Is it safe?"
    output:
      type: object
      required: [verdict]
      properties: {verdict: {type: string}}
"""
BUILTIN = json.dumps({"judge": {"target_type": "temporary_provider", "provider": "builtin"}})


def _runs(home: Path) -> int:
    if not (home / "state.db").exists():
        return 0
    conn = sqlite3.connect(home / "state.db")
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0]) \
            if "runs" in tables else 0
    finally:
        conn.close()


def test_builtin_cannot_answer_an_inline_schema_and_says_so_before_a_run(
        tmp_path: Path, wardian_home: Path) -> None:
    path = write(tmp_path / "verdict", VERDICT)
    assert wardian("agent", "add", "bob", "--provider", "builtin", "--workspace",
                   str(tmp_path)).returncode == 0
    started = wardian("automation", "run", "start", str(path), "--agent", "bob",
                      "--assignments", BUILTIN, "--wait")
    assert started.returncode == 2, started.stdout + started.stderr
    message = started.stderr
    assert "steps[0]" in message or "step 'judge'" in message
    assert "builtin" in message and "wardian:curator-batch" in message
    assert "Traceback" not in message
    assert _runs(wardian_home) == 0
    as_agent = json.dumps({"judge": {"target_type": "agent", "agent": "bob"}})
    refused = wardian("automation", "run", "start", str(path), "--agent", "bob",
                      "--assignments", as_agent, "--wait")
    assert refused.returncode == 2 and "builtin" in refused.stderr
    assert _runs(wardian_home) == 0

    # `blueprint validate --assignments` says it at validation, with file:line.
    checked = wardian("blueprint", "validate", str(path), "--assignments", BUILTIN)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    line = next(x for x in checked.stdout.splitlines() if "builtin" in x)
    assert line.startswith(f"{path}:7:") and "steps[0].output" in line
    assert "wardian:curator-batch" in line
    plain = wardian("blueprint", "validate", str(path))
    assert plain.returncode == 0, plain.stdout + plain.stderr


def test_builtin_answers_are_data_and_one_registration_adds_one() -> None:
    from wardian.providers.builtin import (
        builtin_output_schemas,
        register_builtin_answer,
        unregister_builtin_answer,
    )
    from wardian.providers.registry import get_adapter

    assert "wardian:curator-batch" in builtin_output_schemas()
    adapter = get_adapter("builtin")
    assert adapter.answers_output("wardian:curator-batch")
    assert not adapter.answers_output(None) and not adapter.answers_output("team:verdict")
    register_builtin_answer("team:verdict", lambda payload: {"verdict": "safe"})
    try:
        assert adapter.answers_output("team:verdict")
        from wardian.providers.base import ProviderRequest

        answer = adapter.run(ProviderRequest(provider="builtin", output_ref="team:verdict"))
        assert answer.output == {"verdict": "safe"}
    finally:
        unregister_builtin_answer("team:verdict")
    assert "team:verdict" not in builtin_output_schemas()


# --- 4. the role description reaches the provider visibly ---------------------------------

ROLE_BP = """\
blueprint: {id: role-text, name: Role text, version: 1}
roles: {curator: Keeps only durable lessons; quotes evidence exactly.}
steps:
  - id: ask
    role: curator
    prompt: "Curate for {{ invocation.agent_name }}"
    output: {$ref: "wardian:curator-batch"}
    payload:
      messages: "{{ [] }}"
      records: "{{ [] }}"
      max_changes: 3
"""


def test_run_show_lists_the_role_description_sent_as_system_text(
        tmp_path: Path, wardian_home: Path) -> None:
    path = write(tmp_path / "role", ROLE_BP)
    assert wardian("agent", "add", "bob", "--provider", "builtin", "--workspace",
                   str(tmp_path)).returncode == 0
    assign = json.dumps({"curator": {"target_type": "temporary_provider",
                                     "provider": "builtin"}})
    started = wardian("automation", "run", "start", str(path), "--agent", "bob",
                      "--assignments", assign, "--wait", "--json")
    assert started.returncode == 0, started.stderr
    run: dict[str, Any] = json.loads(started.stdout)
    shown = json.loads(wardian("automation", "run", "show", run["id"], "--json").stdout)
    attempt = next(a for a in shown["attempts"] if a["step_id"] == "ask")
    assert attempt["input"]["system"] == "Keeps only durable lessons; quotes evidence exactly."
    assert attempt["input"]["prompt"] == "Curate for bob"  # the description is not in it


@pytest.fixture(autouse=True)
def _home(wardian_home: Path) -> Path:
    return wardian_home
