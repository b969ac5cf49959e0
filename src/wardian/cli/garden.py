"""`wardian garden`: Operator inspection and reviewed maintenance of any agent's memory."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Operator inspection and reviewed maintenance of any agent's memory.",
    no_args_is_help=True,
)
