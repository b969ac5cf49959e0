"""`wardian agent …`: the agents registry, managed launches and the model catalog (CLI.md).

add/list/show/remove/exec/launch/clear-bad-launches are the operator's: inside a managed
process they exit 3 (`require_operator`), so an agent can neither see other agents' ids nor
remove another agent with its records, nor launch itself as another agent. `agent models`
is anyone's.
"""

from __future__ import annotations

import typer

from wardian.cli._common import (
    JsonOption,
    emit_json,
    print_table,
    require_operator,
    shown,
    stderr,
    stdout,
)

app = typer.Typer(help="Agents: durable identities, their managed processes and models.",
                  no_args_is_help=True)


@app.command("add")
def add(
    name: str = typer.Argument(..., help="Unique agent name."),
    provider: str = typer.Option(..., "--provider", help="Provider of its CLI, e.g. claude."),
    model: str | None = typer.Option(
        None, "--model", help="Exact model id, checked against `wardian agent models`."),
    effort: str | None = typer.Option(None, "--effort", help="Effort level."),
    workspace: str | None = typer.Option(None, "--workspace", help="Default workspace path."),
    as_json: bool = JsonOption,
) -> None:
    """Create an agent (a UUID4 id is allocated) and print it."""
    from wardian.app.agents import add_agent
    from wardian.config import open_state_db

    require_operator()
    agent = add_agent(open_state_db(), name, provider, model=model, effort=effort,
                      workspace=workspace,
                      warn=lambda msg: stderr(f"Warning: {msg}"))
    if as_json:
        emit_json(agent.to_json())
    else:
        stdout(f"Agent {agent.name} added · id {agent.id}")


@app.command("set")
def set_(
    name_or_id: str = typer.Argument(..., help="Agent name, id or unique id prefix."),
    provider: str | None = typer.Option(None, "--provider", help="Provider of its CLI."),
    model: str | None = typer.Option(
        None, "--model", help="Exact model id, checked against `wardian agent models`."),
    effort: str | None = typer.Option(None, "--effort", help="Effort level."),
    workspace: str | None = typer.Option(None, "--workspace", help="Default workspace path."),
    as_json: bool = JsonOption,
) -> None:
    """Change an agent's provider, model, effort or workspace (validated like `add`; '' clears
    model, effort or workspace); its memory stays. Newly launched processes use them."""
    from wardian.app.agents import set_agent
    from wardian.config import open_state_db

    require_operator()
    agent = set_agent(open_state_db(), name_or_id, provider=provider, model=model, effort=effort,
                      workspace=workspace, warn=lambda msg: stderr(f"Warning: {msg}"))
    if as_json:
        emit_json(agent.to_json())
    else:
        stdout(f"Agent {agent.name} updated · provider {agent.provider} · model "
               f"{agent.model or '-'} · effort {agent.effort or '-'} · workspace "
               f"{agent.workspace or '-'}")


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """List agents with their ids."""
    from wardian.app.agents import list_agents
    from wardian.config import open_state_db

    require_operator()
    agents = list_agents(open_state_db())
    if as_json:
        emit_json([a.to_json() for a in agents])
        return
    print_table(
        ["name", "id", "provider", "model", "effort", "workspace"],
        [(a.name, a.id, a.provider, a.model, a.effort, a.workspace) for a in agents],
    )


@app.command("show")
def show(name_or_id: str, as_json: bool = JsonOption) -> None:
    """Show one agent by name, id or unique id prefix."""
    from wardian.app.agents import describe_agent
    from wardian.app.databases import open_memory_db, open_state_db

    require_operator()
    doc = describe_agent(open_state_db(), open_memory_db(), name_or_id)
    if as_json:
        emit_json(doc)
        return
    for key, value in doc.items():
        stdout(f"{key:>15}: {shown(value)}")


@app.command("remove")
def remove(
    name_or_id: str,
    keep_records: bool = typer.Option(
        False, "--keep-records", help="Remove the agent but keep its memory records stored."
    ),
    delete_records: bool = typer.Option(
        False, "--delete-records", help="Remove the agent and permanently delete its records."
    ),
) -> None:
    """Remove an agent; refuses while it has memory records unless told what to do with them."""
    from wardian.app.agents import remove_agent
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.errors import UsageError

    require_operator()
    if keep_records and delete_records:
        raise UsageError("--keep-records and --delete-records exclude each other")
    done = remove_agent(open_state_db(), open_memory_db(), name_or_id,
                        records="delete" if delete_records
                        else "keep" if keep_records else "refuse")
    count = done.record_count
    kept = f"; {count} record(s) kept" if done.records == "kept" else ""
    deleted = f"; {count} record(s) deleted" if done.records == "deleted" else ""
    stdout(f"Agent {done.agent.name} removed{kept}{deleted}")


@app.command("clear-bad-launches")
def clear_bad_launches(as_json: bool = JsonOption) -> None:
    """Clear recorded launches that cannot name a launch's supervisor (`wardian doctor`).

    Deletes those launch rows and revokes those capabilities: pid 1 or another
    namespace's process recorded from inside a pid namespace, or a start time no
    supervisor can have (what `wardian doctor` reports under "Recorded launches").
    """
    from wardian.app.agents import clear_bad_launches as clear
    from wardian.app.databases import open_existing_memory_db

    require_operator()
    cleared = clear(open_existing_memory_db())
    if as_json:
        emit_json({"cleared": [{"table": c.table, "id": c.key, "agent_id": c.agent_id,
                                "pid": c.pid, "reason": c.reason} for c in cleared]})
        return
    for one in cleared:
        what = "launch" if one.table == "launches" else "capability"
        stdout(f"cleared {what} {one.key[:8]} of agent {one.agent_id[:8]}: {one.reason}")
    stdout(f"{len(cleared)} bad launch row(s) cleared")


@app.command(
    "exec",
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
)
def exec_(
    name_or_id: str = typer.Argument(..., metavar="NAME", help="Agent name, id or id prefix."),
    command: list[str] = typer.Argument(..., metavar="-- CMD [ARGS]...", help="What to run."),
    workspace: str | None = typer.Option(
        None, "--workspace", help="Directory to run in; its git root is the launch workspace."
    ),
) -> None:
    """Run CMD as a managed process of the agent and exit with its exit code.

    Exits 127 when CMD is not found, 126 when it cannot be run, 128+N on signal N.

    Memory enabled: CMD gets its own capability and a startup context file
    (WARDIAN_CAPABILITY, WARDIAN_MEMORY_CONTEXT). Always: WARDIAN_AGENT_ID, WARDIAN_LAUNCH_ID.
    """
    from wardian.cli.hot import agent_exec

    raise typer.Exit(agent_exec(name_or_id, command, workspace))


from wardian.cli import agent_models  # noqa: E402

agent_models.register(app)


@app.command(
    "launch",
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
)
def launch(
    name_or_id: str = typer.Argument(..., metavar="NAME", help="Agent name, id or id prefix."),
    args: list[str] | None = typer.Argument(
        None, metavar="[-- ARGS]...", help="Extra arguments for the provider CLI."
    ),
    workspace: str | None = typer.Option(
        None, "--workspace", help="Directory to run in; its git root is the launch workspace."
    ),
) -> None:
    """Start the agent's provider CLI (claude, codex, gemini, opencode) interactively as a managed
    process, with its model, effort, capability and startup recall; exits with its code."""
    from wardian.app.agents import launch_agent

    require_operator()
    extra = list(args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    raise typer.Exit(launch_agent(name_or_id, extra, workspace=workspace))
