"""Shared CLI plumbing for the Typer app: the root group, option helpers, tables; the
Typer-free parts (output lines, JSON, errors, the operator guard) live in
`wardian.cli._plain` and are re-exported here.

Exit codes (CLI.md): 0 ok · 1 operation failed · 2 usage or validation error ·
3 not authorised (fail closed) · 4 conflict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from wardian.cli._plain import (
    emit_json,
    error_exit_code,
    require_operator,
    shown,
    stderr,
    stdout,
    unknown_option,
)
from wardian.errors import EXIT_USAGE, UsageError

__all__ = [
    "DashArgsCommand",
    "JsonOption",
    "WardianGroup",
    "emit_json",
    "out_width",
    "parse_kv",
    "print_block",
    "print_table",
    "require_operator",
    "shown",
    "stderr",
    "stdout",
]

try:  # Typer 0.25+ carries its own copy of Click; older ones use Click itself
    from typer._click.exceptions import NoSuchOption as _NoSuchOption
except ImportError:  # pragma: no cover - depends on the installed Typer
    from click.exceptions import NoSuchOption as _NoSuchOption  # type: ignore[assignment]

JsonOption = typer.Option(False, "--json", help="Print a JSON document instead of a table.")


class WardianGroup(TyperGroup):
    """Root click group that turns errors into one ``Error: …`` line and an exit code.

    `WardianError` → its `exit_code`. Anything else is a bug: with ``WARDIAN_DEBUG=1`` or under
    pytest it is re-raised so the traceback is visible; otherwise a one-line report, exit 1.
    """

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        """Refuse arguments that are not valid UTF-8 (exit 2) before any command sees them:
        Python hands them over as lone surrogates, which no file or database can store."""
        for index, arg in enumerate(args, start=1):
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                raw = arg.encode("utf-8", "surrogateescape")
                shown = raw[:40].decode("utf-8", "backslashreplace")
                typer.echo(
                    f"Error: argument {index} is not valid UTF-8 ({shown!r}) "
                    "(pass text as UTF-8: check the terminal's or the script's encoding)",
                    err=True,
                )
                raise typer.Exit(EXIT_USAGE) from None
        return super().parse_args(ctx, args)

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        """Run the command; errors become ``Error: …`` on stderr and the documented exit code
        (`wardian.cli._plain.error_exit_code`: 1 failed, 2 usage, 3 not authorised, 4
        conflict; 130 interrupted; 141 broken pipe).

        Raises:
            typer.Exit: with that code. Under pytest or ``WARDIAN_DEBUG=1`` the original
                error is re-raised instead.
        """
        try:
            return super().invoke(ctx)
        except _NoSuchOption as exc:
            # Click's "No such option: --x" names neither the command nor where to look.
            path = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            exc.message = unknown_option(exc.option_name, path,
                                         maybe=sorted(exc.possibilities or ()))
            exc.possibilities = None  # named in the message already
            raise
        except (Exception, KeyboardInterrupt) as exc:
            # Typer's own signals (exit, abort, usage errors) pass through untouched.
            if isinstance(exc, Exception) and type(exc).__module__.startswith(
                    ("typer", "click")):
                raise
            raise typer.Exit(error_exit_code(exc)) from None


class DashArgsCommand(TyperCommand):
    """A command that takes arguments starting with ``-`` (``ignore_unknown_options``, e.g.
    `memory save`'s pasted text): a word left over that looks like an option is reported
    as an unknown option of this command, not as Click's "unexpected extra argument"."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        """As Click parses, then name a left-over ``-x``/``--x`` (or an argument taken for
        an option spelled wrong, when words are left over) as an unknown option."""
        allowed = ctx.allow_extra_args
        ctx.allow_extra_args = True
        try:
            rest = super().parse_args(ctx, args)
        finally:
            ctx.allow_extra_args = allowed
        if not rest or allowed:
            return rest
        dashed = [a for a in rest if _LOOKS_LIKE_OPTION.match(a)]
        if not dashed:
            dashed = [v for v in ctx.params.values()
                      if isinstance(v, str) and _LOOKS_LIKE_OPTION.match(v)]
        if dashed:
            ctx.fail(unknown_option(dashed[0].partition("=")[0], ctx.command_path))
        ctx.fail(f"Got unexpected extra argument(s) ({' '.join(rest)})")
        return rest


_LOOKS_LIKE_OPTION = re.compile(r"--?[A-Za-z][A-Za-z0-9-]*(=.*)?\Z", re.DOTALL)
"""An argument spelled as an option (``--name``, ``-n``, ``--name=value``)."""


def print_table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None
) -> None:
    """Render a Rich table on stdout; Rich is imported here only, when a table is printed."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(shown(v, missing="") for v in row))
    Console(soft_wrap=False, width=out_width()).print(table)


DEFAULT_WIDTH = 100
"""Columns human output fits when the terminal's width is unknown (output piped or
captured) and ``COLUMNS`` is unset; also the narrowest width tables are drawn at."""


def out_width() -> int:
    """The width human output fits: ``COLUMNS``, else the terminal's, else 100; at least
    100 (a narrower terminal wraps what it shows)."""
    import shutil

    return max(DEFAULT_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def print_block(text: str, *, indent: str = "  ") -> None:
    """Print `text` (e.g. indented JSON) under `indent`, every line within `out_width()`:
    a longer line continues on the next, 4 columns further in, never cut short."""
    import textwrap

    width = out_width()
    for line in text.splitlines() or [""]:
        lead = indent + " " * (len(line) - len(line.lstrip(" ")))
        if len(indent) + len(line) <= width:
            stdout(indent + line)
            continue
        stdout("\n".join(textwrap.wrap(line.lstrip(" "), width=width, initial_indent=lead,
                                       subsequent_indent=lead + "    ",
                                       break_on_hyphens=False, replace_whitespace=False,
                                       drop_whitespace=True)))


def parse_kv(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """Parse repeated ``k=v`` flags into a dict.

    Raises:
        UsageError (exit 2): an item without ``=``.
    """
    out: dict[str, str] = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value
    return out


USAGE_EXIT = EXIT_USAGE
