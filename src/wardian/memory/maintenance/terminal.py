"""Confirmation on the controlling terminal — the one place that touches it.

Spec "Native confirmation and atomic apply": the confirmation shows owner id, operation
count and ``sha256:`` + 12 hex of the digest; declining or dismissing aborts with zero
changes. The CLI equivalent of the native dialog is the controlling terminal (``/dev/tty``
on POSIX, ``CONIN$``/``CONOUT$`` on Windows), never stdin, so a piped or scripted caller
cannot answer for the operator; a process without one (a script started with a new
session, a service, a cron job) cannot be asked at all and is refused.
"""

from __future__ import annotations

import os

__all__ = ["NoTerminal", "confirm_on_terminal"]


class NoTerminal(Exception):
    """There is no controlling terminal to ask on (internal; the caller turns it into
    `wardian.memory.maintenance.errors.TerminalRequired`)."""


def _ask_windows(prompt: str) -> str:  # pragma: no cover - exercised on Windows only
    with open("CONOUT$", "w", encoding="utf-8") as writer:
        writer.write(prompt)
        writer.flush()
    with open("CONIN$", encoding="utf-8") as reader:
        return reader.readline()


def _ask_posix(prompt: str) -> str:
    fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    try:
        os.write(fd, prompt.encode("utf-8"))
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = os.read(fd, 256)
            if not chunk:
                break
            answer += chunk
    finally:
        os.close(fd)
    return answer.decode("utf-8", errors="replace")


def confirm_on_terminal(prompt: str) -> bool:
    """Print `prompt` on the controlling terminal and read one line from it.

    Returns:
        True only when the answer is ``yes`` or ``y`` (any case); anything else, or
        end of input, is a refusal.

    Raises:
        NoTerminal: the process has no controlling terminal (or it cannot be used).
    """
    try:
        answer = _ask_windows(prompt) if os.name == "nt" else _ask_posix(prompt)
    except OSError as exc:
        device = "CONIN$" if os.name == "nt" else "/dev/tty"
        raise NoTerminal(f"{device}: {exc.strerror or exc}") from exc
    return answer.strip().lower() in {"y", "yes"}
