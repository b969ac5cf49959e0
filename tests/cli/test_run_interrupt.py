"""Ctrl-C during `automation run start|resume --wait` says which run stopped and how to
continue it (operator trial: it printed only "Error: interrupted", and with --wait the run
id is printed only at the end). Real parts: the CLI in a child process, the fake `claude`
CLI hanging in the role step (synchronised on a FIFO), a real SIGINT."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.engine.helpers import write_blueprint
from tests.providers.conftest import FakeCli, fake_cli  # noqa: F401 - a fixture
from tests.runtime.test_step_launch import BLUEPRINT

from wardian.config import open_state_db
from wardian.engine.runs import RunStore

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child is POSIX")]

ASSIGN = json.dumps({"worker": {"target_type": "temporary_provider", "provider": "claude"}})


def _interrupt(argv: list[str], ready: Path) -> subprocess.CompletedProcess[str]:
    child = subprocess.Popen([sys.executable, "-m", "wardian", *argv], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def unblock() -> None:  # a child that ends before its step runs must not hang us
        child.wait()
        with contextlib.suppress(OSError):
            os.close(os.open(ready, os.O_WRONLY | os.O_NONBLOCK))

    watcher = threading.Thread(target=unblock, daemon=True)
    watcher.start()
    try:
        with open(ready, encoding="utf-8") as fh:  # the provider step is running
            hello = fh.readline()
        if hello:
            child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
        assert hello, f"the run ended before its step ran: {err}"
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
        watcher.join(timeout=60)
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def test_ctrl_c_names_the_run_and_the_resume_command(
        fake_cli: FakeCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    ready = tmp_path / "hang.fifo"
    os.mkfifo(ready)
    monkeypatch.setenv("FAKE_PROVIDER_HANG_READY", str(ready))
    fake_cli.scenario("hang")
    for argv in (("agent", "add", "ada", "--provider", "claude"),
                 ("agent", "models", "--provider", "claude", "--refresh")):
        done = subprocess.run([sys.executable, "-m", "wardian", *argv], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    path = write_blueprint(tmp_path / "bp", BLUEPRINT % "600s")
    stopped = _interrupt(["automation", "run", "start", str(path), "--agent", "ada",
                          "--assignments", ASSIGN, "--wait"], ready)
    assert stopped.returncode == 130, stopped.stderr
    store = RunStore(open_state_db(), recover=False)
    (run,) = store.list()
    assert run.status == "interrupted"
    assert stopped.stderr.count("\n") == 1, stopped.stderr
    assert stopped.stderr.startswith("Error: interrupted: ") and run.id[:8] in stopped.stderr
    assert f"wardian automation run resume {run.id[:8]}" in stopped.stderr
    again = _interrupt(["automation", "run", "resume", run.id[:8], "--wait"], ready)
    assert again.returncode == 130, again.stderr
    assert f"wardian automation run resume {run.id[:8]}" in again.stderr
