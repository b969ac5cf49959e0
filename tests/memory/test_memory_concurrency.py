"""Concurrent saves end with exactly the records written and no errors (issue 2 acceptance).

* Through the CLI: 4 managed launches (`wardian agent exec`) at once, each running a child
  that calls `wardian memory save` 100 times — every save its own `wardian` process
  authenticating with the launch's capability — ends with exactly 400 records.
  The subprocesses cache bytecode under a temp ``PYTHONPYCACHEPREFIX`` (as any installed
  Python does) even when the session sets ``PYTHONDONTWRITEBYTECODE``.
* In-process: 8 threads x 1,000 `MemoryStore.save` calls, one connection per thread,
  ends with exactly 8,000 records and 8,000 revisions.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

LOOP = r"""
import os, subprocess, sys
label, count = sys.argv[1], int(sys.argv[2])
errors = 0
for i in range(count):
    r = subprocess.run([sys.executable, "-m", "wardian", "memory", "save",
                        f"{label} record {i}", "--evidence", f"evidence {label} {i}"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not r.stdout.rstrip().endswith("Memory saved · This agent"):
        errors += 1
        sys.stderr.write(f"{label} {i}: rc={r.returncode} {r.stderr}")
print(f"errors={errors}")
sys.exit(1 if errors else 0)
"""


SAVE_TIMEOUT_S = 60
"""One `wardian memory save` process; the loop counts a timeout as an error."""
RUN_TIMEOUT_S = 600
"""All four launches together; past it every process is killed and the test fails."""


def _kill_tree(proc: subprocess.Popen[str]) -> None:
    """Kill `proc` and its descendants if still running (psutil: portable)."""
    import psutil

    if proc.poll() is not None:
        return
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    for child in [*children]:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    proc.kill()
    proc.communicate(timeout=30)


@pytest.mark.slow
@pytest.mark.timeout(RUN_TIMEOUT_S + 120)
def test_four_managed_launches_saving_100_each_through_the_cli(
    cli: CliRunner, tmp_path: Path, wardian_home: Path
) -> None:
    agent_id = json.loads(
        invoke(cli, "agent", "add", "ada", "--provider", "claude", "--json").stdout
    )["id"]
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP.replace("timeout=120", f"timeout={SAVE_TIMEOUT_S}"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    # Compile the save path's bytecode once, up front, instead of in four processes racing
    # to do it: a save without a capability imports the whole path, then fails closed.
    warm = subprocess.run(
        [sys.executable, "-m", "wardian", "memory", "save", "warm", "--evidence", "up"],
        capture_output=True, text=True, env=env, timeout=SAVE_TIMEOUT_S,
    )
    assert warm.returncode == 3, warm.stderr
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "wardian", "agent", "exec", "ada", "--",
             sys.executable, str(loop), f"p{n}", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for n in range(4)
    ]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        outcomes = [
            p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in procs
        ]
    finally:
        # On a timeout (or any failure) nothing is left running: kill the launches and,
        # through their process groups' children, the loops and saves under them.
        for proc in procs:
            _kill_tree(proc)
    for proc, (out, err) in zip(procs, outcomes, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "errors=0"
    conn = sqlite3.connect(wardian_home / "memory.db")
    try:
        texts = [r[0] for r in conn.execute("SELECT text FROM records WHERE agent_id = ?",
                                            (agent_id,))]
        caps = conn.execute("SELECT COUNT(DISTINCT token_hash), COUNT(*) FROM capabilities"
                            " WHERE revoked_at IS NOT NULL").fetchone()
    finally:
        conn.close()
    assert len(texts) == 400
    assert sorted(texts) == sorted(f"p{n} record {i}" for n in range(4) for i in range(100))
    assert tuple(caps) == (4, 4)


def test_eight_threads_of_1000_saves_in_process(wardian_home: Path) -> None:
    MemoryStore(open_memory_db())  # migrate once up front
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        store = MemoryStore(open_memory_db())
        try:
            barrier.wait()
            for i in range(1000):
                store.save(f"agent-{n % 2}", f"thread {n} save {i}", evidence="e",
                           scope=Scope.agent(), actor="test")
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = MemoryStore(open_memory_db())
    assert store.count("agent-0") + store.count("agent-1") == 8000
    revisions = store.conn.execute("SELECT COUNT(*) FROM revisions").fetchone()[0]
    distinct = store.conn.execute("SELECT COUNT(DISTINCT text) FROM records").fetchone()[0]
    assert revisions == 8000
    assert distinct == 8000
