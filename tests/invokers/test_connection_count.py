"""One connection per file per process (issue 13): a whole session-close event — the event
stored, the drain, the memory-consolidation run with the builtin curator committing records —
opens ``state.db`` and ``memory.db`` once each in the process that handles it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.engine.runs import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "wardian" / "library" / "examples" / \
    "claude-code-session.jsonl"

HANDLE_EVENT = """\
import json, sys
from wardian._db import connections_opened
from wardian.config import memory_db_path, state_db_path
from wardian.invokers.drain import drain_once
from wardian.runtime.session_events import record_session_close

record_session_close(sys.argv[1], "clear", session_id="s-1", transcript_path=sys.argv[2],
                     provider="claude", start_drain=False)
report = drain_once()
print(json.dumps({"state": connections_opened(state_db_path()),
                  "memory": connections_opened(memory_db_path()),
                  "all": connections_opened(), "executed": report.executed,
                  "errors": report.errors}))
"""


def test_a_session_close_event_opens_each_file_once(cli: CliRunner, wardian_home: Path,
                                                     tmp_path: Path) -> None:
    for args in (("settings", "set", "agent_memory.enabled", "true"),
                 ("settings", "set", "conversation_logging.enabled", "true"),
                 ("agent", "add", "ada", "--provider", "claude", "--workspace", str(tmp_path)),
                 ("agent", "models", "--provider", "builtin", "--refresh")):
        assert invoke(cli, *args).exit_code == 0
    assignments = {"curator": {"target_type": "temporary_provider", "provider": "builtin",
                               "model": "curator-rules"}}
    added = invoke(cli, "automation", "session-close", "add", "--blueprint",
                   "memory-consolidation", "--name", "c", "--agent", "ada", "--boundary",
                   "clear", "--require-archive", "--assignments", json.dumps(assignments))
    assert added.exit_code == 0, added.output
    invoker_id = added.stdout.split()[0]
    assert invoke(cli, "automation", "session-close", "enable", invoker_id).exit_code == 0
    agent_id = json.loads(invoke(cli, "agent", "show", "ada", "--json").stdout)["id"]

    proc = subprocess.run([sys.executable, "-c", HANDLE_EVENT, agent_id, str(EXAMPLE)],
                          capture_output=True, text=True, env=dict(os.environ), timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"\nconnections opened by one session-close event: {counts}")
    assert counts["executed"] == 1 and not counts["errors"], counts
    runs = RunStore(open_state_db(), recover=False).list(invoker_id=invoker_id)
    assert [r.status for r in runs] == ["succeeded"]
    assert counts["state"] == 1 and counts["memory"] == 1, counts
    assert counts["all"] == 2, counts
