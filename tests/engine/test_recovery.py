"""Crash recovery: a run process killed with SIGKILL mid-step is marked interrupted on the
next engine entry, and resuming it does not repeat completed steps (counter files); a step
input that refers to an earlier step's output reads back the same before and after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.engine import crash_actions
from tests.engine.helpers import create_run, write_blueprint

from wardian.config import open_state_db
from wardian.engine.actions import unregister_action
from wardian.engine.executor import resume_run
from wardian.engine.runs import RunStore

REPO = Path(__file__).resolve().parents[2]

CRASH = """\
blueprint: {id: crash-demo, name: Crash, version: 1}
inputs:
  dir: {type: string}
steps:
  - id: one
    action: test_count
    with: {counter: "{{ inputs.dir }}/one.count"}
  - id: two
    action: test_block
    with:
      counter: "{{ inputs.dir }}/two.count"
      block_marker: "{{ inputs.dir }}/block"
      started: "{{ inputs.dir }}/started.fifo"
      release: "{{ inputs.dir }}/release.fifo"
      earlier: "{{ steps.one.output }}"
  - id: three
    action: test_count
    with: {counter: "{{ inputs.dir }}/three.count"}
"""


@pytest.fixture
def registered() -> Iterator[None]:
    crash_actions.register()
    yield
    for name in crash_actions.NAMES:
        unregister_action(name)


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_sigkill_mid_step_then_resume(tmp_path: Path, registered: None) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "started.fifo")
    os.mkfifo(work / "release.fifo")
    (work / "block").write_text("block step two")
    store = RunStore(open_state_db())
    run = create_run(store, write_blueprint(tmp_path / "bp", CRASH), inputs={"dir": str(work)})
    child = subprocess.Popen(
        [sys.executable, str(Path(crash_actions.__file__)), run.id], cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        with open(work / "started.fifo", encoding="utf-8") as fifo:  # blocks until step two
            assert fifo.read() == "running\n"
        assert store.get(run.id).status == "running"
        assert RunStore(open_state_db()).mark_interrupted_orphans() == []  # the owner is alive
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL

    interrupted = RunStore(open_state_db()).get(run.id, detail=True)  # opening the store recovers
    assert interrupted.status == "interrupted"
    assert [(a.step_id, a.status) for a in interrupted.attempts] == [
        ("one", "succeeded"), ("two", "interrupted")]
    assert "run.interrupted" in [e["kind"] for e in interrupted.events]

    (work / "block").unlink()
    final = resume_run(run.id, store=store)
    assert final.status == "succeeded", final.error
    assert (lines(work / "one.count"), lines(work / "two.count"),
            lines(work / "three.count")) == (1, 2, 1)
    assert [(a.step_id, a.attempt, a.status) for a in final.attempts] == [
        ("one", 1, "succeeded"), ("two", 1, "interrupted"), ("two", 2, "succeeded"),
        ("three", 1, "succeeded")]
    kinds = [e["kind"] for e in final.events]
    assert kinds.count("run.started") == 2 and "run.resumed" in kinds
    # step two's input refers to step one's output (stored once, by the killed process);
    # both its attempts, the killed one and the resumed one, read it back in full
    one = final.attempts[0].output
    for attempt in final.attempts[1:3]:
        assert attempt.input["with"]["earlier"] == one
        assert [(r.source(), r.attempt) for r in attempt.input_refs] == [("steps.one.output", 1)]
