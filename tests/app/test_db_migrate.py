"""`wardian db migrate --to postgresql://…` (issue 18): a SQLite installation copied into
PostgreSQL losslessly (ids, revisions, sources, receipts, capabilities, agents, invokers,
runs), verified by counts and `MemoryStore.verify()`; clear errors; nothing half-written."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian._db import NamedMigration, StateDB, close_databases
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope, Source
from wardian.memory.store import MemoryStore


def _installation(home: Path) -> dict[str, Any]:
    """A small but complete SQLite installation; what it holds, to compare afterwards."""
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore
    from wardian.invokers.store import InvokerStore
    from wardian.memory.batch import CommitBatch
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.consolidation import commit_batch
    from wardian.runtime.agents import AgentRegistry

    agent = AgentRegistry(open_state_db()).add("alice", provider="codex")
    store = MemoryStore(open_memory_db())
    kept = store.save(agent.id, "Use uv, not pip", evidence="user: use uv", kind="stable",
                      scope=Scope("workspace", str(home)), actor="test",
                      sources=[Source("file", "notes.md", True), Source("url", "https://x")])
    store.update(agent.id, kept.id, text="Use uv for every install", actor="test")
    gone = store.save(agent.id, "Deploy on Fridays", evidence="user: fridays", actor="test",
                      scope=Scope.agent())
    store.remove(agent.id, gone.id, actor="test", reason="stale")
    commit_batch(store, CommitBatch.model_validate({
        "agent_id": agent.id, "workspace": "/repo", "idempotency_key": "run:1", "cursor": 3,
        "operations": [{"op": "save", "text": "Run the linters", "evidence": "run linters"}],
    }), principal_agent_id=agent.id, actor="run:1", archive_text="user: run linters\n")
    CapabilityStore(store.conn).mint(agent.id, pid=4242, started_at=1733051234.123456,
                                     workspace=None)
    invoker = InvokerStore(open_state_db()).add(
        "session-close", name="consolidate", blueprint_id="bp", agent_id=agent.id,
        assignments={})
    runs = RunStore(open_state_db(), recover=False)
    run, _ = runs.create_run(blueprint_id="bp", agent_id=agent.id, assignments={}, inputs={},
                          invocation={"trigger": "manual"}, idempotency_key="k-1",
                          invoker_id=invoker.id)
    runs.add_event(run.id, "note", {"n": 1})
    return {"agent": agent.id, "records": {r.id: r for r in store.list(agent.id)},
            "history": {i: store.history(i, agent_id=agent.id) for i in (kept.id, gone.id)},
            "invoker": invoker.id, "run": run.id}


def _counts(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables"
            " WHERE table_schema IN ('memory', 'state') AND table_name NOT IN"
            " ('schema_migrations', 'memory_version')").fetchall()
        counts = {}
        for (table,) in tables:
            row = conn.execute(f"SELECT COUNT(*) FROM {table}".encode()).fetchone()
            assert row is not None
            counts[table] = int(row[0])
        return counts


def test_a_sqlite_installation_moves_whole_and_verified(
        cli: CliRunner, wardian_home: Path, pg_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = _installation(wardian_home)
    done = invoke(cli, "db", "migrate", "--to", pg_url, "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["tables"]["memory.records"] == 3 and report["records_verified"] == 3
    assert report["tables"]["memory.revisions"] == 5  # save+update, save+remove, save
    assert report["tables"]["state.runs"] == 1 and report["tables"]["state.run_events"] >= 1
    assert report["tables"]["memory.consolidation_receipts"] == 1
    assert _counts(pg_url) == {k: v for k, v in report["tables"].items()} | {
        k: 0 for k in _counts(pg_url) if k not in report["tables"]}

    # The same installation, now read from PostgreSQL.
    close_databases(pg_url)
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore
    from wardian.invokers.store import InvokerStore
    from wardian.memory.capabilities import CapabilityStore
    from wardian.runtime.agents import AgentRegistry

    store = MemoryStore(open_memory_db())
    assert store.db.dialect == "postgres" and store.verify() == []
    assert {r.id: r for r in store.list(before["agent"])} == before["records"]
    for record_id, history in before["history"].items():
        assert store.history(record_id, agent_id=before["agent"]) == history
    assert AgentRegistry(open_state_db()).get("alice").id == before["agent"]
    assert InvokerStore(open_state_db()).get(before["invoker"]).id == before["invoker"]
    assert RunStore(open_state_db(), recover=False).get(before["run"]).idempotency_key == "k-1"
    assert [r.id for r in store.index.recall(before["agent"], "linters")]
    row = store.conn.execute("SELECT process_started_at FROM capabilities").fetchone()
    assert row[0] == 1733051234.123456  # every bit of the start time survives
    del CapabilityStore
    # New rows continue after the copied ids (identity sequences moved on).
    assert store.save(before["agent"], "After the move", evidence="e", actor="t",
                      scope=Scope.agent()).id

    # A second migration into the now-full database is refused and changes nothing.
    monkeypatch.delenv("WARDIAN_DATABASE_URL")
    counts = _counts(pg_url)
    again = invoke(cli, "db", "migrate", "--to", pg_url)
    assert again.exit_code == 4 and "already holds Wardian data" in again.stderr
    assert _counts(pg_url) == counts


def test_a_failed_copy_leaves_the_target_empty(cli: CliRunner, wardian_home: Path,
                                               pg_url: str, pg_cluster: Any) -> None:
    _installation(wardian_home)
    # A table only the source has (another Wardian build's component): the copy of the
    # state schema fails after memory was copied; all of it rolls back.
    source = StateDB.open(wardian_home / "state.db")
    from wardian._db import migrate_component

    migrate_component(source.conn, "elsewhere", [NamedMigration(
        "create_elsewhere", "CREATE TABLE elsewhere (n INTEGER);\nINSERT INTO elsewhere"
        " VALUES (1);")])
    failed = invoke(cli, "db", "migrate", "--to", pg_url)
    assert failed.exit_code == 1 and "state.elsewhere" in failed.stderr, failed.output
    # Exactly what migrating an empty database leaves (some migrations seed a row).
    from wardian.app.state_schema import migrate_every_component
    from wardian.memory.db import MemoryDB

    fresh = pg_cluster.create_database()
    try:
        MemoryDB.open_at(fresh)
        migrate_every_component(StateDB.open_at(fresh))
        assert _counts(pg_url) == _counts(fresh)
        assert _counts(pg_url)["memory.records"] == 0
    finally:
        close_databases(fresh)
        pg_cluster.drop_database(fresh)


def test_bad_and_unreachable_urls_are_clear(cli: CliRunner, wardian_home: Path) -> None:
    _installation(wardian_home)
    bad = invoke(cli, "db", "migrate", "--to", "mysql://u@h/db")
    assert bad.exit_code == 2 and "not a PostgreSQL URL" in bad.stderr
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = invoke(cli, "db", "migrate", "--to",
                  f"postgresql://u:secret@127.0.0.1:{port}/w?connect_timeout=2")
    assert down.exit_code == 1 and "cannot connect to PostgreSQL" in down.stderr
    assert "pg_isready" in down.stderr and "secret" not in down.stderr


def _lazy_tables_created(cli: CliRunner, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the commands that create their tables on first use: a recovery sweep over a
    transcript (recovery marks, automation sessions), the model catalog, the session-close
    event queue and fire log, schedules, archives, maintenance previews."""
    for name, folder in (("CODEX_HOME", "codex"), ("CLAUDE_CONFIG_DIR", "claude"),
                         ("GEMINI_CLI_HOME", "gemini")):
        monkeypatch.setenv(name, str(tmp / folder))
    work = (tmp / "work").resolve()
    work.mkdir()
    assert invoke(cli, "agent", "add", "bob", "--provider", "codex", "--workspace",
                  str(work)).exit_code == 0
    assert invoke(cli, "settings", "set", "conversation_logging.enabled", "true"
                  ).exit_code == 0
    rollout = (tmp / "codex" / "sessions" / "2026" / "01" / "02"
               / "rollout-2026-01-02T03-04-05-0a1b2c3d-0000-4000-8000-00000000abcd.jsonl")
    rollout.parent.mkdir(parents=True)
    rollout.write_text(json.dumps({"type": "session_meta", "payload": {
        "id": "0a1b2c3d-0000-4000-8000-00000000abcd", "cwd": str(work)}}) + "\n",
        encoding="utf-8")
    swept = invoke(cli, "session", "recover", "--json")
    assert swept.exit_code == 0, swept.output
    assert json.loads(swept.stdout)["checked"] == 1
    bob = json.loads(invoke(cli, "agent", "show", "bob", "--json").stdout)["id"]
    plan = tmp / "plan.json"
    plan.write_text(json.dumps({
        "schema_version": 1, "plan_id": "p-1", "agent_id": bob, "idempotency_key": "k-1",
        "operations": [{"op": "create", "client_key": "c1", "text": "Prefer tabs",
                        "kind": "stable", "scope": {"kind": "agent"},
                        "evidence_excerpt": "user: tabs"}]}), encoding="utf-8")
    previewed = invoke(cli, "garden", "maintain", "preview", str(plan), "--agent", "bob")
    assert previewed.exit_code == 0, previewed.output
    for command in (("agent", "models", "--provider", "codex"),
                    ("automation", "session-close", "history", "consolidate"),
                    ("automation", "schedule", "list"), ("conversation", "list")):
        invoke(cli, *command)  # what it prints does not matter: its tables now exist


def _sqlite_counts(path: Path) -> dict[str, int]:
    import sqlite3

    from wardian._pg import sqlite_tables

    with sqlite3.connect(path) as conn:
        return {table: int(conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
                for table in sqlite_tables(conn)}


def test_every_table_that_exists_moves(cli: CliRunner, wardian_home: Path, pg_url: str,
                                       tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian.app.state_schema import state_components

    _installation(wardian_home)
    _lazy_tables_created(cli, tmp_path, monkeypatch)
    import sqlite3

    with sqlite3.connect(wardian_home / "state.db") as conn:
        used = {str(r[0]) for r in conn.execute("SELECT component FROM schema_migrations")}
    assert used == set(state_components())  # every component's tables exist in the source
    want = {f"memory.{t}": n for t, n in _sqlite_counts(wardian_home / "memory.db").items()}
    want |= {f"state.{t}": n for t, n in _sqlite_counts(wardian_home / "state.db").items()}
    assert want["state.transcript_marks"] == 1 and "state.automation_launches" in want
    done = invoke(cli, "db", "migrate", "--to", pg_url, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["tables"] == want
    got = _counts(pg_url)
    assert {k: got[k] for k in want} == want
