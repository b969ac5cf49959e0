"""One advisory file lock, at the bottom of the package: taken without blocking, released by
the OS when its holder dies (also on kill -9), and *probed without being taken*.

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
"""

from __future__ import annotations

import os
import struct
import sys
import time
from pathlib import Path
from typing import IO

__all__ = ["PROBE_TAKES_LOCK", "PROBE_WINDOW_S", "FileLock"]

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


def _ofd(fh: IO[str], command: int, kind: int) -> int:
    """One ``fcntl`` OFD call over the whole file; returns the ``l_type`` the kernel gave."""
    import fcntl

    query = struct.pack(_FLOCK + "4x", kind, os.SEEK_SET, 0, 0, 0)
    answer = fcntl.fcntl(fh.fileno(), command, query)
    return int(struct.unpack(_FLOCK + "4x", answer)[0])


class FileLock:
    """A non-blocking advisory lock on one file; released by the OS when the holder dies.

    Args:
        path: the lock file (created private; the holder's pid is written into it for
            diagnosis).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None

    def acquire(self, wait_s: float = 0.0) -> bool:
        """Take the lock if free; True when this object now holds it.

        Args:
            wait_s: keep trying this long, in seconds (default: one try, or `PROBE_WINDOW_S`
                where probes take the lock). Never blocks beyond it.
        """
        deadline = time.monotonic() + max(wait_s, PROBE_WINDOW_S)
        while not self._try_acquire():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def _open(self) -> IO[str]:
        from wardian._fs import open_private, private_dir

        private_dir(self.path.parent)
        return open_private(self.path, "a+", encoding="utf-8")

    def _try_acquire(self, *, record_pid: bool = True) -> bool:
        if self._fh is not None:
            return True
        fh = self._open()  # held until release()
        try:
            if _OFD:
                import fcntl

                _ofd(fh, fcntl.F_OFD_SETLK, fcntl.F_WRLCK)
            elif sys.platform == "win32":  # pragma: no cover - exercised on Windows only
                import msvcrt

                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
            else:  # pragma: no cover - macOS
                import fcntl

                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        if record_pid:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()}\n")
            fh.flush()
        self._fh = fh
        return True

    def release(self) -> None:
        """Release the lock if held (closing the file drops it)."""
        fh, self._fh = self._fh, None
        if fh is None:
            return
        if sys.platform == "win32":  # pragma: no cover
            import msvcrt

            try:
                fh.seek(0)
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
        an immediate release (see the module docstring).
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
        if self._try_acquire(record_pid=False):  # pragma: no cover - macOS, Windows
            self.release()
            return False
        return True  # pragma: no cover

    def __enter__(self) -> FileLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
