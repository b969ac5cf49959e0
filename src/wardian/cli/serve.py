"""`wardian serve`: the long-running daemon (drain loop and schedules)."""

from __future__ import annotations

import typer


def register(root: typer.Typer) -> None:
    """Add the `serve` command to the root app."""
