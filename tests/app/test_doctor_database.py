"""`wardian doctor --check database` (issue 18): the configured URL, the postgres extra, the
server, the schemas' migrations and `verify()` on PostgreSQL; read-only; each problem exits
1 with its fix. The server is the session's throwaway cluster (`tests.pg_cluster`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner


def _database(cli: CliRunner, *also: str) -> tuple[int, list[dict[str, Any]]]:
    """The findings of the database check (and of the checks named in `also`)."""
    res = invoke(cli, "doctor", "--check", "database",
                 *(arg for name in also for arg in ("--check", name)), "--json")
    doc = json.loads(res.stdout)
    return res.exit_code, [f for entry in doc["checks"] for f in entry["findings"]]


def _problems(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f["status"] == "problem"]


def test_sqlite_installation_says_so(cli: CliRunner, wardian_home: Path) -> None:
    code, findings = _database(cli)
    assert code == 0
    assert [f["status"] for f in findings] == ["ok"]
    assert "SQLite files" in findings[0]["message"]


def test_a_bad_url_is_a_problem_with_its_fix(cli: CliRunner, wardian_home: Path) -> None:
    (wardian_home / "database.url").write_text("mysql://db.example/w\n")
    code, findings = _database(cli)
    (problem,) = _problems(findings)
    assert code == 1
    assert "database.url" in problem["message"] and "postgresql://" in problem["fix"]


def test_an_unreachable_server_is_a_problem_without_the_password(
        cli: CliRunner, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pg_cluster import _free_port

    monkeypatch.setenv("WARDIAN_DATABASE_URL",
                       f"postgresql://u:s3cret@127.0.0.1:{_free_port()}/w")
    code, findings = _database(cli)
    (problem,) = _problems(findings)
    assert code == 1
    assert "no PostgreSQL server can be reached" in problem["message"]
    assert "pg_isready" in problem["fix"]
    assert "s3cret" not in json.dumps(findings)


def test_the_missing_extra_is_named(cli: CliRunner, wardian_home: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", "postgresql://u@127.0.0.1/w")
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    code, findings = _database(cli)
    (problem,) = _problems(findings)
    assert code == 1
    assert "the postgres extra" in problem["message"] and "not installed" in problem["message"]
    assert "pip install 'wardian[postgres]'" in problem["fix"]


def test_a_new_database_is_a_warning_and_is_left_untouched(
        cli: CliRunner, wardian_home: Path, pg_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    code, findings = _database(cli)
    assert code == 0
    assert [f["status"] for f in findings][:2] == ["ok", "warning"]
    assert "PostgreSQL" in findings[0]["message"]
    assert "not created yet" in findings[1]["message"]
    with psycopg.connect(pg_url) as conn:  # the doctor created nothing
        assert conn.execute("SELECT COUNT(*) FROM pg_namespace WHERE nspname IN"
                            " ('memory', 'state')").fetchone() == (0,)


def test_used_database_verifies_and_reports_what_is_wrong(
        cli: CliRunner, wardian_home: Path, pg_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    agent = invoke(cli, "agent", "add", "coder", "--provider", "builtin", "--json")
    assert agent.exit_code == 0, agent.output
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    agent_id = json.loads(agent.stdout)["id"]
    record_id = store.save(agent_id, "Deploys go through the blue pipeline",
                           evidence="the operator said so", scope=Scope("agent"),
                           actor="test").id
    code, findings = _database(cli, "memory-history")
    assert code == 0, findings
    assert not _problems(findings)
    assert any("none newer than this Wardian" in f["message"] for f in findings)
    assert any("1 record(s)" in f["message"] and "match" in f["message"] for f in findings)

    with psycopg.connect(pg_url, autocommit=True) as conn:
        # A change that bypassed Wardian (no revision), and a migration from a newer one.
        conn.execute("SET search_path TO memory")  # the trigger's text search configuration
        conn.execute("UPDATE memory.records SET text = 'edited behind its back'"
                     " WHERE id = %s", (record_id,))
        conn.execute("INSERT INTO state.schema_migrations (component, version, applied_at,"
                     " name) VALUES ('runs', 99, 'now', 'from_the_future')")
    code, findings = _database(cli, "memory-history")
    problems = _problems(findings)
    assert code == 1
    assert {p["subject"] for p in problems} == {"runs", f"record {record_id}"}
    assert all(p["fix"] for p in problems)
