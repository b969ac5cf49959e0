"""Private files: every directory Wardian creates is 0700 and every file 0600.

The modes are set explicitly (``chmod`` after creating), so they hold whatever the umask:
a umask of 022 would otherwise leave memory records, transcripts and logs readable by every
local user. Files a user names (an export path) get the same treatment.
On Windows the POSIX bits are not the access control; there the calls are harmless and the
per-user profile folder is what keeps the data private (docs/threat-model.md).

Spec: DESIGN.md "Storage"; docs/threat-model.md "Files".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "FileTooLarge",
    "NotRegularFile",
    "make_private",
    "open_private",
    "private_dir",
    "read_regular_file",
    "tighten_dir",
    "write_private",
]

DIR_MODE = 0o700
"""Mode of every directory Wardian creates."""
FILE_MODE = 0o600
"""Mode of every file Wardian creates."""


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) as 0700 directories; returns `path`.

    Parents that already exist are left alone (they may be the user's home); the ones
    created here, and `path` itself when created, are chmod-ed to 0700.

    Raises:
        OSError: as `os.mkdir` (FileExistsError when a component is a file).
    """
    missing: list[Path] = []
    probe = path
    while not probe.is_dir():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        _chmod(folder, DIR_MODE)
    return path


def tighten_dir(path: Path) -> int | None:
    """Take group/other permissions off an existing directory.

    Returns:
        The previous mode bits when they were wider than 0700 (and are now 0700), else None.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    if os.name == "nt" or not mode & 0o077:
        return None
    _chmod(path, DIR_MODE)
    return mode


def make_private(path: Path) -> None:
    """chmod an existing file to 0600 when it is wider (missing files are ignored)."""
    if os.name == "nt":
        return
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return
    if mode & 0o077:
        _chmod(path, FILE_MODE)


def open_private(path: Path, mode: str = "ab", **kwargs: Any) -> IO[Any]:
    """Open (creating as 0600) `path` for writing or appending; like `open` otherwise.

    Args:
        path: the file.
        mode: ``"a"``, ``"ab"``, ``"a+"``, ``"w"``, ``"wb"`` (binary or text).
        kwargs: passed to `os.fdopen` (encoding, …).
    """
    flags = os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    flags |= os.O_RDWR if "+" in mode else os.O_WRONLY
    flags |= getattr(os, "O_BINARY", 0) if "b" in mode else 0
    fd = os.open(path, flags, FILE_MODE)
    try:
        if os.name != "nt":
            os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def write_private(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` atomically (temp file + rename) as a 0600 file.

    Text is written as UTF-8 without newline translation.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open_private(tmp, "wb") as handle:
            handle.write(raw)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class NotRegularFile(ValueError):
    """An input path that is not a regular file (`kind`: ``a FIFO``, ``a directory``, …)."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.path = path
        self.kind = kind


class FileTooLarge(ValueError):
    """An input file larger than its cap (`limit` bytes)."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(f"{path} is larger than {limit:,} bytes")
        self.path = path
        self.limit = limit


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """Read an input file that must be a regular file of at most `max_bytes` bytes.

    Opened without blocking, so a FIFO or a device is refused at once instead of waiting
    for a writer; the size is checked before and while reading.

    Raises:
        NotRegularFile: a directory, FIFO, device or socket.
        FileTooLarge: more than `max_bytes` bytes.
        OSError: it cannot be opened (missing, permission).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise NotRegularFile(path, "a directory") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, _kind(info.st_mode))
        if info.st_size > max_bytes:
            raise FileTooLarge(path, max_bytes)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise FileTooLarge(path, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _chmod(path: Path, mode: int) -> None:
    if os.name != "nt":
        os.chmod(path, mode)
