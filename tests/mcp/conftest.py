"""Fixtures for the MCP tests: an agent with a capability bound to this live test process
(the server these tests spawn is its child, as a host's server is the launch's
descendant), a git work tree to run in, and the SDK's own stdio client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from typer.testing import CliRunner

from mcp import ClientSession
from tests.cli.test_memory_cli import _agent, _capability


def add_agent(name: str) -> str:
    """Register an agent through the real CLI; its id."""
    return _agent(CliRunner(), name)


def capability_env(agent_id: str) -> dict[str, str]:
    """The launch variables of a capability minted for this (live) process."""
    return _capability(agent_id)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree (the server's workspace is its root)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root.resolve()


def base_env() -> dict[str, str]:
    """What every spawned server gets beside the SDK's safe defaults: the data dir (and
    PYTHONPATH when the tests run against a source tree that is not the installed one)."""
    env = {"WARDIAN_HOME": os.environ["WARDIAN_HOME"]}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@asynccontextmanager
async def session(
    env: dict[str, str], cwd: Path, *, args: list[str] | None = None,
    command: str | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session with a real `wardian mcp` child process."""
    params = StdioServerParameters(
        command=command or sys.executable,
        args=args if args is not None else ["-P", "-m", "wardian", "mcp"],
        env=env, cwd=str(cwd),
    )
    with open(os.devnull, "w") as errlog:
        async with (stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as client):
            await client.initialize()
            yield client


def structured(result: Any) -> dict[str, Any]:
    """A tool result's structured content (asserted present)."""
    assert result.structured_content is not None, result
    doc: dict[str, Any] = result.structured_content
    return doc


def error_of(result: Any) -> dict[str, Any]:
    """A tool error's details (``_meta["wardian/error"]``); asserted to be an error that
    carries no structured content (that would have to match the tool's output schema)."""
    from wardian.mcp_server.server import ERROR_META_KEY

    assert result.is_error, result
    assert result.structured_content is None, result
    assert result.meta is not None and ERROR_META_KEY in result.meta, result
    doc: dict[str, Any] = result.meta[ERROR_META_KEY]
    return doc


def text_of(result: Any) -> str:
    """A tool result's text content."""
    return "\n".join(getattr(block, "text", "") for block in result.content)
