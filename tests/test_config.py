"""Data dir and typed settings, through the library and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import invoke
from wardian.config import (
    SETTINGS,
    SettingsStore,
    data_dir,
    memory_db_path,
    open_state_db,
    state_db_path,
)
from wardian.errors import UsageError


def test_wardian_home_moves_every_path(wardian_home: Path) -> None:
    assert data_dir() == wardian_home
    assert memory_db_path().parent == wardian_home
    assert state_db_path().parent == wardian_home


def test_without_wardian_home_the_platform_dir_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("WARDIAN_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert "wardian" in str(data_dir()).lower()


def test_memory_and_logging_are_off_by_default() -> None:
    store = SettingsStore(open_state_db())
    assert store.get("agent_memory.enabled") is False
    assert store.get("conversation_logging.enabled") is False
    assert store.get("memory.startup_budget_chars") == 12_000


def test_set_get_list_through_the_cli(cli) -> None:  # type: ignore[no-untyped-def]
    result = invoke(cli, "settings", "set", "agent_memory.enabled", "true")
    assert result.exit_code == 0, result.output
    assert invoke(cli, "settings", "get", "agent_memory.enabled").output.strip() == "true"
    listed = json.loads(invoke(cli, "settings", "list", "--json").output)
    assert {item["key"] for item in listed} == set(SETTINGS)
    assert next(i for i in listed if i["key"] == "agent_memory.enabled")["value"] is True


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("set", "nope.key", "1"), "unknown setting 'nope.key' (valid keys: agent_memory.enabled"),
        (("get", "nope.key"), "unknown setting 'nope.key'"),
        (("set", "agent_memory.enabled", "maybe"), "valid values: true|false"),
        (("set", "memory.startup_budget_chars", "0"), "expected at least 2000 characters"),
        (("set", "memory.startup_budget_chars", "1999"), "valid values: integer >= 2000"),
        (("set", "memory.startup_budget_chars", "12k"), "expected a whole number"),
        (("set", "providers.openai.base_url", "ftp://x"), "expected an http:// or https:// URL"),
    ],
)
def test_bad_keys_and_values_are_usage_errors(cli, args, expected) -> None:  # type: ignore[no-untyped-def]
    result = invoke(cli, "settings", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ")
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_per_agent_override_only_for_per_agent_keys(cli) -> None:  # type: ignore[no-untyped-def]
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    ok = invoke(cli, "settings", "set", "conversation_logging.enabled", "true", "--agent", "ada")
    assert ok.exit_code == 0, ok.output
    assert invoke(cli, "settings", "get", "conversation_logging.enabled").output.strip() == "false"
    got = invoke(cli, "settings", "get", "conversation_logging.enabled", "--agent", "ada")
    assert got.output.strip() == "true"
    bad = invoke(cli, "settings", "set", "agent_memory.enabled", "true", "--agent", "ada")
    assert bad.exit_code == 2 and "no per-agent override" in bad.stderr


def test_store_rejects_unknown_key_directly() -> None:
    with pytest.raises(UsageError):
        SettingsStore(open_state_db()).set("x", "1")
