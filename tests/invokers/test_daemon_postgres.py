"""One scheduler across machines that share a PostgreSQL database (issue 18).

Two data directories stand for two machines: each has its own file lock, so only the
database's session advisory lock can keep the second ``wardian serve`` from scheduling.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.waits import wait_until

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


def test_a_standby_waits_in_the_server_and_takes_over_or_stops(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`wait_for_locks` on a second machine: it holds its own machine's lock and queues for
    the database's scheduler lock in the server (no polling connection after connection);
    a stop request ends the wait holding nothing; a release by the first hands over."""
    import threading

    import psycopg

    from wardian.runtime.session_events import daemon_lock

    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    for name in ("machine-a", "machine-b"):
        (tmp_path / name).mkdir(mode=0o700)
    monkeypatch.setenv("WARDIAN_HOME", str(tmp_path / "machine-a"))
    first = ScheduleDaemon()
    first.acquire()
    monkeypatch.setenv("WARDIAN_HOME", str(tmp_path / "machine-b"))

    def standby() -> tuple[ScheduleDaemon, list[str], list[bool], threading.Thread]:
        lines: list[str] = []
        result: list[bool] = []
        daemon = ScheduleDaemon(log=lines.append)
        thread = threading.Thread(target=lambda: result.append(daemon.wait_for_locks()))
        thread.start()
        with psycopg.connect(pg_url, autocommit=True) as conn:  # until it queues
            wait_until(lambda: conn.execute("SELECT 1 FROM pg_locks WHERE locktype ="
                                            " 'advisory' AND NOT granted").fetchone(),
                       what="the standby queued for the scheduler lock", watch=[thread],
                       detail=lambda: result)
        return daemon, lines, result, thread

    try:
        daemon, lines, result, thread = standby()
        assert daemon_lock().held_elsewhere()  # machine B's lock, held by its standby
        assert "another machine" in lines[0] and "standby" in lines[0]
        daemon.request_stop()
        thread.join(30)
        assert result == [False] and not daemon_lock().held_elsewhere()

        daemon, lines, result, thread = standby()
        first.release()
        thread.join(30)
        assert result == [True] and "standby taking over" in lines[-1]
        daemon.release()
    finally:
        first.release()
