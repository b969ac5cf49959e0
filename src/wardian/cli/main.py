"""The root `wardian` app: one command group per plugin registration (`wardian.plugins`;
Wardian's own through `wardian.builtin_plugin`), loaded only when it is called (CLI.md).

Building every group's click commands is costly per process, and agent-facing memory
commands run many times per session inside managed processes, so the root group imports
the module of the group that was asked for and nothing else. `--help` still lists every
group (it loads them all, which is fine for a human). Group modules import only Typer and
light helpers at import time; heavy libraries are imported inside the commands.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.main import get_command

from wardian import __version__
from wardian.cli._common import WardianGroup
from wardian.cli._root_help import APP_HELP, VERSION_HELP

__all__ = ["app", "main"]


def _groups() -> dict[str, Any]:
    """Command name -> its `wardian.plugins.CliGroup`, every plugin's (built-ins first);
    what a plugin had refused or failed to load is printed once to stderr."""
    from wardian.cli._root_help import plugin_groups

    return plugin_groups()


class LazyWardianGroup(WardianGroup):
    """The root group: sub-groups are imported on first use (see module docstring)."""

    def list_commands(self, ctx: Any) -> list[str]:
        """The command names in registration order, without importing any of them."""
        return list(_groups())

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The root help; lists the commands with their registered help, importing none."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The click command for `cmd_name`, importing its module now; None if unknown.
        While the root help is being written, a stand-in that carries only its help."""
        group = _groups().get(cmd_name)
        if group is None:
            return None
        if getattr(self, "_listing", False):
            import click

            return click.Command(cmd_name, help=group.help)
        from wardian.plugins import resolve

        module: Any = resolve(group.load)
        if isinstance(module, typer.Typer):
            command = get_command(module)
        elif hasattr(module, "app"):
            command = get_command(module.app)
        else:
            holder = typer.Typer(add_completion=False)
            module.register(holder)
            command = get_command(holder)
        command.name = cmd_name
        _drop_completion_options(command)
        return command


_COMPLETION_PARAMS = {"install_completion", "show_completion"}


def _drop_completion_options(command: Any) -> None:
    """Shell completion is offered once, on the root (``wardian --install-completion``):
    a sub-group's copy of the options would install a script for ``wardian agent``, which
    is not a program."""
    command.params = [p for p in command.params if p.name not in _COMPLETION_PARAMS]
    for sub in getattr(command, "commands", {}).values():
        _drop_completion_options(sub)


app = typer.Typer(
    name="wardian",
    cls=LazyWardianGroup,
    help=APP_HELP,
    no_args_is_help=True,
    add_completion=True,  # bash, zsh, fish and PowerShell (Typer's completion classes)
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
        False, "--version", callback=_version, is_eager=True, help=VERSION_HELP
    ),
) -> None:
    """Durable agent memory and declarative automations for CLI coding agents."""


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
