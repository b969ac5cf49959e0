"""`wardian conversation`: Imported conversation archives."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Imported conversation archives.",
    no_args_is_help=True,
)
