"""`wardian hooks`: Provider hooks (Claude Code, Gemini) and their installation."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Provider hooks (Claude Code, Gemini) and their installation.",
    no_args_is_help=True,
)
