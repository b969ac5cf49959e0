"""One advisory file lock, at the bottom of the package: taken without blocking, released by
the OS when its holder dies (also on kill -9), *probed without being taken*, and naming its
holder by process identity.

The drain lock and the daemon lock (`wardian.runtime.session_events`) are this lock on
``<data dir>/locks/*.lock``. Event writers ask "does a daemon (a worker) hold it?" on every
session end; a probe that took the lock for a moment could make the real holder's attempt
fail at that instant, which is why starters once retried for 0.2 s.

On Linux the lock is an open-file-description lock (``F_OFD_SETLK``: owned by the open file,
like ``flock``, so two objects in one process exclude each other) and a probe asks the
kernel who holds it (``F_OFD_GETLK``) without taking it. Where OFD locks do not exist
(macOS, Windows) the lock is ``flock`` / ``msvcrt.locking`` and a probe has to take it for
a few microseconds; there, and only there, `FileLock.acquire` retries for
`PROBE_WINDOW_S` so that a probe never makes a real holder give up.

**The holder record.** Whoever takes the lock writes its process identity (pid and start
time, `wardian._process`) and the time it took the lock into the lock file, as one JSON
line; a clean release empties it. A refused acquirer or a status command reads it with
`FileLock.holder`. A record left by a holder killed with -9 names a dead process, or a pid
the OS has since given to another process (another start time): both are stale and
ignored, by the one identity test `wardian._process.is_alive`.

Taking the lock and writing the record are two steps, so a reader could look between them.
They happen under a short *gate*: a second lock, on ``<lock file>.gate``, which acquirers
hold (blocking) around "take the lock, write the record" and readers take (blocking) before
reading the record. A reader that saw the lock held therefore waits exactly until the holder
has described itself — on the kernel's wait queue, no sleep loop, no fixed time — and the
OS releases the gate of a process that dies inside it. Probes never touch the gate.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian._process import ProcessIdentity

if TYPE_CHECKING:
    from typing import IO

__all__ = ["PROBE_TAKES_LOCK", "PROBE_WINDOW_S", "FileLock", "LockHolder"]

_OFD = sys.platform.startswith("linux")
if _OFD:
    import fcntl

    _OFD = hasattr(fcntl, "F_OFD_SETLK")

PROBE_TAKES_LOCK = not _OFD
"""Whether `FileLock.held_elsewhere` has to take the lock for a moment (no OFD locks)."""

PROBE_WINDOW_S = 0.2 if PROBE_TAKES_LOCK else 0.0
"""How long `acquire` keeps trying where probes take the lock (seconds); 0 on Linux."""

# struct flock {short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid;}
_FLOCK = "hhqqi"

_WIN_LOCK_AT = 1 << 30
"""Windows locks are mandatory: the locked byte lies far past the record, so it stays
readable (a lock past the end of a file is allowed there)."""


def _ofd(fh: IO[str], command: int, kind: int) -> int:
    """One ``fcntl`` OFD call over the whole file; returns the ``l_type`` the kernel gave."""
    import fcntl

    query = struct.pack(_FLOCK + "4x", kind, os.SEEK_SET, 0, 0, 0)
    answer = fcntl.fcntl(fh.fileno(), command, query)
    return int(struct.unpack(_FLOCK + "4x", answer)[0])


class LockHolder(NamedTuple):
    """The live process that holds a lock: its identity and when it took the lock (UTC
    ISO-8601 with ``Z``)."""

    identity: ProcessIdentity
    since: str

    @property
    def pid(self) -> int:
        """The holder's pid."""
        return self.identity.pid


class FileLock:
    """A non-blocking advisory lock on one file; released by the OS when the holder dies.

    Args:
        path: the lock file (created private; the holder's record is written into it, see
            the module docstring).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def acquire(self, wait_s: float = 0.0) -> bool:
        """Take the lock if free and write this process's holder record; True when this
        object now holds it.

        Args:
            wait_s: keep trying this long, in seconds (default: one try, or `PROBE_WINDOW_S`
                where probes take the lock). Never blocks beyond it (the gate is held by
                others only while they write their record).
        """
        deadline = time.monotonic() + max(wait_s, PROBE_WINDOW_S)
        while True:
            with self._gate():
                if self._try_acquire():
                    self._write_record()
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)  # pragma: no cover - only where probes take the lock

    def _open(self, path: Path | None = None) -> IO[str]:
        from wardian._fs import open_private, private_dir

        target = path or self.path
        private_dir(target.parent)
        return open_private(target, "a+", encoding="utf-8")

    @contextmanager
    def _gate(self) -> Iterator[None]:
        """Hold the gate (blocking) for the block; see the module docstring."""
        fh = self._open(self.path.with_name(self.path.name + ".gate"))
        try:
            # Windows gives up after 10 s (OSError): the caller reads or writes anyway.
            with suppress(OSError):
                _lock_file(fh, blocking=True)
            yield
        finally:
            fh.close()  # drops the gate

    def _try_acquire(self) -> bool:
        if self._fh is not None:
            return True
        fh = self._open()  # held until release()
        try:
            _lock_file(fh, blocking=False)
        except OSError:
            fh.close()
            return False
        self._fh = fh
        return True

    def _write_record(self) -> None:
        from wardian._process import current
        from wardian._util import utc_now_iso

        assert self._fh is not None
        me = current()
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(json.dumps({"pid": me.pid, "started_at": me.started_at,
                                   "since": utc_now_iso()}) + "\n")
        self._fh.flush()

    def release(self) -> None:
        """Release the lock if held: empty the holder record, then close (dropping it)."""
        fh, self._fh = self._fh, None
        if fh is None:
            return
        with suppress(OSError):
            fh.seek(0)
            fh.truncate()
        if sys.platform == "win32":  # pragma: no cover
            import msvcrt

            try:
                fh.seek(_WIN_LOCK_AT)
                msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
            except OSError:
                pass
        fh.close()

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fh is not None

    def held_elsewhere(self) -> bool:
        """Whether another process (or another object in this one) holds the lock now.

        On Linux a question to the kernel that leaves the lock alone; elsewhere a take and
        an immediate release (see the module docstring). Never waits.
        """
        if self._fh is not None:
            return False
        if not self.path.exists():
            return False
        if _OFD:
            import fcntl

            try:
                fh = self._open()
            except OSError:
                return False
            try:
                return _ofd(fh, fcntl.F_OFD_GETLK, fcntl.F_WRLCK) != fcntl.F_UNLCK
            except OSError:
                return False
            finally:
                fh.close()
        if self._try_acquire():  # pragma: no cover - macOS, Windows
            self.release()  # it was free: the record it empties was stale
            return False
        return True  # pragma: no cover

    def holder(self) -> LockHolder | None:
        """The live process holding the lock now (this one too, when this object or another
        object here holds it), or None when it is free or its holder cannot be named.

        Waits on the gate until a holder that has just taken the lock has written its record
        (microseconds; module docstring), never on a timer. A record naming a dead process
        or a recycled pid (same pid, another start time) is stale: None.
        """
        if self._fh is None and not self.held_elsewhere():
            return None
        with self._gate():
            try:
                with open(self.path, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                return None
        found = _parse_record(text)
        if found is None:
            return None
        from wardian._process import is_alive

        if not is_alive(found.identity.pid, found.identity.started_at):
            return None
        return found

    def __enter__(self) -> FileLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _parse_record(text: str) -> LockHolder | None:
    """The holder record of a lock file, or None when it is empty or malformed (an older
    Wardian wrote the bare pid: no start time, so it cannot be trusted)."""
    try:
        info = json.loads(text)
        return LockHolder(ProcessIdentity(int(info["pid"]), float(info["started_at"])),
                          str(info["since"]))
    except (ValueError, KeyError, TypeError):
        return None


def _lock_file(fh: IO[str], *, blocking: bool) -> None:
    """Take an exclusive lock on `fh`'s file; raises `OSError` when it is held elsewhere
    (non-blocking) or cannot be taken."""
    if _OFD:
        import fcntl

        _ofd(fh, fcntl.F_OFD_SETLKW if blocking else fcntl.F_OFD_SETLK, fcntl.F_WRLCK)
    elif sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        fh.seek(_WIN_LOCK_AT)
        msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK, 1)
    else:  # pragma: no cover - macOS
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
