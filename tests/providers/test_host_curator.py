"""`wardian automation session-close add --curator host|builtin`: the curator assignment in one
option. The host's model is an exact model and effort from the refreshed catalog of the
agent's own provider (a small one by default), printed and stored as an ordinary assignment.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner, Result

from tests.conftest import invoke
from tests.providers.conftest import FakeCli
from wardian.config import open_state_db
from wardian.curator.host import choose_host_model
from wardian.providers.base import ModelInfo
from wardian.providers.catalog import ModelCatalog


def _add(cli: CliRunner, *extra: str) -> Result:
    return invoke(
        cli, "automation", "session-close", "add", "--blueprint", "memory-consolidation",
        "--name", "Consolidate", "--agent", "coder", "--boundary", "clear", *extra)


def test_curator_host_stores_the_small_model_of_the_agents_provider(
        cli: CliRunner, fake_cli: FakeCli) -> None:
    assert invoke(cli, "agent", "add", "coder", "--provider", "codex").exit_code == 0
    ModelCatalog(open_state_db()).refresh("codex", timeout_s=20)
    result = _add(cli, "--curator", "host", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    curator = doc["assignments"]["curator"]
    assert curator["target_type"] == "temporary_provider"
    assert curator["provider"] == "codex"
    assert curator["model"] == "gpt-5.1-codex-mini"
    assert "curator: codex gpt-5.1-codex-mini" in result.stderr
    shown = invoke(cli, "automation", "session-close", "show", doc["id"][:8])
    assert "curator=codex/gpt-5.1-codex-mini" in shown.stdout


def test_curator_host_needs_a_refreshed_catalog(cli: CliRunner, fake_cli: FakeCli) -> None:
    assert invoke(cli, "agent", "add", "coder", "--provider", "codex").exit_code == 0
    result = _add(cli, "--curator", "host")
    assert result.exit_code == 2, result.output
    assert "wardian agent models --provider codex --refresh" in result.stderr
    assert invoke(cli, "automation", "session-close", "list", "--json").stdout.strip() == "[]"


def test_curator_builtin_and_the_option_conflicts(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "coder", "--provider", "codex").exit_code == 0
    both = _add(cli, "--curator", "builtin", "--assignments", "{}")
    assert both.exit_code == 2 and "--curator" in both.stderr
    neither = _add(cli)
    assert neither.exit_code == 2 and "--curator" in neither.stderr
    odd = _add(cli, "--curator", "someone")
    assert odd.exit_code == 2 and "host" in odd.stderr
    ok = _add(cli, "--curator", "builtin", "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["assignments"]["curator"] == {
        "target_type": "temporary_provider", "provider": "builtin", "model": "curator-rules"}


def test_a_builtin_agent_has_no_host_model(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "coder", "--provider", "builtin").exit_code == 0
    result = _add(cli, "--curator", "host")
    assert result.exit_code == 2
    assert "--curator builtin" in result.stderr


def test_the_small_model_is_preferred_and_its_low_effort() -> None:
    models = [
        ModelInfo(id="claude-opus-9", efforts=["low", "medium", "high"], is_default=True),
        ModelInfo(id="claude-haiku-9", efforts=["low", "medium", "high"]),
    ]
    assert choose_host_model(models) == ("claude-haiku-9", "low")
    assert choose_host_model([ModelInfo(id="gemini-9-pro"), ModelInfo(id="gemini-9-flash")]) \
        == ("gemini-9-flash", None)
    # nothing small: the provider's default model, at its lowest effort
    assert choose_host_model(
        [ModelInfo(id="big-a"), ModelInfo(id="big-b", efforts=["medium", "high"],
                                          is_default=True)]) == ("big-b", "medium")
