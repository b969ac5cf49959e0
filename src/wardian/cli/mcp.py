"""`wardian mcp`: the stdio MCP server for agent memory, and `wardian mcp install HOST`.

`wardian mcp` itself runs the server (`wardian.mcp_server.server`); the ``mcp`` SDK is
imported only then, never on another command's start-up path. `wardian mcp install`
registers it in a host's MCP configuration (`wardian.app.mcp_config`), reversibly.

Spec: "Save and inspect memory".
"""

from __future__ import annotations

import typer

from wardian.cli._common import JsonOption, emit_json, stdout

app = typer.Typer(
    help="Agent memory as an MCP server over stdio (tools memory_save, memory_recall, …).",
    invoke_without_command=True,
)


@app.callback()
def serve(
    ctx: typer.Context,
    agent: list[str] | None = typer.Option(
        None, "--agent",
        help="Agent for read-only answers when this process holds no memory capability; "
        "repeat it for several, picked by workspace as the hooks pick (inside `agent "
        "launch` the launch's own agent is used).",
    ),
) -> None:
    """Run the MCP server on stdin/stdout (hosts start it; see `wardian mcp install`).

    Changes need the memory capability of the managed launch the host runs under; without
    one, recall, list, show and history answer read-only and every change is refused.
    """
    if ctx.invoked_subcommand is not None:
        return
    from wardian.mcp_server.server import serve as run

    run(agents=agent or ())


@app.command("install")
def install(
    host: str = typer.Argument(..., metavar="HOST", help="claude-code, codex, gemini or opencode."),
    agent: list[str] | None = typer.Option(
        None, "--agent",
        help="Add --agent A to the entry (read-only recall outside a launch), keeping the "
        "agents it lists; repeat for several. With --uninstall: remove only these.",
    ),
    uninstall: bool = typer.Option(
        False, "--uninstall", help="Remove the entry (with --agent: only those agents)."),
    scope: str | None = typer.Option(
        None, "--scope",
        help="project or user (default: project for claude-code, user for the others). "
        "A project entry runs `wardian` from PATH and names no path of this machine.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Register `wardian mcp` in HOST's MCP config, touching no other server.

    One `wardian` entry serves every agent (inside `agent launch`, the launch's own).
    claude-code: .mcp.json (project) or ~/.claude.json (user); codex: [mcp_servers.wardian]
    in ~/.codex/config.toml (user) or .codex/config.toml (project); gemini: mcpServers in
    ~/.gemini/settings.json (user) or .gemini/settings.json (project); opencode: mcp in
    ~/.config/opencode/opencode.json (user) or opencode.json (project).
    """
    from wardian.app.mcp_config import entry_argv
    from wardian.app.mcp_config import install as run

    result = run(host, agents=agent or [], uninstall=uninstall, scope=scope)
    if as_json:
        emit_json(result.to_json())
        return
    words = {
        "installed": "Installed the wardian MCP server in",
        "updated": "Updated the wardian MCP server in",
        "unchanged": "The wardian MCP server is already installed in",
        "removed": "Removed the wardian MCP server from",
        "absent": "No wardian MCP server to remove in",
    }
    stdout(f"{words[result.action]} {result.path} ({result.host}, {result.scope} scope)")
    if result.entry is not None:
        stdout("  " + " ".join(entry_argv(result.entry)))
    for note in result.notes:
        stdout(f"  note: {note}")
