"""CLI plumbing that imports no Typer, Click or Rich: output lines, JSON, the operator guard
and the translation of errors into ``Error: …`` and an exit code.

The Typer app (`wardian.cli._common`) and the hot path (`wardian.cli.hot`, the commands an
agent runs many times per session) both use these, so a command prints and fails the same
way whichever path ran it. Importing Typer costs more than the whole budget of a hot
command (bench/process_bench.py).

Exit codes (CLI.md): 0 ok · 1 operation failed · 2 usage or validation error ·
3 not authorised (fail closed) · 4 conflict; 130 interrupted; 141 stdout's reader gone.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING

from wardian.errors import EXIT_FAILED, WardianError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO, Any

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "debug",
    "emit_json",
    "error_exit_code",
    "require_operator",
    "shown",
    "stderr",
    "stdout",
    "unknown_option",
]

EXIT_BROKEN_PIPE = 141
"""Exit code when stdout's reader has gone (128 + SIGPIPE, as a shell reports it)."""
EXIT_INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT)."""

_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")
"""Terminal escape codes, which Click's ``echo`` strips from output that is not a terminal;
`_echo` does the same, so both paths print the same bytes."""


def shown(value: Any, *, missing: str = "-") -> str:
    """`value` in operator words for human output: None and an empty list or mapping are
    `missing`, a bool is ``yes``/``no``, a list or mapping one line of JSON, anything
    else its text. Python's ``None``/``True``/``{'a': 1}`` never reach an operator."""
    if value is None or (isinstance(value, list | tuple | dict) and not value):
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return str(value)


def unknown_option(option: str, command: str, *, maybe: Sequence[str] = ()) -> str:
    """The one message for an option `command` (e.g. ``wardian memory list``) does not
    have: names both, the nearest known options when there are some, and `--help`."""
    near = f"; did you mean {' or '.join(maybe)}?" if maybe else ""
    return (f"unknown option {option!r} for `{command}`{near} "
            f"(see `{command} --help` for its options)")


def debug() -> bool:
    """Whether ``WARDIAN_DEBUG`` asks for tracebacks instead of one-line errors."""
    return os.environ.get("WARDIAN_DEBUG", "") not in {"", "0"}


def _echo(text: str, stream: IO[str] | None) -> None:
    """Write one line as ``click.echo`` does on POSIX: escape codes stripped unless the
    stream is a terminal, UTF-8 (with replacement) where the stream's encoding is ASCII
    (a misconfigured locale), flushed."""
    if stream is None:
        return
    out = text + "\n"
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        out = _ANSI.sub("", out)
    binary = getattr(stream, "buffer", None)
    if binary is not None and _is_ascii(getattr(stream, "encoding", None) or "ascii"):
        stream.flush()
        binary.write(out.encode("utf-8", "replace"))
        binary.flush()
        return
    stream.write(out)
    stream.flush()


def _is_ascii(encoding: str) -> bool:
    import codecs

    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return False


def stdout(text: str = "") -> None:
    """Print a line to standard output."""
    _echo(text, sys.stdout)


def stderr(text: str) -> None:
    """Print a line to standard error."""
    _echo(text, sys.stderr)


def emit_json(document: Any) -> None:
    """Print `document` as indented JSON on stdout (keys in insertion order)."""
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")


def require_operator() -> None:
    """Refuse an operator (O) command inside a managed process: exit 3, `OperatorOnly`.

    Checks the managed environment variables and whether an ancestor process is a managed
    launch (so clearing the environment is not enough). Read-only. CLI.md marks which
    commands are the operator's: settings, agent add/list/show/remove/exec/launch, garden.
    """
    from wardian.app.operator import require_operator as check

    check()


def error_exit_code(exc: BaseException) -> int:
    """Report an error a command raised as one ``Error: …`` line on stderr; its exit code.

    `WardianError` → its `exit_code`; Ctrl-C → 130; stdout's reader gone → 141, quietly;
    an OS error the user can fix (a full disk, a read-only file: `wardian.oserrors`) → its
    code. Anything else is a bug: a one-line report, exit 1.

    Call it from the ``except`` block that caught `exc`.

    Raises:
        `exc` itself, when it is a bug (or any error with ``WARDIAN_DEBUG=1``) and the
            traceback should be seen: always with ``WARDIAN_DEBUG=1``, and for bugs under
            pytest.
    """
    if isinstance(exc, WardianError):
        if debug():
            raise exc
        stderr(f"Error: {exc.render()}")
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        # A bare Ctrl-C carries no text; one raised by our layer says what stopped.
        stderr(f"Error: interrupted: {exc}" if str(exc) else "Error: interrupted")
        return EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        # The reader went away (`wardian … | head`): not an error of ours. Exit quietly
        # as a shell reports SIGPIPE, and keep Python's own flush at exit from failing.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    if not isinstance(exc, Exception):
        raise exc
    from wardian.oserrors import translate

    ours = translate(exc)  # a full disk, a read-only file, …: the user's to fix
    if ours is not None and not debug():
        stderr(f"Error: {ours.render()}")
        return ours.exit_code
    if debug() or "PYTEST_CURRENT_TEST" in os.environ:
        raise exc
    stderr(f"Error: internal error: {type(exc).__name__}: {exc} "
           "(set WARDIAN_DEBUG=1 to see the traceback, and please report it)")
    return EXIT_FAILED
