"""The child-process runner: own session, timeout, whole-tree kill, capped output, stdin."""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

import psutil
import pytest

from tests.providers.conftest import gone, time_out_once_ready
from tests.waits import wait_until
from wardian._process import end_tree
from wardian.providers._cli import CliAdapter
from wardian.providers.errors import ProviderCancelled, ProviderNotInstalled
from wardian.providers.process import fits_argv, run_process

PY = sys.executable


def spawn_tree_script(pid_file: Path) -> list[str]:
    code = (
        "import subprocess, sys, time, pathlib\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(g.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    return [PY, "-c", code]


def test_timeout_kills_child_and_grandchild(tmp_path: Path) -> None:
    pid_file = tmp_path / "gc.pid"
    error = time_out_once_ready(pid_file, lambda timeout_s: run_process(
        spawn_tree_script(pid_file), provider="test", timeout_s=timeout_s))
    assert re.search(r"within [0-9.]+ s", str(error)), error
    assert gone(int(pid_file.read_text()))


def test_cancel_kills_the_tree(tmp_path: Path) -> None:
    pid_file = tmp_path / "gc.pid"
    cancel = threading.Event()
    grandchild: list[str] = []

    def watch() -> None:
        # Cancel once the tree is complete (its grandchild's pid written), never on a timer.
        try:
            grandchild.append(wait_until(
                lambda: pid_file.read_text() if pid_file.exists() else "",
                what="the grandchild's pid file written"))
        finally:
            cancel.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    with pytest.raises(ProviderCancelled):
        run_process(spawn_tree_script(pid_file), provider="test", timeout_s=60, cancel=cancel)
    watcher.join()
    assert grandchild, "the tree never wrote its grandchild's pid (the watcher's failure above)"
    assert gone(int(grandchild[0]))


def test_stdin_and_output_are_captured_with_a_cap() -> None:
    data = "é" * 300_000
    code = "import sys; d = sys.stdin.read(); sys.stdout.write(d); sys.stderr.write('err')"
    result = run_process([PY, "-c", code], provider="test", stdin_text=data, timeout_s=30,
                         max_output_bytes=1000)
    assert result.returncode == 0
    assert result.stdout_truncated and len(result.stdout.encode()) <= 1000
    assert result.stderr == "err" and not result.stderr_truncated


def test_child_runs_in_its_own_session() -> None:
    code = "import os; print(os.getsid(0))"
    if sys.platform == "win32":
        pytest.skip("sessions are POSIX")
    result = run_process([PY, "-c", code], provider="test", timeout_s=30)
    assert int(result.stdout) != psutil.Process().pid
    import os

    assert int(result.stdout) != os.getsid(0)


def test_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(ProviderNotInstalled):
        run_process([str(tmp_path / "nope")], provider="test", timeout_s=5)


def test_end_tree_on_a_finished_pid_is_harmless() -> None:
    proc = psutil.Popen([PY, "-c", "pass"])
    proc.wait()
    assert end_tree(proc.pid, grace_s=0.1) == []


def test_argument_limit() -> None:
    assert fits_argv("short")
    assert not fits_argv("x" * 1024 * 1024)
    assert not fits_argv("nul\x00byte")
    assert not fits_argv("- a markdown list is not an option"), "would be parsed as a flag"


@pytest.mark.skipif(sys.platform == "win32", reason="sessions are POSIX")
def test_timeout_kills_a_grandchild_that_left_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "gc.pid"
    code = (
        "import subprocess, sys, time, pathlib, os\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True)\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(g.pid))\n"
        "time.sleep(600)\n"
    )
    time_out_once_ready(pid_file, lambda timeout_s: run_process(
        [PY, "-c", code], provider="test", timeout_s=timeout_s))
    assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(sys.platform == "win32", reason="sessions are POSIX")
def test_a_grandchild_holding_the_pipes_after_exit_does_not_hang_us(tmp_path: Path) -> None:
    pid_file = tmp_path / "gc.pid"
    code = (
        "import subprocess, sys, pathlib\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(g.pid))\n"
        "print('done', flush=True)\n"
    )
    # The grandchild would hold the pipes for 600 s and the deadline is an hour away: the
    # only way back (before pytest's own timeout) is run_process ending it once the child
    # has exited, not waiting for the pipes to close or for the deadline.
    result = run_process([PY, "-c", code], provider="test", timeout_s=3600)
    assert result.returncode == 0 and result.stdout.strip() == "done"
    assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the provider supervisor is Linux only (its subreaper call)")
def test_a_detached_descendant_does_not_outlive_the_provider() -> None:
    # Detached from the session and from the pipes, as a daemonised helper would be: only
    # the supervisor (a subreaper the orphan is re-parented to) still sees it.
    code = (
        "import subprocess, sys\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,"
        " stderr=subprocess.DEVNULL)\n"
        "print(g.pid, flush=True)\n"
    )
    result = run_process([PY, "-c", code], provider="test", timeout_s=3600)
    pid = int(result.stdout)
    try:
        assert result.returncode == 0
        assert gone(pid)  # ended before the supervisor exited, not some time later
    finally:
        if not gone(pid):
            psutil.Process(pid).kill()


def test_a_provider_killed_by_a_signal_reports_it_as_a_shell_does() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    result = run_process([PY, "-c", code], provider="test", timeout_s=60)
    assert result.returncode in (-9, 137)  # direct child / through the supervisor


def test_a_cli_adapter_refuses_output_cut_at_the_cap() -> None:
    """Past the cap the answer (which comes last) is gone: a clear error, not a parse error."""
    from wardian.providers.base import ProviderRequest
    from wardian.providers.errors import ProviderError
    from wardian.providers.registry import get_adapter

    adapter = get_adapter("codex")
    assert isinstance(adapter, CliAdapter)
    argv = [sys.executable, "-c", "print('x' * 5000); print('{\"type\": \"turn.completed\"}')"]
    request = ProviderRequest(provider="codex", timeout_s=30)
    with pytest.raises(ProviderError, match=r"more than 1,000 bytes to stdout"):
        adapter.execute(argv, request, env=dict(os.environ), max_output_bytes=1000)
    assert adapter.execute(argv, request, env=dict(os.environ)).returncode == 0
