"""`wardian mcp` end to end with the official SDK's client over stdio (issue 16).

Each test spawns the real server (`python -P -m wardian mcp`) on a real memory.db and
talks MCP to it: initialize, list tools, save, recall, update, history, remove; refused
writes without a capability, a refused foreign id, an over-limit text; the resources.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

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
from wardian.mcp_server.server import TOOL_NAMES
from wardian.memory.models import MAX_TEXT_CHARS


def _rows(home: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(home / "memory.db")
    try:
        return conn.execute("SELECT id, agent_id, text FROM records ORDER BY created_at").fetchall()
    finally:
        conn.close()


def test_tools_listed_with_the_cli_limits_and_full_memory_round_trip(
    workdir: Path, wardian_home: Path
) -> None:
    agent_id = add_agent("ada")
    env = {**base_env(), **capability_env(agent_id)}

    async def main() -> None:
        async with session(env, workdir) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(TOOL_NAMES)
            save_schema = tools["memory_save"].input_schema["properties"]
            assert save_schema["text"]["maxLength"] == MAX_TEXT_CHARS
            assert save_schema["kind"]["enum"] == ["stable", "current"]
            assert set(tools["memory_save"].input_schema["required"]) == {"text", "evidence"}
            assert tools["memory_save"].output_schema is not None

            saved = await client.call_tool("memory_save", {
                "text": "Release notes go in docs/releases, one file per version",
                "evidence": "the user: put release notes under docs/releases",
                "sources": ["file=docs/releases/README.md"],
            })
            assert not saved.is_error, text_of(saved)
            doc = structured(saved)
            assert doc["row"] == "Memory saved · This agent"
            assert text_of(saved).endswith("Memory saved · This agent")
            record_id, first_rev = doc["id"], doc["revision_id"]
            assert doc["record"]["scope"] == {"kind": "workspace", "path": str(workdir)}
            assert doc["record"]["sources"][0]["primary"] is True

            found = structured(await client.call_tool("memory_recall",
                                                      {"query": "release notes"}))
            assert [r["id"] for r in found["records"]] == [record_id]
            assert found["read_only"] is False
            assert found["lines"][0].startswith(f"- [{record_id[:8]}]")

            updated = await client.call_tool("memory_update", {
                "id": record_id[:8], "text": "Release notes go in docs/changes",
                "reason": "moved"})
            udoc = structured(updated)
            assert udoc["row"] == "Memory updated · This agent"
            assert udoc["id"] == record_id and udoc["revision_id"] != first_rev

            history = structured(await client.call_tool("memory_history", {"id": record_id}))
            assert [r["revision_id"] for r in history["revisions"]] == [
                first_rev, udoc["revision_id"]]
            assert history["revisions"][1]["reason"] == "moved"

            listed = structured(await client.call_tool("memory_list", {}))
            assert listed["count"] == 1

            startup = await client.read_resource("wardian://startup-context")
            assert "Release notes go in docs/changes" in startup.contents[0].text  # type: ignore[union-attr]
            one = await client.read_resource(f"wardian://memory/{record_id}")
            assert record_id in one.contents[0].text  # type: ignore[union-attr]

            draft = structured(await client.call_tool("memory_draft_plan",
                                                      {"ids": [record_id]}))
            assert draft["plan"]["operations"][0]["expected_revision_id"] == udoc["revision_id"]

            removed = structured(await client.call_tool("memory_remove",
                                                        {"id": record_id, "reason": "obsolete"}))
            assert removed["row"] == "Memory removed · This agent"
            assert removed["record"]["status"] == "removed"
            again = structured(await client.call_tool("memory_recall", {"query": "release"}))
            assert again["records"] == []

    anyio.run(main)
    assert [(r[0], r[1]) for r in _rows(wardian_home)] == [(r[0], agent_id)
                                                           for r in _rows(wardian_home)]


def test_without_capability_writes_are_refused_and_recall_is_read_only(
    workdir: Path, wardian_home: Path
) -> None:
    agent_id = add_agent("ada")
    writer = {**base_env(), **capability_env(agent_id)}
    reader_args = ["-P", "-m", "wardian", "mcp", "--agent", "ada"]

    async def disabled() -> None:
        # Memory disabled (the default): the hooks give no recall, and neither does this.
        async with session(base_env(), workdir, args=reader_args) as client:
            result = await client.call_tool("memory_recall", {"query": "makefiles"})
            assert result.is_error and "agent memory is disabled" in text_of(result)
            assert error_of(result)["exit_code"] == 3

    anyio.run(disabled)
    assert invoke(CliRunner(), "settings", "set", "agent_memory.enabled", "true").exit_code == 0

    async def main() -> None:
        async with session(writer, workdir) as client:
            await client.call_tool("memory_save", {"text": "Use tabs in Makefiles",
                                                   "evidence": "the user said so"})
        async with session(base_env(), workdir,
                           args=reader_args) as client:
            refused = await client.call_tool("memory_save", {"text": "x", "evidence": "y"})
            assert refused.is_error
            assert "no memory capability" in text_of(refused)
            assert "wardian agent launch" in text_of(refused)
            error = error_of(refused)
            assert error["exit_code"] == 3 and error["hint"]
            for tool, args in (("memory_update", {"id": "0", "text": "z"}),
                               ("memory_remove", {"id": "0"})):
                assert (await client.call_tool(tool, args)).is_error, tool
            recall = await client.call_tool("memory_recall", {"query": "makefiles tabs"})
            assert not recall.is_error, text_of(recall)
            doc = structured(recall)
            assert doc["read_only"] is True and "read-only" in doc["note"]
            assert [r["text"] for r in doc["records"]] == ["Use tabs in Makefiles"]
            startup = await client.read_resource("wardian://startup-context")
            assert "read-only" in startup.contents[0].text.lower()  # type: ignore[union-attr]

    anyio.run(main)
    assert [r[2] for r in _rows(wardian_home)] == ["Use tabs in Makefiles"]


def test_forged_capability_refuses_even_recall(workdir: Path, wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    capability_env(agent_id)  # a real one exists; this one is forged
    env = {**base_env(), "WARDIAN_AGENT_ID": agent_id, "WARDIAN_CAPABILITY": "forged-token"}

    async def main() -> None:
        async with session(env, workdir) as client:
            result = await client.call_tool("memory_recall", {})
            assert result.is_error
            assert "not recognised" in text_of(result)

    anyio.run(main)


def test_foreign_id_is_not_found_and_untouched(workdir: Path, wardian_home: Path) -> None:
    ada, bob = add_agent("ada"), add_agent("bob")
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    theirs = store.save(bob, "Bob's secret plan", evidence="bob said", scope=Scope.agent(),
                        actor=f"agent:{bob}")
    env = {**base_env(), **capability_env(ada)}

    async def main() -> None:
        async with session(env, workdir) as client:
            for tool, args in (("memory_show", {"id": theirs.id}),
                               ("memory_history", {"id": theirs.id[:8]}),
                               ("memory_update", {"id": theirs.id, "text": "mine now"}),
                               ("memory_remove", {"id": theirs.id}),
                               ("memory_draft_plan", {"ids": [theirs.id]})):
                result = await client.call_tool(tool, args)
                assert result.is_error, tool
                assert "not found" in text_of(result), (tool, text_of(result))
                assert "Bob" not in text_of(result)
            recall = structured(await client.call_tool("memory_recall", {"query": "secret plan"}))
            assert recall["records"] == []
            try:
                await client.read_resource(f"wardian://memory/{theirs.id}")
            except Exception as exc:  # the SDK raises the server's resource error
                assert "not found" in str(exc)
            else:
                raise AssertionError("a foreign record was readable as a resource")

    anyio.run(main)
    assert [r[2] for r in _rows(wardian_home)] == ["Bob's secret plan"]


def test_over_limit_text_is_our_validation_error(workdir: Path, wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    env = {**base_env(), **capability_env(agent_id)}

    async def main() -> None:
        async with session(env, workdir) as client:
            result = await client.call_tool("memory_save", {
                "text": "x" * (MAX_TEXT_CHARS + 1), "evidence": "e"})
            assert result.is_error
            assert f"text is {MAX_TEXT_CHARS + 1} characters; the limit is {MAX_TEXT_CHARS}" \
                in text_of(result)
            assert error_of(result)["exit_code"] == 2
            bad_kind = await client.call_tool("memory_save", {"text": "t", "evidence": "e",
                                                              "kind": "forever"})
            assert bad_kind.is_error and "unknown kind 'forever'" in text_of(bad_kind)

    anyio.run(main)
    assert _rows(wardian_home) == []


def test_arguments_that_fail_the_input_schema_get_a_one_line_refusal(
        workdir: Path, wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    env = {**base_env(), **capability_env(agent_id)}
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("memory_save", {"text": "t"}, "memory_save: evidence is required"),
        ("memory_recall", {"limit": "many"}, "memory_recall: limit should be a valid integer"),
        ("memory_save", {"text": "t", "evidence": "e", "sources": "file=x"},
         "memory_save: sources should be a valid list"),
        ("memory_draft_plan", {"ids": ["ab", 7]}, "memory_draft_plan: ids[1] should be a "
                                                 "valid string"),
    ]

    async def main() -> None:
        async with session(env, workdir) as client:
            for tool, arguments, said in cases:
                result = await client.call_tool(tool, arguments)
                text = text_of(result)
                assert result.is_error and text.startswith(f"Error: {said}"), text
                assert "\n" not in text and "pydantic" not in text and "type=" not in text
                assert "Arguments" not in text and "input_value" not in text
                error = error_of(result)
                assert error["exit_code"] == 2 and error["message"].startswith(said)

    anyio.run(main)
    assert _rows(wardian_home) == []


def test_every_result_error_or_not_conforms_to_the_tools_output_schema(
        workdir: Path, wardian_home: Path) -> None:
    """A client validates structured content against the tool's ``outputSchema`` whenever
    it is present (the TypeScript SDK does so for errors too): successes, refusals and
    bad arguments of every tool either carry no structured content or conforming one."""
    import jsonschema

    agent_id = add_agent("ada")
    assert invoke(CliRunner(), "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_save", {"text": "Use tabs in Makefiles", "evidence": "the user said so"}),
        ("memory_save", {"text": "t"}),
        ("memory_save", {"text": "t", "evidence": "e", "kind": "forever"}),
        ("memory_recall", {"query": "makefiles"}),
        ("memory_recall", {"limit": "many"}),
        ("memory_list", {}),
        ("memory_list", {"kind": "forever"}),
        ("memory_show", {"id": "ffffffff"}),
        ("memory_history", {"id": "ffffffff"}),
        ("memory_update", {"id": "ffffffff", "text": "z"}),
        ("memory_remove", {"id": "ffffffff"}),
        ("memory_draft_plan", {"ids": ["ffffffff"]}),
    ]
    seen: dict[str, set[bool]] = {}

    async def check(env: dict[str, str], args: list[str] | None = None) -> None:
        async with session(env, workdir, args=args) as client:
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                seen.setdefault(tool, set()).add(bool(result.is_error))
                if result.is_error:
                    error_of(result)
                else:
                    schema = schemas[tool]
                    assert schema is not None, tool
                    jsonschema.validate(structured(result), schema)

    async def main() -> None:
        await check({**base_env(), **capability_env(agent_id)})
        await check(base_env(), ["-P", "-m", "wardian", "mcp", "--agent", "ada"])

    anyio.run(main)
    assert all(True in kinds for kinds in seen.values()), seen  # each tool refused once
    assert False in seen["memory_save"] and False in seen["memory_list"], seen
