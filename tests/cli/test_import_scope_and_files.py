"""Instruction imports take their workspace from where they run, and read only regular
files of bounded size (`garden memory import`, `wardian memory import`, and the JSON
restore): a file imported outside git is not made agent-wide, a device or FIFO (also
behind a symlink) is refused at once, a file over the cap is refused."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.mcp.conftest import add_agent, capability_env
from typer.testing import CliRunner

RULES = "# Rules\n\n- Database migrations are append-only\n"


def _ops(cli: CliRunner, *args: str) -> list[dict[str, Any]]:
    result = invoke(cli, "garden", "memory", "import", *args, "--agent", "ada",
                    "--preview-only", "--json")
    assert result.exit_code == 0, result.output
    plan = json.loads(Path(json.loads(result.stdout)["plan_path"]).read_text())
    ops: list[dict[str, Any]] = plan["operations"]
    return ops


def test_outside_git_the_bullets_belong_to_the_folder_it_runs_in(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_agent("ada")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text(RULES)
    monkeypatch.chdir(folder)
    (op,) = _ops(cli, "CLAUDE.md")
    assert op["scope"] == {"kind": "workspace", "path": str(folder.resolve())}


def test_the_workspace_is_where_it_runs_not_where_the_file_lies(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_agent("ada")
    other = tmp_path / "other-project"
    (other / ".git").mkdir(parents=True)
    (other / "AGENTS.md").write_text(RULES)
    here = tmp_path / "svc"
    (here / ".git").mkdir(parents=True)
    (here / "src").mkdir()
    monkeypatch.chdir(here / "src")
    (op,) = _ops(cli, str(other / "AGENTS.md"))
    assert op["scope"] == {"kind": "workspace", "path": str(here.resolve())}
    (op,) = _ops(cli, str(other / "AGENTS.md"), "--workspace", str(other))
    assert op["scope"] == {"kind": "workspace", "path": str(other.resolve())}


def test_agent_scope_only_when_asked(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_agent("ada")
    (tmp_path / "CLAUDE.md").write_text(RULES)
    monkeypatch.chdir(tmp_path)
    (op,) = _ops(cli, "CLAUDE.md", "--scope", "agent")
    assert op["scope"] == {"kind": "agent"}
    both = invoke(cli, "garden", "memory", "import", "CLAUDE.md", "--agent", "ada",
                  "--scope", "agent", "--workspace", str(tmp_path), "--preview-only")
    assert both.exit_code == 2 and "--workspace" in both.stderr
    missing = invoke(cli, "garden", "memory", "import", "CLAUDE.md", "--agent", "ada",
                     "--workspace", str(tmp_path / "nope"), "--preview-only")
    assert missing.exit_code == 2 and "no such folder" in missing.stderr


def test_an_agents_draft_outside_git_is_workspace_scoped_too(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent_id = add_agent("ada")
    (tmp_path / "CLAUDE.md").write_text(RULES)
    monkeypatch.chdir(tmp_path)
    result = invoke(cli, "memory", "import", "CLAUDE.md", env=capability_env(agent_id))
    assert result.exit_code == 0, result.output
    (op,) = json.loads(result.stdout)["operations"]
    assert op["scope"] == {"kind": "workspace", "path": str(tmp_path.resolve())}


def _refused(cli: CliRunner, agent_id: str, path: Path) -> list[Any]:
    return [
        invoke(cli, "garden", "memory", "import", str(path), "--agent", "ada",
               "--preview-only"),
        invoke(cli, "memory", "import", str(path), env=capability_env(agent_id)),
        invoke(cli, "garden", "memory", "import", str(path), "--agent", "ada",
               "--format", "json"),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero")
def test_devices_and_fifos_are_refused_at_once_also_behind_a_symlink(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    monkeypatch.chdir(tmp_path)
    zero = tmp_path / "CLAUDE.md"
    zero.symlink_to("/dev/zero")
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)  # nobody ever writes to it: a reader that waits would wait forever
    for path, kind in ((zero, "character device"), (fifo, "FIFO")):
        for result in _refused(cli, agent_id, path):
            assert result.exit_code == 2, result.output
            assert kind in result.stderr and "not a regular file" in result.stderr
    assert not (wardian_home / "plans").exists() or not any((wardian_home / "plans").iterdir())


def test_a_file_over_the_cap_is_refused_naming_it(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian.app.instruction_import import MAX_FILE_BYTES

    agent_id = add_agent("ada")
    monkeypatch.chdir(tmp_path)
    big = tmp_path / "CLAUDE.md"
    big.write_text("- a rule\n" + "x" * MAX_FILE_BYTES)
    for result in _refused(cli, agent_id, big)[:2]:
        assert result.exit_code == 2, result.output
        assert f"{MAX_FILE_BYTES:,} bytes" in result.stderr
