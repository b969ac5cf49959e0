"""`wardian mcp` outside a managed launch, through the real stdio server: the read-only
tools (``memory_list``, ``memory_show``, ``memory_history``, ``memory_recall``) answer
read-only for the agent the hooks would answer for — the one ``--agent`` name, or among
several the one whose workspace holds the server's directory — and every change is refused
with what was refused and how to get it (a ``wardian agent launch``/``exec`` session)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
from typer.testing import CliRunner

from tests.conftest import invoke
from tests.mcp.conftest import (
    add_agent,
    base_env,
    capability_env,
    error_of,
    session,
    structured,
    text_of,
)
from wardian.memory.capabilities import CapabilityStore
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore


def _saved(agent_id: str, cwd: Path, text: str) -> str:
    """Save `text` through a server holding a capability minted for this process, then
    revoke it (this process is then no launch's holder, as outside a launch); the id."""
    env = {**base_env(), **capability_env(agent_id)}

    async def main() -> str:
        async with session(env, cwd) as client:
            result = await client.call_tool("memory_save", {"text": text,
                                                            "evidence": "the user said so"})
            assert not result.is_error, text_of(result)
            return str(structured(result)["id"])

    try:
        return anyio.run(main)
    finally:
        store = MemoryStore(open_memory_db())
        assert CapabilityStore(store.conn).revoke(env["WARDIAN_CAPABILITY"],
                                                  reason="test saved its record")


def _texts(home: Path) -> list[str]:
    conn = sqlite3.connect(home / "memory.db")
    try:
        return [r[0] for r in conn.execute("SELECT text FROM records ORDER BY created_at")]
    finally:
        conn.close()


def test_read_tools_answer_read_only_and_writes_say_why_they_are_refused(
    workdir: Path, wardian_home: Path
) -> None:
    assert invoke(CliRunner(), "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    agent_id = add_agent("ada")
    record_id = _saved(agent_id, workdir, "Use tabs in Makefiles")
    reader = ["-P", "-m", "wardian", "mcp", "--agent", "ada"]

    async def main() -> None:
        async with session(base_env(), workdir, args=reader) as client:
            listed = await client.call_tool("memory_list", {})
            assert not listed.is_error, text_of(listed)
            doc = structured(listed)
            assert [r["id"] for r in doc["records"]] == [record_id]
            assert doc["read_only"] is True and "read-only" in doc["note"]
            assert "read-only" in text_of(listed)

            shown = await client.call_tool("memory_show", {"id": record_id[:8]})
            assert not shown.is_error, text_of(shown)
            assert structured(shown)["text"] == "Use tabs in Makefiles"

            history = await client.call_tool("memory_history", {"id": record_id})
            assert not history.is_error, text_of(history)
            hdoc = structured(history)
            assert hdoc["record_id"] == record_id and len(hdoc["revisions"]) == 1
            assert hdoc["read_only"] is True

            recall = await client.call_tool("memory_recall", {"query": "makefiles tabs"})
            assert not recall.is_error, text_of(recall)
            assert [r["id"] for r in structured(recall)["records"]] == [record_id]

            for tool, args in (("memory_save", {"text": "x", "evidence": "y"}),
                               ("memory_update", {"id": record_id, "text": "z"}),
                               ("memory_remove", {"id": record_id}),
                               ("memory_draft_plan", {"ids": [record_id]})):
                refused = await client.call_tool(tool, args)
                assert refused.is_error, tool
                message = text_of(refused)
                assert "no memory capability" in message and "read-only" in message, message
                assert "wardian agent launch" in message and "wardian agent exec" in message
                assert error_of(refused)["exit_code"] == 3

    anyio.run(main)
    assert _texts(wardian_home) == ["Use tabs in Makefiles"]


def test_several_agents_resolve_by_workspace_as_the_hooks_do(
    workdir: Path, wardian_home: Path, tmp_path: Path
) -> None:
    cli = CliRunner()
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    other = tmp_path / "other"
    other.mkdir()
    ada = json.loads(invoke(cli, "agent", "add", "ada", "--provider", "claude", "--workspace",
                            str(workdir), "--json").stdout)["id"]
    bob = json.loads(invoke(cli, "agent", "add", "bob", "--provider", "claude", "--workspace",
                            str(other), "--json").stdout)["id"]
    ada_record = _saved(ada, workdir, "Ada uses tabs")
    _saved(bob, workdir, "Bob uses spaces")
    both = ["-P", "-m", "wardian", "mcp", "--agent", "bob", "--agent", "ada"]

    async def main() -> None:
        async with session(base_env(), workdir, args=both) as client:
            listed = structured(await client.call_tool("memory_list", {}))
            assert [r["id"] for r in listed["records"]] == [ada_record]
        async with session(base_env(), tmp_path, args=both) as client:
            # Neither workspace holds this directory and both agents have one: no agent.
            result = await client.call_tool("memory_list", {})
            assert result.is_error
            assert "no agent for" in text_of(result) and "--workspace" in text_of(result)

    anyio.run(main)
