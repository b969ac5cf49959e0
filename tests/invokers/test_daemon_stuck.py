"""`wardian serve` exits on SIGTERM even when a run ignores its cancel (DESIGN.md "Invokers":
what still runs 10 s after the cancel is left for the next start to mark interrupted).

Python waits at exit for every thread of a ThreadPoolExecutor; a run whose action never
returns kept its worker thread, and with it the whole daemon, alive for ever.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.waits import wait_until

from wardian.app.schedules import add_schedule, set_schedule_enabled
from wardian.config import open_state_db, user_library_dir
from wardian.engine.actions import register_action, unregister_action
from wardian.engine.runs import RunStore
from wardian.runtime.agents import AgentRegistry

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

BLUEPRINT = """\
blueprint:
  id: stuck
  name: Stuck
  description: Its one step never returns and ignores should_stop.
  version: 1
triggers: [schedule]
steps:
  - id: hang
    action: test.stuck
"""

# `wardian serve` itself, with one more action registered first (no entry point needed).
SERVE = """
import sys, threading
from wardian.engine.actions import register_action

@register_action("test.stuck")
def stuck(ctx):
    threading.Event().wait()  # never returns, never looks at ctx.should_stop()

from wardian.cli.main import main
sys.argv = ["wardian", "serve", "--shutdown-timeout", "0"]
main()
"""


@pytest.fixture
def stuck_action() -> Iterator[None]:
    """The action known here too (adding the schedule validates the blueprint)."""
    register_action("test.stuck")(lambda ctx: None)
    yield
    unregister_action("test.stuck")


def test_sigterm_ends_the_daemon_although_a_run_never_returns(tmp_path: Path,
                                                              stuck_action: None) -> None:
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stuck.yaml").write_text(BLUEPRINT)
    AgentRegistry(open_state_db()).add("coder", "builtin", model="curator-rules")
    invoker = add_schedule(open_state_db(), blueprint_id="stuck", name="stuck", agent="coder",
                           assignments="{}", every_s=1.0)
    set_schedule_enabled(open_state_db(), invoker.id, True)
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-c", SERVE], stdout=out,
                                stderr=subprocess.STDOUT, env=dict(os.environ))
    try:
        runs = RunStore(open_state_db(), recover=False)
        wait_until(lambda: runs.list(invoker_id=invoker.id, status="running", limit=1),
                   what="the stuck run started", watch=[proc], detail=log.read_text)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(120)  # cancel grace 10 s; the old daemon never got here
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    text = log.read_text()
    assert code == 0, text
    assert "exiting with 1 run(s) still running" in text
