"""Crash safety: SIGKILL the applying process in the middle of a 100-operation apply; the
database holds either the whole plan and its receipt or none of it (issue 3 acceptance).

Deterministic, no sleeps and no hook in production code: the child is `crash_child.py`, a
test-only wrapper that runs the real CLI with a SQLite trace callback on its ``memory.db``
connections. Inside the ``BEGIN IMMEDIATE`` transaction, as the revision of change N starts
(or as COMMIT starts), it writes one byte to a pipe and blocks on another. The parent waits
for that byte, then either SIGKILLs the child or lets it continue.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.terminal import answer_when_asked, on_terminal

CHILD = Path(__file__).with_name("crash_child.py")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and fd passing")]


@pytest.fixture
def backend() -> str:
    """SQLite only: the child pauses on a SQLite trace callback (`crash_child.py`)."""
    return "sqlite"


def big_plan(kit: Any) -> Path:
    """100 operations touching 100 records: 50 revise, 20 create, 15 retire, 15 retire_into."""
    recs = [kit.record(f"rec{i}", sources=2) for i in range(80)]
    ops: list[dict[str, Any]] = []
    for rec in recs[:50]:
        ops.append({"op": "revise", "memory_id": rec.id,
                    "expected_revision_id": rec.current_revision_id, "text": rec.text + " v2",
                    "add_sources": [{"source_type": "file", "locator": f"{rec.text}-new.md"}]})
    for i in range(20):
        ops.append({"op": "create", "client_key": f"c{i}", "text": f"created {i}",
                    "kind": "current", "scope": {"kind": "agent"}, "evidence_excerpt": "seen",
                    "sources": [{"source_type": "file", "locator": f"c{i}.md"}]})
    for rec in recs[50:65]:
        ops.append({"op": "retire", "memory_id": rec.id,
                    "expected_revision_id": rec.current_revision_id, "reason": "stale"})
    for i, rec in enumerate(recs[65:80]):
        ops.append({"op": "retire_into", "memory_id": rec.id,
                    "expected_revision_id": rec.current_revision_id,
                    "target_memory_id": recs[i].id})
    assert len(ops) == 100
    path: Path = kit.write(kit.plan(ops, plan_id="big", idempotency_key="big-1"))
    return path


def start_paused(kit: Any, path: Path, confirm: str, step: int
                 ) -> tuple[Any, int, int, int]:
    """Start the apply in `crash_child.py` on a pseudo-terminal, answer its question
    with yes, and return (process, notify read end, wait write end, terminal master). The
    master stays open until the child has ended: closing it hangs the terminal up."""
    notify_r, notify_w = os.pipe()
    wait_r, wait_w = os.pipe()
    master, slave = os.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(kit.home)
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(step), str(notify_w), str(wait_r), str(slave), "--",
         "garden", "maintain", "apply", str(path), "--agent", "alice", "--confirm", confirm],
        env=env, pass_fds=(notify_w, wait_r, slave), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    os.close(notify_w)
    os.close(wait_r)
    os.close(slave)
    # The question comes before the transaction; the echo left behind is a few bytes.
    answer_when_asked(master, "yes")
    return proc, notify_r, wait_w, master


def receipts(kit: Any) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = kit.state()["maintenance_receipts"]
    return rows


def assert_whole_plan(kit: Any, before: dict[str, Any]) -> None:
    state = kit.state()
    assert len(state["maintenance_receipts"]) == 1
    receipt = json.loads(state["maintenance_receipts"][0][-1])
    assert len(receipt["created"]) == 20 and len(receipt["revised"]) == 80
    plan_revisions = [r for r in state["revisions"] if r[4] == "plan:big"]
    assert len(plan_revisions) == 100
    assert len(state["records"]) == len(before["records"]) + 20
    assert sum(1 for r in state["records"] if r[7] == "removed") == 30


@pytest.mark.parametrize("step", [0, 1, 50, 99, -1])
def test_sigkill_inside_the_apply_transaction_leaves_nothing(
    kit: Any, cli: Any, step: int
) -> None:
    path = big_plan(kit)
    doc = json.loads(invoke(cli, "garden", "maintain", "preview", str(path), "--agent",
                            "alice", "--json").stdout)
    assert doc["conflict_free"]
    _, before = kit.fingerprint()
    proc, notify_r, wait_w, master = start_paused(kit, path, doc["digest_prefix"], step)
    try:
        signalled = os.read(notify_r, 1)
        assert signalled == b"!", (signalled, proc.communicate(timeout=60))  # in the txn
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        os.close(notify_r)
        os.close(wait_w)
        os.close(master)
    assert proc.returncode == -signal.SIGKILL
    # None of it: every row is as before, and no receipt.
    assert kit.state() == before
    check = json.loads(invoke(cli, "garden", "maintain", "check-receipt", str(path), "--agent",
                              "alice", "--json").stdout)
    assert check["committed"] is False
    # Recovery: the reviewed preview survived the crash; applying again commits all of it.
    result = on_terminal("garden", "maintain", "apply", str(path), "--agent", "alice",
                         "--confirm", doc["digest_prefix"], answer="yes")
    assert result.exit_code == 0, result.stderr
    assert_whole_plan(kit, before)


def test_a_paused_apply_that_is_not_killed_commits_the_whole_plan(kit: Any, cli: Any) -> None:
    path = big_plan(kit)
    doc = json.loads(invoke(cli, "garden", "maintain", "preview", str(path), "--agent",
                            "alice", "--json").stdout)
    _, before = kit.fingerprint()
    proc, notify_r, wait_w, master = start_paused(kit, path, doc["digest_prefix"], 50)
    assert os.read(notify_r, 1) == b"!"
    # While the child holds BEGIN IMMEDIATE mid-apply, a reader sees none of its writes.
    assert kit.state() == before
    os.close(wait_w)  # EOF: the child continues
    _, err = proc.communicate(timeout=60)
    os.close(notify_r)
    os.close(master)
    assert proc.returncode == 0, err
    assert_whole_plan(kit, before)
