"""Confirmation on the controlling terminal — the one place that touches it.

Spec "Native confirmation and atomic apply": the confirmation shows owner id, operation
count and ``sha256:`` + 12 hex of the digest; declining or dismissing aborts with zero
changes. The CLI equivalent of the native dialog is the controlling terminal (``/dev/tty``
on POSIX, ``CONIN$``/``CONOUT$`` on Windows), never stdin, so a piped or scripted caller
cannot answer for the operator.
"""

from __future__ import annotations

import os
from typing import IO

__all__ = ["NoTerminal", "confirm_on_terminal"]


class NoTerminal(Exception):
    """There is no controlling terminal to ask on (internal; apply turns it into an abort)."""


def _open_terminal() -> tuple[IO[str], IO[str]]:
    try:
        if os.name == "nt":
            reader = open("CONIN$", encoding="utf-8")  # noqa: SIM115 - closed by caller
            writer = open("CONOUT$", "w", encoding="utf-8")  # noqa: SIM115
            return reader, writer
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        handle = os.fdopen(fd, "r+", buffering=1, encoding="utf-8")
        return handle, handle
    except OSError as exc:
        raise NoTerminal(str(exc)) from exc


def confirm_on_terminal(prompt: str) -> bool:
    """Print `prompt` on the controlling terminal and read one line.

    Returns:
        True only when the answer is ``yes`` or ``y`` (any case); anything else, or
        end of input, is a refusal.

    Raises:
        NoTerminal: the process has no controlling terminal.
    """
    reader, writer = _open_terminal()
    try:
        writer.write(prompt)
        writer.flush()
        answer = reader.readline()
    except OSError as exc:
        raise NoTerminal(str(exc)) from exc
    finally:
        reader.close()
        if writer is not reader:
            writer.close()
    return answer.strip().lower() in {"y", "yes"}
