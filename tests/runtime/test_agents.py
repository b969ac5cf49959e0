"""Agents registry and `wardian agent add|list|show|remove` through the real CLI."""

from __future__ import annotations

import json
import uuid

from tests.conftest import invoke

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore


def _add(cli, name: str = "ada"):  # type: ignore[no-untyped-def]
    result = invoke(cli, "agent", "add", name, "--provider", "claude", "--model", "m1",
                    "--effort", "low", "--workspace", ".", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # a catalog warning goes to stderr


def test_add_gives_a_uuid4_and_list_show_expose_it(cli, backend: str) -> None:  # type: ignore[no-untyped-def]
    agent = _add(cli)
    assert uuid.UUID(agent["id"]).version == 4
    listed = json.loads(invoke(cli, "agent", "list", "--json").output)
    assert [a["id"] for a in listed] == [agent["id"]]
    for ref in ("ada", agent["id"], agent["id"][:8], agent["id"][:8].upper()):
        shown = json.loads(invoke(cli, "agent", "show", ref, "--json").output)
        assert shown["id"] == agent["id"] and shown["model"] == "m1"


def test_names_are_unique(cli, backend: str) -> None:  # type: ignore[no-untyped-def]
    _add(cli)
    again = invoke(cli, "agent", "add", "ada", "--provider", "codex")
    assert again.exit_code == 4 and "already exists" in again.stderr


def test_bad_name_and_unknown_agent(cli) -> None:  # type: ignore[no-untyped-def]
    assert invoke(cli, "agent", "add", "bad name!", "--provider", "claude").exit_code == 2
    nowhere = invoke(cli, "agent", "add", "bo", "--provider", "claude", "--workspace",
                     "/definitely/missing/dir")
    assert nowhere.exit_code == 2 and "is not a directory" in nowhere.stderr
    assert json.loads(invoke(cli, "agent", "list", "--json").output) == []
    missing = invoke(cli, "agent", "show", "ghost")
    assert missing.exit_code == 1 and "wardian agent list" in missing.stderr


def test_remove_refuses_while_records_exist(cli) -> None:  # type: ignore[no-untyped-def]
    agent = _add(cli)
    MemoryStore(open_memory_db()).save(
        agent["id"], "Use pnpm", evidence="use pnpm", scope=Scope.agent(), actor="test")
    refused = invoke(cli, "agent", "remove", "ada")
    assert refused.exit_code == 2 and "--keep-records" in refused.stderr
    assert json.loads(invoke(cli, "agent", "list", "--json").output)
    kept = invoke(cli, "agent", "remove", "ada", "--keep-records")
    assert kept.exit_code == 0 and "1 record(s) kept" in kept.output
    assert MemoryStore(open_memory_db()).count(agent["id"]) == 1


def test_remove_with_delete_records(cli) -> None:  # type: ignore[no-untyped-def]
    agent = _add(cli)
    MemoryStore(open_memory_db()).save(
        agent["id"], "Use pnpm", evidence="use pnpm", scope=Scope.agent(), actor="test")
    both = invoke(cli, "agent", "remove", "ada", "--keep-records", "--delete-records")
    assert both.exit_code == 2
    gone = invoke(cli, "agent", "remove", "ada", "--delete-records")
    assert gone.exit_code == 0, gone.output
    assert MemoryStore(open_memory_db()).count(agent["id"]) == 0
    assert json.loads(invoke(cli, "agent", "list", "--json").output) == []


def test_remove_revokes_the_agents_live_capabilities(cli) -> None:  # type: ignore[no-untyped-def]
    import os

    import psutil

    from wardian._db import atomic
    from wardian._util import utc_now_iso
    from wardian.memory.capabilities import CapabilityStore

    agent = _add(cli)
    store = MemoryStore(open_memory_db())
    caps = CapabilityStore(store.conn)
    me = psutil.Process(os.getpid())
    with atomic(store.conn):
        caps.mint_in_transaction(agent["id"], pid=me.pid, started_at=me.create_time(),
                                 workspace=None, now=utc_now_iso())
    assert invoke(cli, "agent", "remove", "ada").exit_code == 0
    rows = store.conn.execute(
        "SELECT revoked_at, revoked_reason FROM capabilities WHERE agent_id = ?", (agent["id"],)
    ).fetchall()
    assert rows and all(r["revoked_at"] and r["revoked_reason"] == "agent removed" for r in rows)


def test_a_removal_cut_short_after_deleting_records_finishes_on_rerun(cli) -> None:  # type: ignore[no-untyped-def]
    # `remove_agent`'s documented order: capabilities, records, then the agent. A crash
    # after the records went leaves the agent registered with none, so a plain rerun
    # (no flag) finishes the removal.
    from wardian.app.agents import remove_agent
    from wardian.config import open_state_db
    from wardian.memory.capabilities import CapabilityStore

    agent = _add(cli)
    store = MemoryStore(open_memory_db())
    store.save(agent["id"], "Use pnpm", evidence="use pnpm", scope=Scope.agent(), actor="test")
    CapabilityStore(store.conn).revoke_for_agent(agent["id"], reason="agent removed")  # step 2
    store.delete_agent_records(agent["id"])  # step 3, then the process died
    assert json.loads(invoke(cli, "agent", "list", "--json").output)  # still visible
    done = remove_agent(open_state_db(), open_memory_db(), "ada")
    assert (done.agent.id, done.record_count, done.records) == (agent["id"], 0, "none")
    assert json.loads(invoke(cli, "agent", "list", "--json").output) == []
