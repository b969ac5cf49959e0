"""A running server's recall sees what another process wrote since its last call (issue
16: the server keeps recall's word statistics and vectors warm between calls, and must
drop them when ``memory.db`` changes under it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio

from tests.mcp.conftest import add_agent, base_env, capability_env, session, structured, text_of
from tests.memory.test_recall_warm import SAVER


def _other_process(*args: str) -> str:
    done = subprocess.run([sys.executable, "-c", SAVER, *args], check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


def test_a_save_and_a_remove_by_another_process_show_in_the_next_recall(
        workdir: Path, wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    env = {**base_env(), **capability_env(agent_id)}

    async def main() -> None:
        async with session(env, workdir) as client:
            async def recalled() -> list[str]:
                result = await client.call_tool("memory_recall", {"query": "walrus colony"})
                assert not result.is_error, text_of(result)
                return [r["id"] for r in structured(result)["records"]]

            saved = await client.call_tool("memory_save", {
                "text": "The walrus colony moved north", "evidence": "field notes",
                "scope": "agent"})
            first = structured(saved)["id"]
            for _ in range(3):  # warm from the second call on
                assert await recalled() == [first]
            second = _other_process("save", agent_id, "walrus colony walrus colony census")
            assert await recalled() == [second, first]
            _other_process("remove", agent_id, first)
            assert await recalled() == [second]

    anyio.run(main)
