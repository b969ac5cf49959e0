"""`wardian memory`: Agent-facing memory commands (need the managed process's capability)."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Agent-facing memory commands (need the managed process's capability).",
    no_args_is_help=True,
)
