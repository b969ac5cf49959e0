"""Run the real `wardian` CLI in a child process, with a controlling terminal or without.

The operator's confirmation is read from the controlling terminal (``/dev/tty``), never
from stdin or a flag. Tests reach it the honest way: `on_terminal` starts the CLI in a new
session whose controlling terminal is a fresh pseudo-terminal, waits for the question on
the terminal and types the answer; `without_terminal` starts it in a new session with no
controlling terminal at all (what a script, a service or an agent's shell has after
``setsid``). Stdin is separate from the terminal in both, so a test can prove that an
answer on stdin is not taken.

Nothing here waits on the clock: reading the terminal ends when the child has closed it
(``EIO`` on the master once no process holds the slave).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TAKE_TERMINAL", "Run", "answer_when_asked", "on_terminal", "read_until_closed",
           "without_terminal"]

# The child takes its terminal as its controlling one, then becomes `python -m wardian`,
# keeping the descriptor open: the terminal stays held until the CLI exits, so the parent's
# read ends (EIO) only then.
TAKE_TERMINAL = (
    "import fcntl, os, sys, termios\n"
    "fd = int(sys.argv[1])\n"
    "fcntl.ioctl(fd, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'wardian', *sys.argv[2:]])\n"
)


@dataclass(frozen=True)
class Run:
    """A finished CLI run: exit code, stdout, stderr, and what the terminal showed."""

    returncode: int
    stdout: str
    stderr: str
    screen: str = ""

    @property
    def exit_code(self) -> int:
        """The exit code, under the name click's `Result` gives it."""
        return self.returncode


def _env(env: dict[str, str] | None) -> dict[str, str]:
    return dict(os.environ if env is None else env)


def without_terminal(*args: str, stdin: str = "", env: dict[str, str] | None = None,
                     cwd: Path | None = None) -> Run:
    """`wardian ARGS…` in a new session (no controlling terminal), `stdin` on its stdin."""
    proc = subprocess.run(
        [sys.executable, "-m", "wardian", *args], input=stdin, capture_output=True,
        text=True, env=_env(env), cwd=cwd, start_new_session=True, check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def on_terminal(*args: str, answer: str | None, prompt: str = "Type yes",
                stdin: str = "", env: dict[str, str] | None = None,
                cwd: Path | None = None) -> Run:
    """`wardian ARGS…` with a pseudo-terminal as its controlling terminal.

    When `prompt` appears on the terminal, `answer` (a line) is typed there; with
    `answer` None nothing is typed (the terminal is just present). Stdout and stderr go
    to files, stdin gets `stdin`: neither is the terminal.
    """
    master, slave = os.openpty()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", TAKE_TERMINAL, str(slave), *args],
                stdin=subprocess.PIPE, stdout=out, stderr=err, env=_env(env), cwd=cwd,
                start_new_session=True, pass_fds=(slave,),
            )
        finally:
            os.close(slave)
        assert proc.stdin is not None
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
        seen = b"" if answer is None else answer_when_asked(master, answer, prompt)
        seen += read_until_closed(master)
        code = proc.wait()
        os.close(master)
        out.seek(0)
        err.seek(0)
        return Run(code, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"), seen.decode(errors="replace"))


def answer_when_asked(master: int, answer: str, prompt: str = "Type yes") -> bytes:
    """Read the terminal's master side `master` until `prompt` shows, then type `answer`
    and a newline there. Returns what was shown; stops early if the terminal closes
    (the child ended without asking)."""
    seen = b""
    while prompt.encode() not in seen:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: every holder of the terminal has closed it
            return seen
        if not chunk:
            return seen
        seen += chunk
    os.write(master, answer.encode() + b"\n")
    return seen


def read_until_closed(master: int) -> bytes:
    """Everything shown on the terminal until every holder of its slave side closed it."""
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            return seen
        if not chunk:
            return seen
        seen += chunk
