"""The root ``wardian --help``: what the root lists, and its plain-text rendering.

Typer renders help with Rich, whose import alone costs more CPU than ``wardian --help``
may spend in total (bench/process_bench.py). The root help lists only
fixed things — the app's one-line help, four options and each command group's one-line
help — so the hot path (`wardian.cli.hot`) prints it from the tables here without
importing Typer, Click or Rich, in Click's plain layout (without Click's truncation of
long help lines). The Typer app (`wardian.cli.main`) is built from the same tables, and
tests/cli/test_root_help.py checks them against the Typer app and each group's own help,
so the two cannot drift. ``wardian GROUP --help`` stays Typer's.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["APP_HELP", "GROUP_HELP", "OPTIONS", "VERSION_HELP", "plugin_groups", "render"]

APP_HELP = "Durable agent memory and declarative automations for CLI coding agents."
"""The root command's help."""

VERSION_HELP = "Print the version and exit."
"""The help of ``--version`` (the root callback's option)."""

GROUP_HELP: dict[str, str] = {
    "settings": "Typed settings (agent memory, conversation logging, providers).",
    "agent": "Agents: durable identities, their managed processes and models.",
    "memory": "Agent-facing memory commands (need the managed process's capability).",
    "garden": "Operator inspection and reviewed maintenance of any agent's memory.",
    "blueprint": "Validate, list, show and export the schema of blueprints.",
    "library": "The shipped and user blueprint libraries.",
    "automation": "Runs, session-close invokers and schedule invokers.",
    "session": "Report session lifecycle events (session close) for any integration.",
    "conversation": "Imported conversation archives.",
    "hooks": "Host hooks (Claude Code, Codex, Gemini CLI, opencode) and their installation.",
    "mcp": "Agent memory as an MCP server over stdio (tools memory_save, memory_recall, …).",
    "serve": "Run the daemon: fire schedule invokers and drain session-close events.",
    "doctor": "Check the data directory, settings, hooks, invokers, runs, provider CLIs and"
              "\nmodel catalogs; each problem names the command that fixes it.",
    "db": "The database: move an installation from SQLite to PostgreSQL.",
}
"""Each built-in command's one-line help, as its module says it, in the order the root
lists them (`wardian.builtin_plugin` registers them; a test keeps names, order and text
equal to the Typer app's)."""

OPTIONS: tuple[tuple[str, str], ...] = (
    ("--version", VERSION_HELP),
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion",
     "Show completion for the current shell, to copy it or customize the installation."),
    ("-h, --help", "Show this message and exit."),
)
"""The root's options as Click writes them (names, help); the completion options are
Typer's, the test compares all four with the Typer app's."""


def _width() -> int:
    """Click's help width: the terminal's (``COLUMNS`` first), at most 80, at least 50."""
    given = os.environ.get("COLUMNS", "")
    columns = int(given) if given.isascii() and given.isdigit() else 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(min(columns, 80) - 2, 50)


def _rows(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Two-column rows as Click's ``write_dl`` lays them out: the first column as wide as
    its longest entry (+2), the second wrapped; a too-long first entry on its own line."""
    import textwrap

    first = min(max(len(name) for name, _ in rows), 30) + 2
    out = []
    for name, text in rows:
        lines = textwrap.wrap(" ".join(text.split()), max(width - 2 - first, 10))
        if len(name) + 2 > first:
            out.append(f"  {name}")
            out += [" " * (2 + first) + line for line in lines]
            continue
        out.append(f"  {name.ljust(first)}{lines[0] if lines else ''}".rstrip())
        out += [" " * (2 + first) + line for line in lines[1:]]
    return out


_warned = False


def plugin_groups() -> dict[str, Any]:
    """Command name -> `wardian.plugins.CliGroup` of every plugin (built-ins first). The
    first call prints each plugin error to stderr (``wardian: …``), once per process."""
    global _warned
    from wardian.plugins import loaded

    plugins = loaded()
    if not _warned:
        _warned = True
        for error in plugins.errors:
            print(f"wardian: {error}", file=sys.stderr)
    return plugins.cli_groups


def render(width: int | None = None) -> str:
    """The root help text (no trailing newline). `width`: the line width (default: as
    Click chooses it from the terminal)."""
    import textwrap

    width = width or _width()
    lines = ["Usage: wardian [OPTIONS] COMMAND [ARGS]...", ""]
    lines += textwrap.wrap(APP_HELP, width, initial_indent="  ", subsequent_indent="  ")
    lines += ["", "Options:", *_rows(list(OPTIONS), width)]
    groups = [(name, group.help) for name, group in plugin_groups().items()]
    lines += ["", "Commands:", *_rows(groups, width)]
    lines += ["", *textwrap.wrap("Run `wardian COMMAND --help` for a command's own commands "
                                 "and options.", width)]
    return "\n".join(lines)
