"""Reporting a session close from the operator's command line (``wardian session close``).

Spec: CLI.md ``session close``; issue 20 (a missing or unreadable ``--transcript`` is
refused up front, exit 2, instead of being accepted and the run skipped later).
"""

from __future__ import annotations

from pathlib import Path

from wardian.errors import UsageError

__all__ = ["check_transcript"]


def check_transcript(path: str) -> str:
    """Return `path` as an absolute path when it names a readable regular file.

    Raises:
        UsageError (exit 2): missing, not a file, or not readable (the OS reason is named).
    """
    file = Path(path).expanduser()
    if not file.exists():
        raise UsageError(f"--transcript {path}: no such file",
                         hint="pass the session's transcript file (e.g. a .jsonl)")
    if not file.is_file():
        raise UsageError(f"--transcript {path}: not a regular file",
                         hint="pass the session's transcript file, not a directory")
    try:
        with file.open("rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise UsageError(f"--transcript {path}: cannot be read: {exc.strerror or exc}",
                         hint="check the file's permissions") from None
    return str(file.resolve())
