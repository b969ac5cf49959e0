"""`wardian automation …`: manual runs, run history, and the invoker sub-groups (CLI.md)."""

from __future__ import annotations

import typer

from wardian.cli import automation_schedule, automation_session_close

app = typer.Typer(help="Runs, session-close invokers and schedule invokers.", no_args_is_help=True)
app.add_typer(automation_session_close.app, name="session-close")
app.add_typer(automation_schedule.app, name="schedule")
