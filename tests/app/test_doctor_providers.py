"""`wardian doctor` on provider CLIs and model catalogs: the real CLI, real data dirs, a PATH
that holds exactly the provider CLIs a test wants (issue 20 "wardian doctor": provider CLIs
on PATH and their versions, model catalogs; the README's real setup must not fail it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry

CLAUDE_SONNET = '{"curator":{"target_type":"temporary_provider","provider":"claude",' \
                '"model":"sonnet"}}'


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH with no provider CLI on it; no API keys (the claude catalog is its aliases)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    return folder


def _doctor(cli: CliRunner, *checks: str) -> tuple[int, list[dict[str, Any]]]:
    args = [a for c in checks for a in ("--check", c)]
    res = invoke(cli, "doctor", "--json", *args)
    doc = json.loads(res.stdout)
    return res.exit_code, [f for c in doc["checks"] for f in c["findings"]]


def _about(findings: list[dict[str, Any]], text: str) -> dict[str, Any]:
    (found,) = [f for f in findings if text in f["message"]]
    return found


def _ok(cli: CliRunner, *argv: str) -> None:
    res = invoke(cli, *argv)
    assert res.exit_code == 0, res.output


def test_readme_setup_without_the_claude_cli_warns_and_exits_0(
        cli: CliRunner, empty_path: Path, tmp_path: Path) -> None:
    # The README's real setup: an agent on claude, the offline builtin curator.
    _ok(cli, "agent", "add", "ada", "--provider", "claude", "--workspace", str(tmp_path))
    _ok(cli, "automation", "session-close", "add", "--blueprint", "memory-consolidation",
        "--name", "Consolidate ada", "--agent", "ada", "--require-archive", "--assignments",
        '{"curator":{"target_type":"temporary_provider","provider":"builtin",'
        '"model":"curator-rules"}}')
    code, findings = _doctor(cli)
    assert code == 0, [f for f in findings if f["status"] == "problem"]
    claude = _about(findings, "claude is not on PATH")
    assert claude["status"] == "warning"
    assert "`wardian agent launch ada` fails" in claude["message"]
    assert "hooks and the builtin curator do not need it" in claude["message"]
    res = invoke(cli, "doctor")
    assert res.exit_code == 0 and "[warn] claude is not on PATH" in res.stdout
    assert "No problems found." in res.stdout


def test_an_invoker_that_runs_a_missing_cli_is_a_problem(
        cli: CliRunner, empty_path: Path) -> None:
    _ok(cli, "agent", "add", "ada", "--provider", "builtin")
    _ok(cli, "agent", "add", "bob", "--provider", "claude")
    _ok(cli, "agent", "models", "--provider", "claude", "--refresh")
    _ok(cli, "automation", "session-close", "add", "--blueprint", "memory-consolidation",
        "--name", "direct", "--agent", "ada", "--assignments", CLAUDE_SONNET)
    _ok(cli, "automation", "session-close", "add", "--blueprint", "memory-consolidation",
        "--name", "via-bob", "--agent", "ada", "--assignments",
        '{"curator":{"target_type":"agent","agent":"bob"}}')
    code, findings = _doctor(cli, "provider-clis")
    assert code == 1
    claude = _about(findings, "claude is not on PATH")
    assert claude["status"] == "problem"
    assert "role curator (agent bob)" in claude["message"]
    assert "those runs will fail" in claude["message"]
    assert "session-close set ID --assignments" in claude["fix"]


def test_a_cli_on_path_is_listed_with_its_version(
        cli: CliRunner, empty_path: Path) -> None:
    fake = empty_path / "codex"
    fake.write_text(f"#!{sys.executable}\nprint('codex-cli 9.8.7')\n")
    fake.chmod(0o755)
    code, findings = _doctor(cli, "provider-clis")
    assert code == 0
    assert "· codex-cli 9.8.7 · not tested with version 9.8.7" in _about(
        findings, "codex:")["message"]


def test_an_agent_model_missing_from_the_catalog_names_the_set_command(
        cli: CliRunner, empty_path: Path) -> None:
    # written past `agent add`'s own check, as a catalog that changed since would leave it
    AgentRegistry(open_state_db()).add("ada", "builtin", model="curator-rulez")
    code, findings = _doctor(cli, "model-catalogs")
    assert code == 1
    bad = _about(findings, "agent ada")
    assert bad["status"] == "problem"
    assert "'curator-rulez' is not in the builtin catalog" in bad["message"]
    assert bad["fix"] == "`wardian agent set ada --model curator-rules`"
    _ok(cli, "agent", "set", "ada", "--model", "curator-rules")  # the fix, as printed
    code, findings = _doctor(cli, "model-catalogs")
    assert code == 0 and _about(findings, "agent ada")["status"] == "ok"


def test_an_unsupported_effort_and_a_never_fetched_catalog_are_problems(
        cli: CliRunner, empty_path: Path) -> None:
    # past `agent add`'s own check
    AgentRegistry(open_state_db()).add("ada", "builtin", effort="high")
    _ok(cli, "agent", "add", "bob", "--provider", "claude", "--model", "opus")
    code, findings = _doctor(cli, "model-catalogs")
    assert code == 1
    ada = _about(findings, "agent ada")
    assert "has no effort levels" in ada["message"] and "--effort ''" in ada["fix"]
    bob = _about(findings, "agent bob")
    assert "never refreshed" in bob["message"]
    assert "`wardian agent models --provider claude --refresh`" in bob["fix"]
    _ok(cli, "agent", "models", "--provider", "claude", "--refresh")
    _ok(cli, "agent", "set", "ada", "--effort", "")
    code, findings = _doctor(cli, "model-catalogs")
    assert code == 0, findings
    assert "claude opus is in the catalog" in _about(findings, "agent bob")["message"]


def test_an_invoker_whose_agent_target_left_the_catalog_is_a_problem(
        cli: CliRunner, empty_path: Path) -> None:
    _ok(cli, "agent", "add", "ada", "--provider", "builtin", "--model", "curator-rules")
    _ok(cli, "automation", "session-close", "add", "--blueprint", "memory-consolidation",
        "--name", "self", "--agent", "ada", "--assignments",
        '{"curator":{"target_type":"agent","agent":"ada"}}')
    code, findings = _doctor(cli, "model-catalogs")
    assert code == 0
    assert "curator → builtin curator-rules" in _about(findings, "invoker")["message"]
    registry = AgentRegistry(open_state_db())  # the model left the catalog after it was set
    registry.update(registry.get("ada").id, model="gone-model")
    code, findings = _doctor(cli, "model-catalogs")
    assert code == 1
    bad = _about(findings, "session-close invoker")
    assert "'gone-model' is not in the builtin catalog" in bad["message"]
    assert "wardian automation session-close set" in bad["fix"]
