"""A provider step dies with the engine that runs it.

An engine (``wardian serve``, a drain worker, ``automation run``) killed with SIGKILL while a
role step's provider CLI runs must not leave that CLI — or anything it started — running and
spending: the kernel ends the provider's supervisor with the engine, and the supervisor ends
the whole tree below it, also descendants that left the process group. After a restart the
run is marked interrupted exactly once.

Real parts: the engine is a child interpreter running `execute_run`, the provider is the fake
``claude`` CLI (tests/fakes/fake_provider.py, scenario ``hang``: it starts a grandchild and
sleeps), synchronised on a FIFO; the kill is a real SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.engine.helpers import hung_provider_run, start_engine
from tests.providers.conftest import FakeCli, fake_cli, gone  # noqa: F401 - a fixture
from tests.runtime.test_step_launch import BLUEPRINT, agents  # noqa: F401 - a fixture

from wardian.config import open_state_db
from wardian.engine.runs import RunStore

TARGETS = {
    "temporary_provider": {"target_type": "temporary_provider", "provider": "claude"},
    "agent": {"target_type": "agent", "agent": "ada"},
}

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the parent-death signal is Linux only (docs/threat-model.md)")


def _still_running(procs: list[psutil.Process]) -> list[int]:
    _gone, alive = psutil.wait_procs(procs, timeout=60)  # a bound, not a synchroniser
    return [p.pid for p in alive if not gone(p.pid)]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_an_engine_killed_mid_step_takes_the_provider_tree_with_it(
    target: str, agents: dict[str, str], fake_cli: FakeCli,  # noqa: F811
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, ready = hung_provider_run(tmp_path, monkeypatch, fake_cli, BLUEPRINT % "600s",
                                   {"worker": TARGETS[target]},
                                   ready_env="FAKE_PROVIDER_HANG_READY")
    engine = start_engine(run.id)
    tree: list[psutil.Process] = []
    try:
        with open(ready, encoding="utf-8") as fh:
            hello: dict[str, Any] = json.loads(fh.readline())
        tree = [psutil.Process(hello["pid"]), psutil.Process(hello["grandchild"])]
        engine.kill()
        engine.wait(timeout=60)
        assert _still_running(tree) == [], "the provider outlived its engine"
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait(timeout=60)
        for proc in tree:  # the check failed: clean up
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()

    # A restart (any store opened) marks the run interrupted, once, however often it opens.
    for _ in range(2):
        store = RunStore(open_state_db())
        after = store.get(run.id)
        events = [e["kind"] for e in store.events(run.id)]
        attempts = store.attempts(run.id)
        assert after.status == "interrupted", after
        assert events.count("run.interrupted") == 1, events
        assert [a.status for a in attempts] == ["interrupted"]
