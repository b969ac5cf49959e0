"""Portable process identity (`wardian.runtime.process`): pid + start time via psutil."""

from __future__ import annotations

import os
import subprocess
import sys

from wardian.runtime.process import ProcessIdentity, ancestors, current, identity_of, is_alive


def test_current_process_is_alive_and_stable() -> None:
    me = current()
    assert me.pid == os.getpid()
    assert is_alive(me.pid, me.started_at)
    assert identity_of(me.pid) is not None
    assert identity_of(me.pid).matches(me)  # type: ignore[union-attr]


def test_another_start_time_is_another_process() -> None:
    me = current()
    assert not is_alive(me.pid, me.started_at - 3600)
    assert not ProcessIdentity(me.pid, me.started_at + 5).matches(me)


def test_ended_process_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    found = identity_of(child.pid)
    assert found is not None and is_alive(found.pid, found.started_at)
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=60)
    assert not is_alive(found.pid, found.started_at)


def test_ancestors_include_the_parent() -> None:
    parents = [p.pid for p in ancestors()]
    assert parents and parents[0] == os.getppid()
