"""`wardian automation`: Runs, session-close invokers and schedule invokers."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Runs, session-close invokers and schedule invokers.",
    no_args_is_help=True,
)
