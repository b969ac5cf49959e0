"""Agents and settings around memory (issue 2 points 2-3): disabled by default, settings
errors exit 2, `agent remove` refuses while records exist unless told what to do."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import invoke
from typer.testing import CliRunner


def _agent_with_records(cli: CliRunner, name: str, count: int) -> str:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    agent_id = str(json.loads(
        invoke(cli, "agent", "add", name, "--provider", "claude", "--json").stdout)["id"])
    store = MemoryStore(open_memory_db())
    for i in range(count):
        store.save(agent_id, f"{name} {i}", evidence="e", scope=Scope.agent(),
                   actor=f"agent:{agent_id}")
    return agent_id


def _count(home: Path, agent_id: str) -> int:
    conn = sqlite3.connect(home / "memory.db")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM records WHERE agent_id = ?",
                                (agent_id,)).fetchone()[0])
    finally:
        conn.close()


def test_memory_is_disabled_by_default(cli: CliRunner) -> None:
    result = invoke(cli, "settings", "get", "agent_memory.enabled")
    assert result.exit_code == 0 and result.stdout.strip() == "false"
    assert invoke(cli, "settings", "get", "memory.startup_budget_chars").stdout.strip() == "12000"


def test_settings_errors_exit_2_naming_valid_keys_and_values(cli: CliRunner) -> None:
    unknown = invoke(cli, "settings", "set", "agent_memory.enable", "true")
    assert unknown.exit_code == 2 and "agent_memory.enabled" in unknown.stderr
    bad = invoke(cli, "settings", "set", "agent_memory.enabled", "maybe")
    assert bad.exit_code == 2 and "true|false" in bad.stderr
    budget = invoke(cli, "settings", "set", "memory.startup_budget_chars", "1999")
    assert budget.exit_code == 2 and "at least 2000" in budget.stderr
    assert invoke(cli, "settings", "set", "memory.startup_budget_chars", "2000").exit_code == 0
    assert invoke(cli, "settings", "get", "nope").exit_code == 2


def test_agent_remove_refuses_while_records_exist(cli: CliRunner, wardian_home: Path) -> None:
    _agent_with_records(cli, "ada", 3)
    refused = invoke(cli, "agent", "remove", "ada")
    assert refused.exit_code == 2
    assert "3 memory record(s)" in refused.stderr and "--keep-records" in refused.stderr
    assert invoke(cli, "agent", "show", "ada").exit_code == 0
    both = invoke(cli, "agent", "remove", "ada", "--keep-records", "--delete-records")
    assert both.exit_code == 2


def test_agent_remove_keep_records(cli: CliRunner, wardian_home: Path) -> None:
    agent_id = _agent_with_records(cli, "ada", 2)
    result = invoke(cli, "agent", "remove", "ada", "--keep-records")
    assert result.exit_code == 0 and "2 record(s) kept" in result.stdout
    assert invoke(cli, "agent", "show", "ada").exit_code == 1
    assert _count(wardian_home, agent_id) == 2
    # Kept records stay inspectable by the operator, by the old agent id or its prefix.
    for ref in (agent_id, agent_id[:8]):
        listed = invoke(cli, "garden", "memory", "list", "--agent", ref, "--json")
        assert listed.exit_code == 0, listed.output
        doc = json.loads(listed.stdout)
        assert doc["agent"] == {"id": agent_id, "name": "(removed agent)"}
        assert sorted(r["text"] for r in doc["records"]) == ["ada 0", "ada 1"]
    loaded = invoke(cli, "garden", "memory", "loaded", "--agent", agent_id[:8])
    assert loaded.exit_code == 0 and "(removed agent)" in loaded.stdout
    ghost = invoke(cli, "garden", "memory", "list", "--agent", "ghost")
    assert ghost.exit_code == 1 and "no agent named or with id 'ghost'" in ghost.stderr
    nobody = "eeee" if agent_id.startswith("ffff") else "ffff"
    assert invoke(cli, "garden", "memory", "list", "--agent", nobody).exit_code == 1


def test_agent_remove_delete_records(cli: CliRunner, wardian_home: Path) -> None:
    from wardian.memory.db import open_memory_db
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.store import MemoryStore

    agent_id = _agent_with_records(cli, "ada", 2)
    other = _agent_with_records(cli, "bo", 1)
    store = MemoryStore(open_memory_db())
    for owner in (agent_id, other):  # a Memory loaded context repeats the records' text
        LoadedEvents(store.conn).record(
            owner, context=f"- [12345678] stable · agent: text of {owner}", record_ids=[],
            omitted_count=0, pid=None, process_started_at=None, workspace=None,
            source="exec",
        )
    result = invoke(cli, "agent", "remove", "ada", "--delete-records")
    assert result.exit_code == 0 and "2 record(s) deleted" in result.stdout
    assert _count(wardian_home, agent_id) == 0
    assert _count(wardian_home, other) == 1
    conn = sqlite3.connect(wardian_home / "memory.db")
    try:
        orphans = conn.execute("SELECT COUNT(*) FROM revisions WHERE record_id NOT IN"
                               " (SELECT id FROM records)").fetchone()[0]
        loaded = [r[0] for r in conn.execute("SELECT agent_id FROM loaded_events")]
        texts = conn.execute("SELECT COUNT(*) FROM records_fts WHERE records_fts MATCH 'ada'"
                             ).fetchone()[0]
    finally:
        conn.close()
    assert orphans == 0
    assert loaded == [other]
    assert texts == 0  # the search index forgot them too


def test_agent_without_records_is_removed_plainly(cli: CliRunner) -> None:
    invoke(cli, "agent", "add", "ada", "--provider", "claude")
    assert invoke(cli, "agent", "remove", "ada").exit_code == 0
