"""`wardian automation run …` and `automation runs` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.conftest import invoke
from tests.engine.helpers import actions, write_blueprint

BP = """\
blueprint: {id: cli-demo, name: CLI demo, version: 1}
roles: {curator: Curates.}
inputs:
  n: {type: integer, default: 1, min: 1, max: 5}
  token: {type: string, secret: true, default: none}
triggers: [manual]
steps:
  - id: greet
    action: noop
    with: {text: "n={{ inputs.n }} t={{ inputs.token }}", agent: "{{ invocation.agent_name }}"}
  - id: ask
    role: curator
    prompt: "Curate for {{ invocation.agent_id }}"
    output: {$ref: "wardian:curator-batch"}
    payload:
      messages: "{{ [] }}"
      records: "{{ [] }}"
      max_changes: "{{ inputs.n }}"
  - id: snap
    action: memory.snapshot
"""
ASSIGN = json.dumps({"curator": {"target_type": "temporary_provider", "provider": "builtin"}})


@pytest.fixture
def setup(cli: Any, tmp_path: Path) -> Path:
    result = invoke(cli, "agent", "add", "bob", "--provider", "builtin",
                    "--workspace", str(tmp_path))
    assert result.exit_code == 0, result.output
    return write_blueprint(tmp_path / "bp", BP)


def test_start_wait_runs_in_process(cli: Any, setup: Path) -> None:
    result = invoke(cli, "automation", "run", "start", str(setup), "--agent", "bob",
                    "--assignments", ASSIGN, "--input", "n=3", "--input", "token=hunter22",
                    "--wait", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["status"] == "succeeded"
    assert doc["inputs"] == {"n": 3, "token": "***"}
    assert doc["outputs"]["greet"] == {"text": "n=3 t=***", "agent": "bob"}
    assert doc["outputs"]["ask"] == {"operations": []}
    assert doc["invocation"]["trigger"] == "manual"
    assert "hunter22" not in result.stdout
    human = invoke(cli, "automation", "run", "show", doc["id"][:8])
    assert human.exit_code == 0 and "succeeded" in human.stdout
    # human output shows local time; JSON keeps UTC (DESIGN.md "Conventions")
    from wardian._util import parse_utc

    local = parse_utc(doc["created_at"]).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    assert f"created:    {local}" in human.stdout and doc["created_at"] not in human.stdout
    listed = invoke(cli, "automation", "runs", "--status", "succeeded", "--json")
    assert [r["id"] for r in json.loads(listed.stdout)] == [doc["id"]]
    table = invoke(cli, "automation", "runs", "--blueprint", "cli-demo")
    assert doc["id"][:8] in table.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--input", "n=9"], "inputs.n: expected a value <= 5, found '9'"),
    (["--input", "tokn=1"],
     "unknown input 'tokn'; the blueprint declares n, token (did you mean 'token'?)"),
    (["--assignments", '{"curatr": {"target_type": "temporary_provider", "provider": "builtin"}}'],
     "unknown role 'curatr'"),
    (["--assignments", "{}"], "role(s) curator used by blueprint 'cli-demo' have no assignment"),
])
def test_start_checks_everything_before_storing(cli: Any, setup: Path, args: list[str],
                                                message: str) -> None:
    base = ["automation", "run", "start", str(setup), "--agent", "bob"]
    if "--assignments" not in args:
        base += ["--assignments", ASSIGN]
    result = invoke(cli, *base, *args, "--wait")
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert json.loads(invoke(cli, "automation", "runs", "--json").stdout) == []


def test_start_detached_returns_the_run_id(cli: Any, setup: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # the child must import the installed package, not a `wardian/` in the current folder
    shadow = tmp_path / "project"
    (shadow / "wardian").mkdir(parents=True)
    (shadow / "wardian" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    monkeypatch.chdir(shadow)
    result = invoke(cli, "automation", "run", "start", str(setup), "--agent", "bob",
                    "--assignments", ASSIGN, "--input", "token=zz-secret-zz", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["status"] == "queued"
    psutil.Process(doc["pid"]).wait(timeout=120)
    shown = invoke(cli, "automation", "run", "show", doc["id"], "--json")
    run = json.loads(shown.stdout)
    assert run["status"] == "succeeded", Path(doc["log"]).read_text()
    assert run["outputs"]["greet"]["text"] == "n=1 t=***"  # the child got the secret via stdin
    assert run["outputs"]["snap"]["count"] == 0  # built-in actions found through the entry point
    assert "zz-secret-zz" not in shown.stdout


def test_cancel_and_resume(cli: Any, setup: Path) -> None:
    from wardian.config import open_state_db
    from wardian.engine.manual import prepare_manual_run
    from wardian.engine.runs import RunStore

    run = prepare_manual_run(str(setup), agent="bob", assignments=ASSIGN, inputs={}).run
    result = invoke(cli, "automation", "run", "cancel", run.id)
    assert result.exit_code == 0 and "cancelled" in result.stdout
    again = invoke(cli, "automation", "run", "cancel", run.id)
    assert again.exit_code == 2 and "already cancelled" in again.stderr
    resumed = invoke(cli, "automation", "run", "resume", run.id, "--wait", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["status"] == "succeeded"
    assert RunStore(open_state_db()).get(run.id).status == "succeeded"
    refused = invoke(cli, "automation", "run", "resume", run.id, "--wait")
    assert refused.exit_code == 2


def test_failed_run_exits_1(cli: Any, tmp_path: Path, setup: Path) -> None:
    path = write_blueprint(tmp_path / "bad", BP.replace("action: noop", "action: test.boom"))

    def boom(ctx: Any, **_: Any) -> None:
        raise RuntimeError("boom")

    with actions(**{"test.boom": boom}):
        result = invoke(cli, "automation", "run", "start", str(path), "--agent", "bob",
                        "--assignments", ASSIGN, "--wait")
    assert result.exit_code == 1
    assert "step 'greet' failed after 1 attempt(s): RuntimeError: boom" in result.stdout


def test_bad_arguments_are_usage_errors_not_tracebacks(cli: Any) -> None:
    bad_stdin = invoke(cli, "automation", "run", "execute", "abcd", "--secrets-stdin",
                       input="{not json")
    assert bad_stdin.exit_code == 2
    assert "--secrets-stdin expects a JSON object on stdin" in bad_stdin.stderr
    assert invoke(cli, "automation", "runs", "--limit", "0").exit_code == 2
    unknown = invoke(cli, "automation", "run", "show", "deadbeef")
    assert unknown.exit_code == 1
    assert "no run with id 'deadbeef' (see `wardian automation runs`)" in unknown.stderr
