"""A role step that runs as an agent needs a workspace for what its provider saves (issue 20):
the run's, else the agent's; with neither, the step refuses before the provider starts
instead of letting workspace-scoped records land in a scratch directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import invoke
from tests.engine.helpers import create_run, write_blueprint
from tests.providers.conftest import FakeCli, fake_cli  # noqa: F401 - a fixture
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.engine.executor import execute_run
from wardian.engine.runs import RunStore

BLUEPRINT = """\
blueprint: {id: as-agent, name: As agent, version: 1}
roles:
  worker: You do the work.
steps:
  - id: work
    role: worker
    prompt: Remember what matters.
    output: {type: object}
"""
ASSIGN = {"worker": {"target_type": "agent", "agent": "ada"}}


def _run(tmp_path: Path, workspace: str | None) -> Any:
    path = write_blueprint(tmp_path / "bp", BLUEPRINT)
    store = RunStore(open_state_db())
    run = create_run(store, path, assignments=ASSIGN, workspace=workspace)
    return execute_run(run.id, store=store)


def test_a_step_without_any_workspace_refuses_before_the_provider_starts(
    cli: CliRunner, tmp_path: Path, fake_cli: FakeCli,  # noqa: F811
) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    result = _run(tmp_path, None)
    assert result.status == "failed"
    errors = " ".join(a.error or "" for a in result.attempts)
    assert "no workspace" in errors, errors
    assert "wardian agent set ada --workspace PATH" in errors
    assert len(result.attempts) == 1  # not retried: nothing changes on a retry
    assert fake_cli.calls() == []  # nothing ran in a scratch directory


def test_a_step_runs_its_provider_in_the_agent_workspace(
    cli: CliRunner, tmp_path: Path, fake_cli: FakeCli,  # noqa: F811
) -> None:
    home = (tmp_path / "ada-home").resolve()
    home.mkdir()
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude", "--workspace",
                  str(home)).exit_code == 0
    result = _run(tmp_path, None)
    assert result.status == "succeeded", json.dumps(str(result))
    (call,) = fake_cli.calls()
    assert call["cwd"] == str(home)  # where its workspace-scoped saves belong
