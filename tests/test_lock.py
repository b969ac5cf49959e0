"""The file lock at the bottom (`wardian._lock`): exclusive, dies with its holder, and
probed without being taken, so a probe never makes a real acquirer fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wardian._lock import PROBE_TAKES_LOCK, FileLock

PROBER = """
import sys
from pathlib import Path
from wardian._lock import FileLock
probe, stop = FileLock(Path(sys.argv[1])), Path(sys.argv[2])
print("ready", flush=True)
seen = 0
while not stop.exists():
    seen += probe.held_elsewhere()
print(seen, flush=True)
"""


def test_two_objects_exclude_each_other_and_probe_each_other(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "x.lock"), FileLock(tmp_path / "x.lock")
    assert not second.held_elsewhere()
    assert first.acquire()
    assert second.held_elsewhere() and not first.held_elsewhere()
    assert not second.acquire()
    assert first.held_elsewhere() is False  # its own lock is not "elsewhere"
    first.release()
    assert not second.held_elsewhere() and second.acquire()
    second.release()


@pytest.mark.skipif(PROBE_TAKES_LOCK, reason="probes take the lock on this platform")
def test_a_probe_never_makes_an_acquirer_fail(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    path.touch()
    lock = FileLock(path)
    stop = tmp_path / "stop"
    prober = subprocess.Popen([sys.executable, "-c", PROBER, str(path), str(stop)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert prober.stdout is not None and prober.stdout.readline().strip() == "ready"
        failed = 0
        for _ in range(3000):  # while the child probes as fast as it can
            if lock.acquire():  # one try: no retry window on this platform
                lock.release()
            else:
                failed += 1
        stop.touch()
        probes_saw_held = int(prober.stdout.readline())
    finally:
        prober.wait(timeout=120)
        if prober.stdout is not None:
            prober.stdout.close()
    assert failed == 0
    assert probes_saw_held > 0  # the probes did see it held at times: they really looked
