"""`wardian session`: Report session lifecycle events (session close) for any integration."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Report session lifecycle events (session close) for any integration.",
    no_args_is_help=True,
)
