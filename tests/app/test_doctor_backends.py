"""`wardian doctor` reads the database the installation uses: on PostgreSQL its settings,
invokers, runs and memory records are checked there (not in local SQLite files), and the
doctor writes nothing on either backend."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.app.test_doctor import write_tick
from tests.conftest import invoke
from typer.testing import CliRunner


def _doctor(cli: CliRunner) -> tuple[int, dict[str, list[dict[str, Any]]]]:
    res = invoke(cli, "doctor", "--json")
    doc = json.loads(res.stdout)
    return res.exit_code, {c["name"]: c["findings"] for c in doc["checks"]}


def _row_counts() -> dict[str, int]:
    """Rows per table of both databases, read through Wardian's own connections."""
    from wardian._db import StateDB
    from wardian.config import memory_db_path, state_db_path
    from wardian.memory.db import MemoryDB

    counts = {}
    for db, tables in ((MemoryDB.open(memory_db_path()), ("records", "revisions")),
                       (StateDB.open(state_db_path()),
                        ("settings", "agents", "invokers", "runs", "schema_migrations"))):
        for table in tables:
            counts[f"{db.schema}.{table}"] = int(
                db.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    return counts


def test_doctor_checks_the_configured_database(cli: CliRunner, wardian_home: Path,
                                                backend: str) -> None:
    from wardian._db import StateDB
    from wardian.config import open_state_db, state_db_path
    from wardian.engine.runs import RunStore
    from wardian.invokers.store import InvokerStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    write_tick()
    assert invoke(cli, "settings", "set", "conversation_logging.enabled", "true"
                  ).exit_code == 0
    agent = AgentRegistry(open_state_db()).add("ada", provider="claude")
    store = MemoryStore(open_memory_db())
    for text in ("Prefer small commits", "Run the formatter before pushing"):
        store.save(agent.id, text, evidence="user said so", scope=Scope.agent(), actor="t")
    InvokerStore(open_state_db()).add("session-close", name="close", blueprint_id="tick",
                                      agent_id=agent.id, assignments={})
    run, _ = RunStore(open_state_db()).create_run(
        blueprint_id="tick", agent_id=agent.id, assignments={}, inputs={},
        invocation={"trigger": "manual"})
    db = StateDB.open(state_db_path())
    with db.atomic():  # as a killed executor leaves it
        db.conn.execute("UPDATE runs SET status = 'running', owner_pid = 999999999,"
                        " owner_started = 1.0 WHERE id = ?", (run.id,))
    before = _row_counts()

    code, checks = _doctor(cli)

    assert [f["message"] for f in checks["settings"]] == ["1 stored setting(s), all valid"]
    assert [f["message"] for f in checks["invokers"]] == ["1 invoker(s), none broken"]
    (stuck,) = checks["runs"]
    assert stuck["status"] == "problem" and stuck["subject"] == run.id
    (history,) = checks["memory-history"]
    assert history["status"] == "ok" and history["message"].startswith("2 record(s)")
    assert [f["message"] for f in checks["memory-hygiene"]] == [
        "no records set aside as holding a secret"]
    assert code == 1
    assert _row_counts() == before  # the doctor wrote nothing
    files = {name for name in os.listdir(wardian_home) if name.endswith(".db")}
    assert files == (set() if backend == "postgres" else {"memory.db", "state.db"})
