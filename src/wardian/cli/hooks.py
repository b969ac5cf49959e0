"""`wardian hooks`: Provider hooks (Claude Code, Gemini) and their installation."""

from __future__ import annotations

import sys

import typer

from wardian.cli._common import emit_json, require_operator, stderr, stdout

app = typer.Typer(
    help="Provider hooks (Claude Code, Gemini) and their installation.",
    no_args_is_help=True,
)
claude_app = typer.Typer(
    help="Claude Code hooks (read the hook's JSON on stdin).", no_args_is_help=True
)
gemini_app = typer.Typer(help="Gemini CLI hooks (read the hook's JSON on stdin).",
                         no_args_is_help=True)
install_app = typer.Typer(help="Install provider hooks into their settings files.",
                          no_args_is_help=True)
app.add_typer(claude_app, name="claude-code")
app.add_typer(gemini_app, name="gemini")
app.add_typer(install_app, name="install")

_AGENT_HELP = ("Agent name or id, outside a managed session (inside one, $WARDIAN_AGENT_ID "
               "names the agent).")


def _run(provider: str, event: str, agent: str | None) -> None:
    """One hook call through `wardian.runtime.hooks.run_hook`; unusable input is a warning
    (the close is still recorded), a missing or unknown agent an error."""
    from wardian.runtime.hooks import run_hook

    out = run_hook(provider, event, sys.stdin.read(), agent=agent,
                   warn=lambda msg: stderr(f"Warning: {msg}"))
    if out is not None:
        stdout(out)


@claude_app.command("session-start")
def claude_session_start(
    agent: str | None = typer.Option(None, "--agent", help=_AGENT_HELP),
) -> None:
    """Print the SessionStart additionalContext JSON with the agent's startup recall."""
    _run("claude-code", "session-start", agent)


@claude_app.command("session-end")
def claude_session_end(
    agent: str | None = typer.Option(None, "--agent", help=_AGENT_HELP),
) -> None:
    """Record a session-close event from Claude Code's SessionEnd hook JSON."""
    _run("claude-code", "session-end", agent)


@gemini_app.command("session-end")
def gemini_session_end(
    agent: str | None = typer.Option(None, "--agent", help=_AGENT_HELP),
) -> None:
    """Record a session-close event from Gemini CLI's SessionEnd hook JSON."""
    _run("gemini", "session-end", agent)


@install_app.command("claude-code")
def install_claude_code(
    agent: str | None = typer.Option(
        None, "--agent", help="Agent the hooks report for (else $WARDIAN_AGENT_ID)."
    ),
    settings: str | None = typer.Option(
        None, "--settings", help="Claude Code settings.json (default ~/.claude/settings.json)."
    ),
    uninstall: bool = typer.Option(
        False, "--uninstall", help="Remove exactly the hooks an install added."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what changed as JSON."),
) -> None:
    """Add Wardian's SessionStart and SessionEnd hooks to a Claude Code settings file."""
    require_operator()
    from pathlib import Path

    from wardian.runtime.hooks import install_claude_code as install

    if agent:
        from wardian.runtime.agents import AgentRegistry

        AgentRegistry().get(agent)  # refuse an unknown agent now, not at the next session
    result = install(Path(settings) if settings else None, agent=agent, uninstall=uninstall)
    if as_json:
        emit_json(result.to_json())
        return
    verb = "removed from" if uninstall else "installed in"
    events = result.removed if uninstall else result.added
    if result.changed:
        stdout(f"Hooks {', '.join(events)} {verb} {result.settings_path}")
    else:
        stdout(f"Nothing to change in {result.settings_path}")
    if result.home and not uninstall:
        stdout(f"The hooks use the data dir WARDIAN_HOME={result.home} (embedded as --home; "
               "reinstall to change it)")
