"""`wardian agent models --provider P [--refresh] [--json]`: the model catalog (CLI.md).

Registered on the `agent` group by `register(app)`; the catalog logic lives in
`wardian.app.catalog` (imported inside the command so other commands stay fast).
"""

from __future__ import annotations

import typer

from wardian.cli._common import JsonOption, emit_json, print_table, stderr, stdout

__all__ = ["register"]


def register(agent_app: typer.Typer) -> None:
    """Add the `models` command to the `agent` Typer app."""

    @agent_app.command("models")
    def models(
        provider: str = typer.Option(..., "--provider", help="Provider name, e.g. codex."),
        refresh: bool = typer.Option(
            False, "--refresh", help="Ask the provider for its current models first."
        ),
        timeout_s: float = typer.Option(
            30.0, "--timeout", min=0.1, help="Discovery timeout in seconds (with --refresh)."
        ),
        as_json: bool = JsonOption,
    ) -> None:
        """List a provider's model ids, supported effort levels and default effort.

        Lists are discovered from the provider itself and cached with their fetch time; a
        failed refresh keeps the last good list, says why, and exits 1.
        """
        from wardian.app.catalog import model_list, refresh_command
        from wardian.config import open_state_db

        entry = model_list(open_state_db(), provider, refresh=refresh, timeout_s=timeout_s)
        failed = refresh and entry.last_error is not None
        if as_json:
            emit_json(entry.to_json())
        else:
            when = "built in" if entry.static else f"fetched {entry.fetched_at}"
            stdout(f"{entry.provider} · {len(entry.models)} model(s) · {when}")
            print_table(
                ["model", "efforts", "default effort", "source"],
                [(m.id, ", ".join(m.efforts) or "-", m.default_effort or "-", m.source)
                 for m in entry.models],
            )
        if entry.last_error:
            stderr(
                f"Warning: the last refresh failed at {entry.last_attempt_at}: "
                f"{entry.last_error}; showing the list fetched at {entry.fetched_at} "
                f"(retry with {refresh_command(provider)})"
            )
        if failed:
            raise typer.Exit(1)
