"""`wardian garden memory …`: the operator's read-only view across agents (issue 2 point 7).

Records are written by agents (capabilities minted with the real store, bound to this live
process); the operator commands run with no managed variables in the environment.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner


def _agent(cli: CliRunner, name: str) -> tuple[str, dict[str, str]]:
    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    agent_id = str(json.loads(
        invoke(cli, "agent", "add", name, "--provider", "claude", "--json").stdout)["id"])
    me = current()
    store = MemoryStore(open_memory_db())
    token = CapabilityStore(store.conn).mint(
        agent_id, pid=me.pid, started_at=me.started_at, workspace=None)
    return agent_id, {"WARDIAN_AGENT_ID": agent_id, "WARDIAN_CAPABILITY": token}


def _save(cli: CliRunner, env: dict[str, str], text: str) -> dict[str, str]:
    result = invoke(cli, "memory", "save", text, "--evidence", "e", "--json", env=env)
    assert result.exit_code == 0, result.output
    doc: dict[str, str] = json.loads(result.stdout)
    return doc


@pytest.fixture
def two_agents(cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    ada, ada_env = _agent(cli, "ada")
    bo, bo_env = _agent(cli, "bo")
    kept = _save(cli, ada_env, "Ada keeps this")
    gone = _save(cli, ada_env, "Ada removes this")
    assert invoke(cli, "memory", "remove", gone["id"], "--reason", "stale",
                  env=ada_env).exit_code == 0
    other = _save(cli, bo_env, "Bo's own memory")
    return {"ada": ada, "bo": bo, "kept": kept["id"], "gone": gone["id"], "other": other["id"]}


def test_list_shows_ids_and_current_revisions_per_agent(
    cli: CliRunner, two_agents: dict[str, str]
) -> None:
    active = json.loads(invoke(cli, "garden", "memory", "list", "--agent", "ada",
                               "--json").stdout)
    assert active["agent"]["id"] == two_agents["ada"]
    assert [r["id"] for r in active["records"]] == [two_agents["kept"]]
    assert all(r["current_revision_id"] for r in active["records"])
    everything = json.loads(invoke(cli, "garden", "memory", "list", "--agent",
                                   two_agents["ada"][:8], "--all", "--json").stdout)
    assert {r["id"] for r in everything["records"]} == {two_agents["kept"], two_agents["gone"]}
    table = invoke(cli, "garden", "memory", "list", "--agent", "bo")
    assert table.exit_code == 0
    assert two_agents["other"] in table.stdout


def test_show_and_history_across_agents(cli: CliRunner, two_agents: dict[str, str]) -> None:
    shown = json.loads(invoke(cli, "garden", "memory", "show", two_agents["other"][:8],
                              "--json").stdout)
    assert shown["agent_id"] == two_agents["bo"] and shown["current_revision_id"]
    history = json.loads(invoke(cli, "garden", "memory", "history", two_agents["gone"],
                                "--json").stdout)
    assert [r["snapshot"]["status"] for r in history["revisions"]] == ["active", "removed"]
    assert history["current_revision_id"] == history["revisions"][-1]["revision_id"]
    human = invoke(cli, "garden", "memory", "history", two_agents["gone"])
    assert human.exit_code == 0 and "stale" in human.stdout
    assert invoke(cli, "garden", "memory", "show", "ffffffff-none").exit_code == 1
    assert invoke(cli, "garden", "memory", "list", "--agent", "nobody").exit_code == 1


def test_garden_is_read_only(
    cli: CliRunner, two_agents: dict[str, str], wardian_home: Path
) -> None:
    def snapshot() -> list[tuple[object, ...]]:
        conn = sqlite3.connect(wardian_home / "memory.db")
        try:
            return [tuple(r) for r in conn.execute(
                "SELECT * FROM records UNION ALL SELECT revision_id, record_id, seq,"
                " snapshot_json, actor, reason, created_at, '', '', '', '', '', '' FROM revisions"
                " ORDER BY 1")]
        finally:
            conn.close()

    before = snapshot()
    for args in (["list", "--agent", "ada", "--all"], ["show", two_agents["kept"]],
                 ["history", two_agents["kept"]], ["loaded", "--agent", "ada"]):
        assert invoke(cli, "garden", "memory", *args).exit_code == 0
    assert snapshot() == before


@pytest.mark.parametrize("var", ["WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY",
                                 "WARDIAN_MEMORY_CONTEXT", "WARDIAN_LAUNCH_ID"])
def test_refused_inside_a_managed_process(
    cli: CliRunner, two_agents: dict[str, str], var: str
) -> None:
    for args in (["memory", "list", "--agent", "ada"], ["memory", "show", two_agents["kept"]],
                 ["memory", "history", two_agents["kept"]],
                 ["memory", "loaded", "--agent", "ada"]):
        result = invoke(cli, "garden", *args, env={var: "x"})
        assert result.exit_code == 3, (args, result.output)
        assert "managed process" in result.stderr


def test_loaded_with_no_events(cli: CliRunner, two_agents: dict[str, str]) -> None:
    out = invoke(cli, "garden", "memory", "loaded", "--agent", "ada")
    assert out.exit_code == 0 and "no Memory loaded events" in out.stdout
    assert json.loads(invoke(cli, "garden", "memory", "loaded", "--agent", "ada",
                             "--json").stdout)["events"] == []


def test_maintain_group_is_registered(cli: CliRunner) -> None:
    result = invoke(cli, "garden", "--help")
    assert result.exit_code == 0
    assert "maintain" in result.stdout and "memory" in result.stdout


@pytest.mark.parametrize("command", ["show", "history"])
@pytest.mark.parametrize("record_id", ["0123abcd", "not-an-id"])
def test_not_found_names_the_operators_list_command(
    cli: CliRunner, command: str, record_id: str
) -> None:
    """The hint is the operator's command (`garden memory list --agent`), not the agent's."""
    result = invoke(cli, "garden", "memory", command, record_id)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: memory {record_id!r} not found (list an agent's records with "
        "`wardian garden memory list --agent NAME`)\n")
    empty = invoke(cli, "garden", "memory", command, "")  # a usage error, same hint
    assert empty.exit_code == 2
    assert empty.stderr == ("Error: the record id is empty (list an agent's records with "
                            "`wardian garden memory list --agent NAME`)\n")
