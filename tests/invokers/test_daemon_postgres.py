"""One scheduler across machines that share a PostgreSQL database (issue 18).

Two data directories stand for two machines: each has its own file lock, so only the
database's session advisory lock can keep the second ``wardian serve`` from scheduling.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wardian.invokers.daemon import ScheduleDaemon
from wardian.invokers.daemon_lock import DaemonAlreadyRunning


def test_a_second_machine_cannot_start_a_second_scheduler(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    machines = []
    for name in ("machine-a", "machine-b"):
        home = tmp_path / name
        home.mkdir(mode=0o700)
        machines.append(home)
    monkeypatch.setenv("WARDIAN_HOME", str(machines[0]))
    first = ScheduleDaemon()
    first.acquire()
    try:
        monkeypatch.setenv("WARDIAN_HOME", str(machines[1]))
        second = ScheduleDaemon()
        with pytest.raises(DaemonAlreadyRunning) as refused:
            second.acquire()
        assert "another machine" in str(refused.value) and refused.value.exit_code == 4
        # Its own machine's file lock was given back: nothing is left held there.
        from wardian.runtime.session_events import daemon_lock

        assert not daemon_lock().held_elsewhere()
    finally:
        first.release()
    second.acquire()  # the first one stopped: the lock is free for any machine
    second.release()
