"""`wardian hooks`: host hooks (Claude Code, Codex, Gemini CLI, opencode) and their
installation.

The hook commands read the host's JSON on stdin; `install` writes them into the host's
settings file (docs/hosts.md says what each host documents and what is installed).
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from wardian.cli._common import emit_json, require_operator, stdout
from wardian.cli.hot import hook_run

app = typer.Typer(
    help="Host hooks (Claude Code, Codex, Gemini CLI, opencode) and their installation.",
    no_args_is_help=True,
)
install_app = typer.Typer(help="Install host hooks into their settings files.",
                          no_args_is_help=True)

_AGENT_HELP = ("Agent name or id (repeatable; the one whose workspace holds the session's "
               "cwd is used). Inside a managed session its own agent is used.")
_HOSTS = {
    "claude-code": ("Claude Code", ("session-start", "session-end"),
                    "~/.claude/settings.json"),
    "codex": ("Codex CLI", ("session-start", "session-end"), "~/.codex/hooks.json"),
    "gemini": ("Gemini CLI", ("session-start", "session-end"), "~/.gemini/settings.json"),
    "opencode": ("opencode", ("session-start", "session-end"),
                 "~/.config/opencode/plugins/wardian.js"),
}
_EVENT_HELP = {
    "session-start": "Print the SessionStart JSON with the agent's startup recall and the "
                     "Memory loaded line; queue a recovery sweep.",
    "session-end": "Record a session-close event from the SessionEnd hook JSON.",
}


def _hook_command(host: str, event: str) -> Callable[..., None]:
    def command(agent: list[str] = typer.Option([], "--agent", help=_AGENT_HELP)) -> None:
        hook_run(host, event, list(agent))

    command.__doc__ = _EVENT_HELP[event]
    return command


def _install_command(host: str) -> Callable[..., None]:
    label, events, default = _HOSTS[host]

    def command(
        agent: list[str] = typer.Option(
            [], "--agent", help="Agent the hooks report for (repeatable; adds to the agents "
            "already installed, never replaces them)."),
        settings: str | None = typer.Option(
            None, "--settings", help=(
                f"The {label} plugin file Wardian writes (default {default}; a project's "
                "is .opencode/plugins/wardian.js)." if host == "opencode" else
                f"The {label} settings file (default {default}).")),
        uninstall: bool = typer.Option(
            False, "--uninstall", help="Remove the hooks (with --agent: only those agents)."),
        create_dirs: bool = typer.Option(
            False, "--create-dirs", help="Create the missing folders of --settings (without "
            "it a --settings path in a folder that does not exist is refused, exit 2)."),
        as_json: bool = typer.Option(False, "--json", help="Print what changed as JSON."),
    ) -> None:
        require_operator()
        from pathlib import Path

        from wardian.app.databases import open_state_db
        from wardian.app.hook_install import install_host_hooks

        result = install_host_hooks(host, Path(settings) if settings else None,
                                    agents=agent, uninstall=uninstall,
                                    create_dirs=create_dirs,
                                    state=open_state_db() if agent and not uninstall
                                    else None)
        if as_json:
            emit_json(result.to_json())
            return
        verb = "removed from" if uninstall else "installed in"
        events_changed = result.removed if uninstall else result.added
        if result.changed and events_changed:
            stdout(f"{label} hooks {', '.join(events_changed)} {verb} {result.settings_path}")
        if result.changed and not events_changed and not result.updated:
            stdout(f"{label} hooks updated in {result.settings_path}")
        if result.changed and result.updated:
            names = ", ".join(result.agents_removed)
            stdout(f"{label}: agent{'s' if len(result.agents_removed) > 1 else ''} {names} "
                   f"removed from the {', '.join(result.updated)} hooks in "
                   f"{result.settings_path}")
        if not result.changed:
            stdout(f"Nothing to change in {result.settings_path}")
        if result.agents:
            stdout(f"Agents: {', '.join(result.agents)}")
        if result.home and not uninstall:
            stdout(f"The hooks use the data dir WARDIAN_HOME={result.home} (embedded as --home;"
                   " reinstall to change it)")
        if host == "opencode" and not uninstall and result.changed:
            stdout("opencode loads the plugin at its next start: SessionStart runs at a "
                   "session's first model request, SessionEnd when opencode exits.")
        if host == "codex" and not uninstall:
            if "SessionEnd" not in result.events:
                stdout(f"{result.skipped_reason}: SessionEnd was not installed, so Codex "
                       "sessions are recorded by recovery (next session start, `agent "
                       "launch`, or `wardian session recover`); reinstall after upgrading.")
            stdout("Codex runs these hooks only once you trust them: start `codex`, open "
                   "/hooks and trust the Wardian entries (until then they do not run; "
                   "`codex --dangerously-bypass-hook-trust` skips the check for one run).")

    command.__doc__ = (f"Add Wardian's {label} hooks ({', '.join(events)}) to {default}; "
                       "--uninstall removes them and nothing else.")
    return command


for _host, (_label, _events, _default) in _HOSTS.items():
    _group = typer.Typer(help=f"{_label} hooks (read the hook's JSON on stdin).",
                         no_args_is_help=True)
    for _event in _events:
        _group.command(_event)(_hook_command(_host, _event))
    app.add_typer(_group, name=_host)
    install_app.command(_host)(_install_command(_host))
app.add_typer(install_app, name="install")
