"""`wardian automation session-close …`: session-close invokers (CLI.md)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Session-close invokers: fire a blueprint when an agent's session closes.",
                  no_args_is_help=True)
