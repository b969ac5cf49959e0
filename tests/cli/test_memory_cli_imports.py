"""The agent-facing memory path stays light: no pydantic, Rich, Jinja2, httpx, APScheduler,
YAML… imported by `wardian memory save/recall/list` (issue 2: whole-process median <= 250 ms;
contracts: CLI modules import heavy things inside the commands that need them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

HEAVY = {"pydantic", "rich", "jinja2", "httpx", "apscheduler", "yaml", "jsonschema",
         "rapidfuzz", "detect_secrets", "keyring"}
ABOVE_MEMORY = ("wardian.engine", "wardian.providers", "wardian.invokers",
                "wardian.blueprints", "wardian.transcripts", "wardian.memory.maintenance",
                "wardian.memory.consolidation", "wardian.memory.batch")
"""Packages the memory commands never need (and that would pull heavy imports later)."""

PROBE = r"""
import json, runpy, sys
sys.argv = ["wardian", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("wardian", run_name="__main__")
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules}),
                  "wardian": sorted(m for m in sys.modules if m.startswith("wardian."))}),
      file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [
    ["memory", "save", "light", "--evidence", "e"],
    ["memory", "recall"],
    ["memory", "recall", "light words", "--limit", "3"],
    ["memory", "list"],
])
def test_memory_commands_import_nothing_heavy(cli: CliRunner, argv: list[str]) -> None:
    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    agent_id = json.loads(
        invoke(cli, "agent", "add", "ada", "--provider", "claude", "--json").stdout)["id"]
    me = current()  # this live test process stands in for the agent exec supervisor
    store = MemoryStore(open_memory_db())
    token = CapabilityStore(store.conn).mint(agent_id, pid=me.pid, started_at=me.started_at,
                                             workspace=None)
    env = {**os.environ, "WARDIAN_AGENT_ID": agent_id, "WARDIAN_CAPABILITY": token}
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True,
                          text=True, timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert HEAVY.isdisjoint(report["modules"]), sorted(HEAVY & set(report["modules"]))
    if argv[1] in ("save", "recall"):  # the hot path (issue 19): not even the CLI framework
        assert {"typer", "click", "wardian.cli.main"}.isdisjoint(
            report["modules"] + report["wardian"]), report["wardian"]
    if argv[1] in ("save", "recall"):  # nor the dataclass machinery (inspect, ast, dis: ~20 ms CPU)
        assert {"dataclasses", "inspect"}.isdisjoint(report["modules"])
    if argv[1] in ("save", "recall"):  # no process to start (Typer imports it for `list`)
        assert "subprocess" not in report["modules"]
    above = [m for m in report["wardian"] if m.startswith(ABOVE_MEMORY)]
    assert above == [], above
