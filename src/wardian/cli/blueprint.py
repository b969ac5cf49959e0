"""`wardian blueprint`: Validate, list, show and export the schema of blueprints."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Validate, list, show and export the schema of blueprints.",
    no_args_is_help=True,
)
