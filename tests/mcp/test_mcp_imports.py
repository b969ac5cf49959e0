"""The MCP SDK (and tomlkit) stay off every other command's start-up path: only `wardian
mcp` imports them (memory commands are CPU-budgeted, issue 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli.test_memory_cli_imports import PROBE


@pytest.mark.parametrize("argv", [["memory", "list"], ["agent", "list"], ["--help"]])
def test_other_commands_do_not_import_the_mcp_sdk(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert {"mcp", "mcp_types", "tomlkit", "anyio"}.isdisjoint(report["modules"]), argv
    assert not [m for m in report["wardian"] if m.startswith("wardian.mcp_server")]
