"""The supervisor a provider CLI runs under, so that no provider process outlives the engine.

A role step's provider (``codex exec``, ``claude -p``, …) is an agent that keeps spending
while it runs. The engine that started it (``wardian serve``, a drain worker, ``automation
run``) kills its whole tree on timeout and cancel (`wardian.providers.process`), but an
engine that is itself killed (SIGKILL, the OOM killer, a crash) can clean up nothing. So on
Linux `run_process` starts the CLI through this small program (the launcher's
``supervise``, `wardian.runtime.launcher`) instead of directly:

    engine thread ─ supervisor (own session) ─ provider CLI ─ its tools, MCP servers, …

1. The supervisor asks the kernel for SIGTERM when the engine thread that started it ends
   (``PR_SET_PDEATHSIG``; that thread waits for the supervisor, so it lives as long as the
   step), then checks that its parent is still the engine — which closes the race of an
   engine that died before the call (it exits 125 then, before starting anything).
2. It becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``): whatever the provider leaves
   behind — a double fork, ``setsid``, a daemonised helper — is re-parented to it, not to
   pid 1, so it stays in its tree whichever process group it moved to.
3. It starts the CLI (same stdio, environment and directory) and reaps every child until the
   CLI exits; then it ends what is still below it and exits with the CLI's exit code
   (128 + N for a CLI killed by signal N, as a shell reports it).
4. On SIGTERM, SIGHUP or SIGINT — the engine died, or `end_tree` ends the step — it ends
   everything below it (SIGTERM, then SIGKILL after 2 s) and exits with 128 + the signal.
5. When the call gave a *held record* (``--held-record FILE --held-under DIR``), step 4
   first writes into FILE the files under DIR that the processes below it hold open — a
   Codex call's rollout, open from session start — so that the step's transcript is named
   also when the engine died and no one is left to name it
   (`wardian.runtime.automation_sessions.adopt_held_records` reads FILE: the engine when
   the step ends, else the next recovery sweep).

An agent-assigned step's holder (`wardian.runtime.step_launch`) runs below the supervisor
and sets its own parent-death signal (SIGKILL) towards it, so a supervisor killed outright
still takes the provider with it.

Elsewhere (macOS, Windows) there is no parent-death signal: the CLI is started directly,
as before, and one orphaned by an engine crash runs until it ends on its own
(docs/threat-model.md).

DESIGN.md "Conventions" (process-tree control behind one small module).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

__all__ = ["HeldRecord", "held_below", "supervise", "supervised"]

GRACE_S = 2.0
"""Seconds the processes below get between SIGTERM and SIGKILL."""

_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_RESTORED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ")
                          if hasattr(signal, name))


def supervised(argv: Sequence[str], *, held: HeldRecord | None = None) -> list[str]:
    """`argv` started through the supervisor on Linux, with this process as its engine;
    `argv` unchanged elsewhere. ``argv[0]`` must be an absolute path (the supervisor does
    no PATH search). The caller must wait for the child in the thread that starts it.

    Args:
        held: where the supervisor writes the files under a directory that the call holds
            open when the engine dies mid-call (module docstring, step 5); None: nothing.
    """
    if not sys.platform.startswith("linux"):
        return list(argv)
    from wardian._process import launcher_argv

    extra = ["--held-record", str(held.record), "--held-under", str(held.under)] if held else []
    return launcher_argv("supervise", "--parent", str(os.getpid()), *extra, "--", *argv)


@dataclass(frozen=True)
class HeldRecord:
    """What a supervisor writes when the engine dies mid-call (module docstring, step 5).

    Attributes:
        record: the file written (JSON ``{"paths": [...]}``, private, replaced whole); its
            directory is created when missing.
        under: only files below this directory count (a provider's transcript folder,
            e.g. ``$CODEX_HOME/sessions``); paths are written as spelled from it, the way a
            recovery scan of that folder spells them, not resolved.
    """

    record: Path
    under: Path


def held_below(under: Path, paths: Sequence[str]) -> list[str]:
    """The `paths` (absolute, as the kernel reports open files: resolved) inside `under`,
    spelled from `under` as given (a symlinked ``$CODEX_HOME`` keeps its spelling)."""
    try:
        real = under.resolve()
    except OSError:
        return []
    found = []
    for held in paths:
        try:
            inside = Path(held).relative_to(real)
        except ValueError:
            continue
        found.append(str(under / inside))
    return found


def _write_held(held: HeldRecord) -> None:
    """Write `held.record`: the files below `held.under` that this process's descendants
    hold open. Best effort: an error leaves no record (and the tree is ended anyway)."""
    import json

    from wardian._fs import open_private, private_dir
    from wardian._process import open_files

    try:
        paths = held_below(held.under, open_files(os.getpid()))
        if not paths:
            return
        private_dir(held.record.parent)
        partial = held.record.with_name(held.record.name + ".partial")
        with open_private(partial, "w", encoding="utf-8") as out:
            out.write(json.dumps({"paths": paths}) + "\n")
        os.replace(partial, held.record)
    except OSError as exc:
        print(f"wardian provider supervisor: the open transcript was not recorded: {exc}",
              file=sys.stderr)


class _Ended(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def supervise(parent: int, command: Sequence[str], *, held: HeldRecord | None = None) -> int:
    """The supervisor (module docstring): start `command` (``command[0]`` an absolute path)
    below this process, `parent` being the engine that started it.

    Returns `command`'s exit code (128 + N when signal N ended it), 128 + N when signal N
    ended the supervisor, 125 when the engine is already gone, 127/126 when `command`
    cannot be started.
    """
    from wardian._process import become_subreaper, die_with_parent, end_descendants

    ending: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not ending:  # a second signal while ending the tree must not cut that short
            ending.append(signum)
            raise _Ended(signum)

    for signum in _ENDING_SIGNALS:
        signal.signal(signum, on_signal)
    try:
        die_with_parent(parent, signum=signal.SIGTERM)
        become_subreaper()
        try:
            # Python ignores SIGPIPE (and SIGXFSZ); the CLI gets the defaults, as from Popen.
            child = os.posix_spawn(command[0], list(command), os.environ,
                                   setsigdef=_RESTORED_SIGNALS)
        except OSError as exc:
            print(f"wardian: cannot start {command[0]!r}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 127 if isinstance(exc, FileNotFoundError) else 126
        code = _wait_for(child)
    except _Ended as ended:
        if held is not None:
            # Written before the tree ends, while the files are open. Not only when the
            # engine died: the death signal can come while the parent's other threads are
            # still exiting (it is still the parent then), and on timeout or cancel the
            # engine adopts the record itself at once (`end_step`).
            _write_held(held)
        end_descendants(0.0, grace_s=GRACE_S)
        return 128 + ended.signum
    # The CLI is done: nothing it started may go on without it.
    for signum in _ENDING_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    end_descendants(0.0, grace_s=GRACE_S)
    return code


def _wait_for(child: int) -> int:
    """Reap every child (orphans re-parented to this subreaper too) until `child` exits;
    its exit code, 128 + N for signal N."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:  # pragma: no cover - `child` is ours until reaped
            return 1
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code
