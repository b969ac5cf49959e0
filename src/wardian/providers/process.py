"""Run a provider CLI as a child: own session/process group, timeout, whole-tree kill.

The child starts in a new session (POSIX) or process group (Windows); on Linux through the
provider supervisor (`wardian.providers.supervisor`), so that it and everything it started
also end when the engine dies. On timeout or
cancel every process of its tree is ended (`wardian._process.end_tree`: also those that
moved to another process group). stdout/stderr are read on threads into buffers capped at
`max_output_bytes` each, so a chatty child can neither block on a full pipe nor
exhaust memory. Prompts too long for the command line go through stdin.

Spec: DESIGN.md "Conventions" (process-tree kill behind one module).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wardian._process import end_tree, open_files
from wardian.providers.errors import ProviderCancelled, ProviderNotInstalled, ProviderTimeout
from wardian.providers.supervisor import HeldRecord, supervised

__all__ = [
    "MAX_ARG_PROMPT_BYTES",
    "MAX_OUTPUT_BYTES",
    "ProcessResult",
    "fits_argv",
    "resolve_executable",
    "run_process",
]

MAX_OUTPUT_BYTES = 16 * 1024 * 1024
"""Default cap, in bytes, on each of stdout and stderr kept in memory."""

MAX_ARG_PROMPT_BYTES = 8_000 if sys.platform == "win32" else 100_000
"""Prompts longer than this many bytes (UTF-8) go through stdin instead of argv.

Linux caps one argument at 128 KiB (MAX_ARG_STRLEN) and Windows a whole command line
at 32 767 characters; both limits stay well clear.
"""


def fits_argv(text: str) -> bool:
    """Whether `text` may be passed as one command-line argument on this OS.

    Not when too long, when it holds a NUL, or when it starts with ``-`` (a prompt such as
    "- keep it short" would be parsed as an option by the CLI).
    """
    return (
        len(text.encode("utf-8")) <= MAX_ARG_PROMPT_BYTES
        and "\x00" not in text
        and not text.startswith("-")
    )


@dataclass
class ProcessResult:
    """A finished child: exit code, captured output (capped), and whether it was cut."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_s: float = 0.0
    extra: dict[str, str] = field(default_factory=dict)


def resolve_executable(name: str, provider: str, env: Mapping[str, str] | None = None) -> str:
    """Find `name` on PATH (of `env` when given).

    Raises:
        ProviderNotInstalled: not found; the message says what to install.
    """
    path = (env or os.environ).get("PATH")
    found = shutil.which(name, path=path)
    if not found:
        raise ProviderNotInstalled(
            f"the `{name}` command was not found on PATH",
            provider=provider,
            hint=f"install the {provider} CLI and make sure `{name}` runs in this shell",
        )
    return found


class _Capped:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.truncated = False

    def feed(self, data: bytes) -> None:
        room = self.limit - self.size
        if room <= 0:
            self.truncated = True
            return
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        self.chunks.append(data)
        self.size += len(data)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


def _pump(stream: object, sink: _Capped) -> None:
    read = stream.read  # type: ignore[attr-defined]
    try:
        while True:
            data = read(65536)
            if not data:
                break
            sink.feed(data)
    except (OSError, ValueError):
        pass


def _feed_stdin(proc: subprocess.Popen[bytes], data: bytes | None) -> None:
    assert proc.stdin is not None
    try:
        if data:
            proc.stdin.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()


def _executable(name: str, provider: str, cwd: str | Path | None,
                env: Mapping[str, str] | None) -> str:
    """`name` as the absolute path `subprocess.Popen` would run (PATH of `env`; a relative
    path from `cwd`), for the supervisor, which searches nothing.

    Raises:
        ProviderNotInstalled: there is no such executable (what Popen would have raised).
    """
    if os.sep in name and not os.path.isabs(name):
        name = os.path.join(str(cwd) if cwd else os.getcwd(), name)
    found = shutil.which(name, path=(env if env is not None else os.environ).get("PATH"))
    if found is None:
        raise ProviderNotInstalled(
            f"cannot start `{name}`", provider=provider, detail="not an executable file",
            hint=f"install the {provider} CLI, or check that it is executable",
        )
    return os.path.abspath(found)


def run_process(
    argv: Sequence[str],
    *,
    provider: str,
    stdin_text: str | None = None,
    timeout_s: float,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    max_output_bytes: int = MAX_OUTPUT_BYTES,
    cancel: threading.Event | None = None,
    label: str | None = None,
    held: HeldRecord | None = None,
) -> ProcessResult:
    """Run `argv` to completion in its own session, with a timeout and whole-tree kill.

    Args:
        argv: the command; ``argv[0]`` should already be resolved (`resolve_executable`).
        provider: provider name for error messages.
        stdin_text: written to the child's stdin (then closed); None closes stdin at once.
        timeout_s: wall-clock limit in seconds.
        cwd: working directory.
        env: the complete child environment (None inherits ours).
        max_output_bytes: cap, in bytes, on each of stdout and stderr kept.
        cancel: when set by another thread, the tree is killed and ProviderCancelled raised.
        label: the program's name in messages (default ``argv[0]``'s file name; a caller
            that starts the program through a wrapper names the program itself).
        held: on Linux, what the supervisor records of the files the call holds open if
            this engine dies mid-call (`wardian.providers.supervisor.HeldRecord`).

    Raises:
        ProviderNotInstalled: the executable cannot be started.
        ProviderTimeout: past `timeout_s`; the whole tree was killed first.
        ProviderCancelled: `cancel` was set; the whole tree was killed first.
    """
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        kwargs["start_new_session"] = True
    started = time.monotonic()
    command = list(argv)
    if sys.platform.startswith("linux"):
        command = supervised([_executable(command[0], provider, cwd, env), *command[1:]],
                             held=held)
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd) if cwd else None,
            env=dict(env) if env is not None else None,
            **kwargs,  # type: ignore[call-overload]
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise ProviderNotInstalled(
            f"cannot start `{argv[0]}`", provider=provider, detail=str(exc),
            hint=f"install the {provider} CLI, or check that it is executable",
        ) from exc
    out, err = _Capped(max_output_bytes), _Capped(max_output_bytes)
    threads = [
        threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True),
        threading.Thread(
            target=_feed_stdin,
            args=(proc, stdin_text.encode("utf-8") if stdin_text is not None else None),
            daemon=True,
        ),
    ]
    for thread in threads:
        thread.start()
    deadline = started + timeout_s
    outcome = "exited"
    while True:
        try:
            proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            pass
        if cancel is not None and cancel.is_set():
            outcome = "cancelled"
            break
        if time.monotonic() >= deadline:
            outcome = "timeout"
            break
    held_open: tuple[str, ...] = ()
    if outcome != "exited":
        held_open = open_files(proc.pid)
        end_tree(proc.pid)
        proc.wait()
    else:
        # The child is gone, but a grandchild may still hold the pipes: give the readers
        # a moment, then kill whatever is left of the session so nothing leaks.
        for thread in threads[:2]:
            thread.join(timeout=max(0.0, min(2.0, deadline - time.monotonic())))
        if any(t.is_alive() for t in threads[:2]) and sys.platform != "win32":
            end_tree(proc.pid, grace_s=0.0)
    for thread in threads:
        thread.join(timeout=2.0)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    duration = time.monotonic() - started
    name = label or Path(argv[0]).name
    if outcome == "timeout":
        timed_out = ProviderTimeout(
            f"`{name}` did not finish within {timeout_s:g} s; its whole "
            "process tree was killed",
            provider=provider,
            hint="raise the step's timeout, or check that the CLI does not wait for input",
        )
        timed_out.partial_stdout = out.text()  # the session id it printed, if any
        timed_out.open_files = held_open  # its transcript, also before it printed that id
        raise timed_out
    if outcome == "cancelled":
        cancelled = ProviderCancelled(
            f"`{name}` was cancelled; its whole process tree was killed",
            provider=provider,
        )
        cancelled.partial_stdout = out.text()
        cancelled.open_files = held_open
        raise cancelled
    return ProcessResult(
        argv=list(argv),
        returncode=proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        duration_s=duration,
    )
