"""`wardian library`: The shipped and user blueprint libraries."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="The shipped and user blueprint libraries.",
    no_args_is_help=True,
)
