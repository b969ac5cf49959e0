"""The root `wardian` app: registers one Typer group per module (CLI.md).

Group modules import only Typer and light helpers at import time; heavy libraries
(pydantic models, Jinja2, APScheduler, httpx) are imported inside the commands
that need them, so `wardian memory save` starts fast under `agent exec`.
"""

from __future__ import annotations

import typer

from wardian import __version__
from wardian.cli import (
    agent,
    automation,
    blueprint,
    conversation,
    garden,
    hooks,
    library,
    memory,
    serve,
    session,
    settings,
)
from wardian.cli._common import WardianGroup

app = typer.Typer(
    name="wardian",
    cls=WardianGroup,
    help="Durable agent memory and declarative automations for CLI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wardian {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Durable agent memory and declarative automations for CLI coding agents."""


app.add_typer(settings.app, name="settings")
app.add_typer(agent.app, name="agent")
app.add_typer(memory.app, name="memory")
app.add_typer(garden.app, name="garden")
app.add_typer(blueprint.app, name="blueprint")
app.add_typer(library.app, name="library")
app.add_typer(automation.app, name="automation")
app.add_typer(session.app, name="session")
app.add_typer(conversation.app, name="conversation")
app.add_typer(hooks.app, name="hooks")
serve.register(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
