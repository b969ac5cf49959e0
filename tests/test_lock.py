"""The file lock at the bottom (`wardian._lock`): exclusive, dies with its holder, and
probed without being taken, so a probe never makes a real acquirer fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waits import wait_until
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


HOLDER = """
import sys
from pathlib import Path
from wardian._lock import FileLock
lock = FileLock(Path(sys.argv[1]))
print("held" if lock.acquire() else "refused", flush=True)
sys.stdin.read()
"""


def _holding(path: Path) -> subprocess.Popen[str]:
    """A child process that holds the lock at `path` until its stdin closes."""
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def _end(child: subprocess.Popen[str], *, kill: bool = False) -> None:
    if kill:
        child.kill()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            stream.close()
    child.wait(timeout=60)


def test_the_holder_is_named_by_its_process_identity(tmp_path: Path) -> None:
    from wardian._process import identity_of

    path = tmp_path / "x.lock"
    child = _holding(path)
    try:
        found = FileLock(path).holder()
        assert found is not None and found.identity == identity_of(child.pid)
        assert found.since.endswith("Z")
        assert not FileLock(path).acquire()
    finally:
        _end(child)
    # A clean exit released the lock and the record with it.
    assert FileLock(path).holder() is None


def test_a_killed_holders_record_is_stale_and_the_lock_free(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    child = _holding(path)
    _end(child, kill=True)  # kill -9: the record stays, the OS drops the lock
    assert f'"pid": {child.pid}' in path.read_text()
    lock = FileLock(path)
    assert lock.holder() is None and lock.acquire()
    try:
        found = lock.holder()  # the new record is this process's
        assert found is not None and found.pid == os.getpid()
    finally:
        lock.release()


def test_a_record_naming_a_recycled_pid_is_not_trusted(tmp_path: Path) -> None:
    # The lock is held, but its record names the right pid with another start time (what
    # a pid the OS gave to a new process looks like): the holder cannot be named.
    import json

    path = tmp_path / "x.lock"
    child = _holding(path)
    try:
        record = json.loads(path.read_text())
        assert FileLock(path).holder() is not None
        path.write_text(json.dumps({**record, "started_at": record["started_at"] - 3600}))
        assert FileLock(path).holder() is None
        assert FileLock(path).held_elsewhere()  # still held: only the name is refused
        path.write_text(f"{child.pid}\n")  # the bare pid an older Wardian wrote
        assert FileLock(path).holder() is None
    finally:
        _end(child)


GATED = """
import sys
from pathlib import Path
from wardian._lock import FileLock
lock = FileLock(Path(sys.argv[1]))
with lock._gate():
    assert lock._try_acquire()
    print("locked", flush=True)   # held, not yet described
    sys.stdin.readline()
    lock._write_record()
print("described", flush=True)
sys.stdin.read()
"""


def _gate_waiters(gate: Path) -> int:
    """Lock requests the kernel has queued on `gate` (``/proc/locks`` marks them ``->``)."""
    inode = gate.stat().st_ino
    with open("/proc/locks", encoding="ascii") as fh:
        return sum(1 for line in fh
                   if "->" in line and line.split()[-3].endswith(f":{inode}"))


@pytest.mark.skipif(PROBE_TAKES_LOCK, reason="reads the kernel's lock table (Linux)")
def test_a_reader_waits_on_the_gate_until_the_holder_has_described_itself(
        tmp_path: Path) -> None:
    import threading

    path = tmp_path / "x.lock"
    child = subprocess.Popen([sys.executable, "-c", GATED, str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdin is not None and child.stdout is not None
        assert child.stdout.readline().strip() == "locked"
        assert FileLock(path).held_elsewhere()  # held, and its record still empty
        found: list[object] = []
        reader = threading.Thread(target=lambda: found.append(FileLock(path).holder()))
        reader.start()
        gate = path.with_name(path.name + ".gate")
        # Until the kernel shows the reader queued on the gate; a reader that ended first
        # did not wait for the holder's record.
        wait_until(lambda: _gate_waiters(gate), what="the reader queued on the gate",
                   watch=[reader], detail=lambda: f"the reader found {found}")
        assert not found, "the reader did not wait for the holder's record"
        child.stdin.write("go\n")
        child.stdin.flush()
        reader.join(timeout=60)
        assert child.stdout.readline().strip() == "described"
        assert len(found) == 1 and getattr(found[0], "pid", None) == child.pid
    finally:
        _end(child)
