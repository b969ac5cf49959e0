"""The model catalog in state.db and `wardian agent models` (issue 5 "Model catalog")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import invoke
from tests.providers.conftest import FakeCli
from wardian.config import open_state_db, state_db_path
from wardian.errors import UsageError, ValidationError
from wardian.providers.catalog import ModelCatalog
from wardian.providers.errors import (
    CatalogNotRefreshed,
    DiscoveryFailed,
    UnknownModel,
    UnknownProvider,
    UnsupportedEffort,
)


def test_refresh_stores_the_list_with_its_fetch_time(fake_cli: FakeCli) -> None:
    entry = ModelCatalog(open_state_db()).refresh("codex", timeout_s=20)
    assert [m.id for m in entry.models] == ["gpt-5.2-codex", "gpt-5.1-codex-mini"]
    assert entry.fetched_at and entry.fetched_at.endswith("Z") and entry.last_error is None
    row = sqlite3.connect(state_db_path()).execute(
        "SELECT provider, fetched_at FROM model_catalog").fetchall()
    assert row == [("codex", entry.fetched_at)]


def test_failed_refresh_keeps_the_last_good_list(fake_cli: FakeCli) -> None:
    catalog = ModelCatalog(open_state_db())
    good = catalog.refresh("codex", timeout_s=20)
    fake_cli.scenario("discovery_fail")
    entry = catalog.refresh("codex", timeout_s=20)
    assert [m.id for m in entry.models] == [m.id for m in good.models]
    assert entry.fetched_at == good.fetched_at
    assert entry.last_error and "app-server exited" in entry.last_error
    # the kept list still validates
    catalog.validate_selection("codex", "gpt-5.2-codex", "xhigh")


def test_first_refresh_failure_fails_closed(fake_cli: FakeCli) -> None:
    fake_cli.scenario("discovery_hang")
    with pytest.raises(DiscoveryFailed, match="within 1 s"):
        ModelCatalog(open_state_db()).refresh("codex", timeout_s=1)
    with pytest.raises(CatalogNotRefreshed):
        ModelCatalog(open_state_db()).validate_selection("codex", "gpt-5.2-codex", None)


def test_validation_errors_say_what_to_run(fake_cli: FakeCli) -> None:
    catalog = ModelCatalog(open_state_db())
    with pytest.raises(CatalogNotRefreshed) as never:
        catalog.validate_selection("codex", "gpt-5.2-codex", "high")
    assert "run `wardian agent models --provider codex --refresh`" in str(never.value)
    assert never.value.exit_code == 2
    catalog.refresh("codex", timeout_s=20)
    with pytest.raises(UnknownModel, match="'gpt-9' is not in the codex catalog") as unknown:
        catalog.validate_selection("codex", "gpt-9", None, path="$.curator")
    assert unknown.value.path == "$.curator.model" and isinstance(unknown.value, ValidationError)
    with pytest.raises(UnsupportedEffort, match=r"supported: medium, high"):
        catalog.validate_selection("codex", "gpt-5.1-codex-mini", "xhigh")
    with pytest.raises(UnknownProvider) as bad:
        catalog.validate_selection("codx", "gpt-5.2-codex", None)
    assert bad.value.exit_code == 2 and "known providers: anthropic, builtin" in str(bad.value)
    selected = catalog.validate_selection("codex", "gpt-5.2-codex", "xhigh")
    assert selected is not None and selected.id == "gpt-5.2-codex"


def test_gemini_effort_is_rejected_by_the_catalog(fake_cli: FakeCli) -> None:
    catalog = ModelCatalog(open_state_db())
    catalog.refresh("gemini")
    with pytest.raises(UnsupportedEffort, match="no effort levels"):
        catalog.validate_selection("gemini", "gemini-2.5-pro", "high")
    catalog.validate_selection("gemini", "gemini-2.5-pro", None)


def test_builtin_is_static_and_always_refreshed() -> None:
    catalog = ModelCatalog(open_state_db())
    info = catalog.validate_selection("builtin", "curator-rules", None)
    assert info is not None and info.efforts == []
    with pytest.raises(UnsupportedEffort):
        catalog.validate_selection("builtin", "curator-rules", "high")
    with pytest.raises(UnknownModel):
        catalog.validate_selection("builtin", "gpt-5", None)


def test_cli_lists_refreshes_and_reports_a_failed_refresh(cli: CliRunner,
                                                          fake_cli: FakeCli) -> None:
    never = invoke(cli, "agent", "models", "--provider", "codex")
    assert never.exit_code == 2
    assert "--refresh" in never.stderr
    ok = invoke(cli, "agent", "models", "--provider", "codex", "--refresh", "--json")
    assert ok.exit_code == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["models"][0]["id"] == "gpt-5.2-codex" and doc["last_error"] is None
    table = invoke(cli, "agent", "models", "--provider", "codex")
    assert table.exit_code == 0 and "gpt-5.1-codex-mini" in table.stdout
    assert "medium, high" in table.stdout
    fake_cli.scenario("discovery_fail")
    failed = invoke(cli, "agent", "models", "--provider", "codex", "--refresh", "--json")
    assert failed.exit_code == 1
    assert json.loads(failed.stdout)["models"] == doc["models"]
    assert "the last refresh failed" in failed.stderr
    assert f"fetched at {doc['fetched_at']}" in failed.stderr


def test_cli_unknown_provider_exit_2(cli: CliRunner) -> None:
    result = invoke(cli, "agent", "models", "--provider", "nope")
    assert result.exit_code == 2
    assert "known providers:" in result.stderr


def test_cli_builtin(cli: CliRunner) -> None:
    result = invoke(cli, "agent", "models", "--provider", "builtin", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["models"][0]["id"] == "curator-rules"


def test_unknown_provider_is_a_usage_error() -> None:
    assert issubclass(UnknownProvider, UsageError)


@pytest.mark.parametrize(("provider", "how_to_fix"), [
    ("codex", "install the codex CLI"),
    ("opencode", "install the opencode CLI"),
    ("openai", "set OPENAI_API_KEY"),
    ("anthropic", "set ANTHROPIC_API_KEY"),
])
def test_cli_refresh_failure_says_how_to_fix_it(cli: CliRunner, monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path, provider: str,
                                                how_to_fix: str) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    result = invoke(cli, "agent", "models", "--provider", provider, "--refresh")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {provider}: "), result.stderr
    assert f"{provider}: {provider}:" not in result.stderr, "the provider is named once"
    assert how_to_fix in result.stderr
    assert "Traceback" not in result.stderr


def _fail_a_refresh(cli: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Refresh codex with nothing on PATH (it fails); return the failed attempt's time."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert invoke(cli, "agent", "models", "--provider", "codex", "--refresh").exit_code == 1
    entry = ModelCatalog(open_state_db()).get("codex")
    assert entry is not None and entry.fetched_at is None and entry.last_attempt_at
    return entry.last_attempt_at


NOT_INSTALLED = ("the `codex` command was not found on PATH (install the codex CLI and make "
                 "sure `codex` runs in this shell, then run "
                 "`wardian agent models --provider codex --refresh`)")


def test_cli_list_after_only_a_failed_refresh_says_never_fetched_and_why(
        cli: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    when = _fail_a_refresh(cli, monkeypatch, tmp_path)
    for args in ((), ("--json",)):
        result = invoke(cli, "agent", "models", "--provider", "codex", *args)
        assert result.exit_code == 2, result.output
        assert "None" not in result.output
        assert result.stderr == (
            f"Error: the model catalog of codex was never fetched: its last refresh failed "
            f"at {when}: {NOT_INSTALLED}\n")


def test_cli_assignment_after_a_failed_refresh_says_it_failed_and_why(
        cli: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert invoke(cli, "agent", "add", "coder", "--provider", "codex").exit_code == 0
    when = _fail_a_refresh(cli, monkeypatch, tmp_path)
    result = invoke(
        cli, "automation", "session-close", "add", "--blueprint", "memory-consolidation",
        "--name", "Consolidate", "--agent", "coder", "--boundary", "clear",
        "--assignments", '{"curator": {"target_type": "temporary_provider", '
        '"provider": "codex", "model": "gpt-5.2-codex"}}')
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "Error: --assignments: curator: the model catalog of codex was never fetched: its "
        f"last refresh failed at {when}: {NOT_INSTALLED}\n")
    with pytest.raises(CatalogNotRefreshed) as caught:
        ModelCatalog(open_state_db()).validate_selection("codex", "gpt-5.2-codex", None)
    assert caught.value.exit_code == 2


def test_cli_list_after_a_later_failed_refresh_says_when_and_how_to_retry(
        cli: CliRunner, fake_cli: FakeCli) -> None:
    good = ModelCatalog(open_state_db()).refresh("codex", timeout_s=20)
    fake_cli.scenario("discovery_fail")
    failed = ModelCatalog(open_state_db()).refresh("codex", timeout_s=20)
    result = invoke(cli, "agent", "models", "--provider", "codex")
    assert result.exit_code == 0
    assert f"fetched {good.fetched_at}" in result.stdout
    assert f"the last refresh failed at {failed.last_attempt_at}: " in result.stderr
    assert f"showing the list fetched at {good.fetched_at}" in result.stderr
    assert "retry with `wardian agent models --provider codex --refresh`" in result.stderr
