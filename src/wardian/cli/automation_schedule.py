"""`wardian automation schedule …`: schedule invokers (CLI.md)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Schedule invokers: fire a blueprint on a cron or interval clock.",
                  no_args_is_help=True)
