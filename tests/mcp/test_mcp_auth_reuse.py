"""The MCP server reuses a call's authentication only while nothing it relied on changed
(issue 16: the round trip; issue 15: a capability dies with its launch).

A revocation (a commit by another connection) and the end of the holder process (its
ancestry changes, nothing is written) must each refuse the very next call.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import anyio
import psutil

from tests.mcp.conftest import add_agent, base_env, capability_env, session, structured, text_of

HOLDER = r"""
import os, subprocess, sys
from wardian.memory.capabilities import CapabilityStore
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
from wardian._process import current

# This process stands in for the `agent exec` supervisor: it holds the capability and
# runs the server as its child on the same stdin/stdout.
me = current()
store = MemoryStore(open_memory_db())
token = CapabilityStore(store.conn).mint(sys.argv[1], pid=me.pid, started_at=me.started_at,
                                         workspace=None)
env = dict(os.environ, WARDIAN_AGENT_ID=sys.argv[1], WARDIAN_CAPABILITY=token)
sys.exit(subprocess.run([sys.executable, "-P", "-m", "wardian", "mcp"], env=env).returncode)
"""


def _holder() -> psutil.Process:
    """The HOLDER process among this test's descendants (others may be zombies)."""
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if HOLDER in proc.cmdline():
                return proc
    raise AssertionError("the holder process is not running")


def _recall_ok(result: object) -> None:
    assert not getattr(result, "is_error", True), text_of(result)
    assert structured(result)["read_only"] is False


def test_a_revoked_capability_refuses_the_next_call(workdir: Path, wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    launch = capability_env(agent_id)
    env = {**base_env(), **launch}

    async def main() -> None:
        async with session(env, workdir) as client:
            for _ in range(3):  # authenticated once, then reused
                _recall_ok(await client.call_tool("memory_recall", {"query": "anything"}))
            saved = await client.call_tool("memory_save", {"text": "Ship on Fridays",
                                                           "evidence": "user said so"})
            assert not saved.is_error, text_of(saved)
            from wardian.memory.capabilities import CapabilityStore
            from wardian.memory.db import open_memory_db
            from wardian.memory.store import MemoryStore

            store = MemoryStore(open_memory_db())
            assert CapabilityStore(store.conn).revoke(launch["WARDIAN_CAPABILITY"],
                                                      reason="launch ended")
            for tool, args in (("memory_recall", {"query": "Fridays"}),
                               ("memory_save", {"text": "Ship on Mondays",
                                                "evidence": "user changed it"})):
                refused = await client.call_tool(tool, args)
                assert refused.is_error, tool
                assert "capability expired: launch ended" in text_of(refused), text_of(refused)

    anyio.run(main)


def test_the_end_of_the_holder_refuses_the_next_call(workdir: Path, wardian_home: Path) -> None:
    agent_id = add_agent("ada")

    async def main() -> None:
        async with session(base_env(), workdir, args=["-c", HOLDER, agent_id]) as client:
            for _ in range(3):
                _recall_ok(await client.call_tool("memory_recall", {"query": "anything"}))
            holder = _holder()
            holder.send_signal(signal.SIGKILL)  # no revocation is written
            # Wait for its end without reaping it (the SDK's client reaps its child; when it
            # already has, the holder has ended too).
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, holder.pid, os.WEXITED | os.WNOWAIT)
            refused = await client.call_tool("memory_recall", {"query": "anything"})
            assert refused.is_error
            assert "has ended" in text_of(refused), text_of(refused)

    anyio.run(main)
