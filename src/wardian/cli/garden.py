"""`wardian garden …`: the operator's view of every agent's memory (CLI.md "garden").

Operator-only: every command refuses to run inside a managed process (exit 3; see
`wardian.cli._common.require_operator`). `garden memory …` is read-only inspection across
agents; `garden maintain …` (module `wardian.cli.garden_maintain`) is reviewed maintenance.

Spec: "Save and inspect memory" (cross-agent inspection is the operator's), "What appears
in chat" (Memory loaded rows), "Operator maintenance in Garden"; issue 2 point 7.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from wardian.cli import garden_maintain
from wardian.cli._common import JsonOption, emit_json, require_operator, stdout

if TYPE_CHECKING:
    from wardian.memory.models import Record
    from wardian.memory.store import MemoryStore

__all__ = ["app", "require_operator"]  # require_operator: re-exported for older imports

app = typer.Typer(
    help="Operator inspection and reviewed maintenance of any agent's memory.",
    no_args_is_help=True,
)

memory_app = typer.Typer(
    help="Inspect any agent's memory records and Memory loaded events (read-only).",
    no_args_is_help=True,
)
app.add_typer(memory_app, name="memory")

AgentOpt = typer.Option(..., "--agent", help="Agent name, id or unique id prefix.")


def _owner(agent: str) -> tuple[str, str]:
    """(agent id, display name) for ``--agent``: a registered agent by name, id or prefix,
    else the owner id (or prefix) of records kept by ``agent remove --keep-records``."""
    from wardian.app.garden import resolve_owner

    return resolve_owner(agent)


def _record(store: MemoryStore, record_id: str) -> Record:
    """Any agent's record by id or prefix; not found names the operator's list command.

    The store's hint is the agent's (`memory list`, its own records); here the operator
    looks across agents, so the hint is re-worded for this surface.

    Raises:
        NotFoundError (exit 1): no record has this id or prefix.
        AmbiguousIdError (exit 2): several do (their ids are listed).
    """
    from wardian.errors import AmbiguousIdError, NotFoundError

    try:
        return store.get(record_id, agent_id=None)
    except AmbiguousIdError:
        raise
    except NotFoundError as exc:
        raise NotFoundError(
            exc.message, hint="list an agent's records with "
            "`wardian garden memory list --agent NAME`",
        ) from exc


def _one_line(text: str) -> str:
    return " ⏎ ".join(part.strip() for part in text.strip().splitlines())


@memory_app.command("list")
def memory_list(
    agent: str = AgentOpt,
    include_removed: bool = typer.Option(False, "--all", help="Include removed records."),
    as_json: bool = JsonOption,
) -> None:
    """List an agent's records with id and current revision id, newest first."""
    require_operator()
    from wardian.memory.store import MemoryStore

    owner, name = _owner(agent)
    records = MemoryStore().list(owner, include_removed=include_removed)
    if as_json:
        emit_json({"agent": {"id": owner, "name": name},
                   "records": [r.to_json() for r in records]})
        return
    # One block per record rather than a table: full ids must never be folded.
    stdout(f"{name} · owner {owner} · {len(records)} record(s)")
    for r in records:
        stdout(f"{r.id}  revision {r.current_revision_id}")
        stdout(f"    {r.kind} · {r.scope.label()} · {r.status} · updated {r.updated_at}")
        stdout(f"    {_one_line(r.text)}")


@memory_app.command("show")
def memory_show(
    record_id: str = typer.Argument(..., metavar="ID", help="Full id or unique prefix."),
    as_json: bool = JsonOption,
) -> None:
    """Show any agent's record (id, current revision id, owner, sources)."""
    require_operator()
    from wardian.memory.store import MemoryStore

    record = _record(MemoryStore(), record_id)
    if as_json:
        emit_json(record.to_json())
        return
    doc = record.to_json()
    doc["scope"] = record.scope.label()
    doc["sources"] = ", ".join(
        f"{s.source_type}={s.locator}{' (primary)' if s.primary else ''}" for s in record.sources
    ) or "-"
    for key, value in doc.items():
        stdout(f"{key:>20}: {value if value is not None else '-'}")


@memory_app.command("history")
def memory_history(
    record_id: str = typer.Argument(..., metavar="ID", help="Full id or unique prefix."),
    as_json: bool = JsonOption,
) -> None:
    """Every revision of any agent's record, oldest first."""
    require_operator()
    from wardian.memory.store import MemoryStore

    store = MemoryStore()
    record = _record(store, record_id)
    revisions = store.history(record.id, agent_id=None)
    if as_json:
        emit_json({"record_id": record.id, "agent_id": record.agent_id,
                   "current_revision_id": record.current_revision_id,
                   "revisions": [r.to_json() for r in revisions]})
        return
    stdout(f"memory {record.id} · owner {record.agent_id} · {len(revisions)} revision(s)")
    for r in revisions:
        snap = r.snapshot
        scope = snap["scope"].get("path") or snap["scope"]["kind"]
        reason = f" · reason: {r.reason}" if r.reason else ""
        stdout(f"#{r.seq} {r.revision_id}  {r.created_at}  {r.actor}{reason}")
        stdout(f"    {snap['status']} · {snap['kind']} · {scope}: {_one_line(snap['text'])}")


@memory_app.command("loaded")
def memory_loaded(
    agent: str = AgentOpt,
    limit: int = typer.Option(20, "--limit", min=1, help="Newest N events."),
    last: bool = typer.Option(False, "--last", help="Only the newest event (= --limit 1)."),
    as_json: bool = JsonOption,
) -> None:
    """List Memory loaded events: time, receiving process and the exact context given."""
    require_operator()
    if last:
        limit = 1
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.store import MemoryStore

    owner, name = _owner(agent)
    events = LoadedEvents(MemoryStore().conn).list(owner, limit=limit)
    if as_json:
        emit_json({"agent": {"id": owner, "name": name},
                   "events": [e.to_json() for e in events]})
        return
    if not events:
        stdout(f"(no Memory loaded events for {name})")
    for event in events:
        omitted = f", {event.omitted_count} not loaded" if event.omitted_count else ""
        stdout(
            f"Memory loaded · {event.created_at} · pid {event.pid} · "
            f"{len(event.record_ids)} record(s){omitted} · workspace {event.workspace}"
        )
        stdout("-" * 72)
        stdout(event.context.rstrip("\n"))
        stdout("-" * 72)


# --- garden serve ------------------------------------------------------------------------


@app.command("serve")
def serve(
    port: int = typer.Option(
        0, "--port", help="TCP port on 127.0.0.1 (0, the default: any free port)."),
    open_browser: bool = typer.Option(
        False, "--open", help="Open the printed URL in the default browser."),
) -> None:
    """Serve Garden in the browser on 127.0.0.1 until Ctrl-C: agents, memory, history, Memory loaded, runs, invokers and Maintain memory….

    Prints a URL with a random access token made for this start; requests without it, with another Host header, or cross-site POSTs are refused.
    """  # noqa: E501 (one paragraph each: Rich re-wraps help text)
    require_operator()
    from wardian.web.server import serve as run_server

    raise typer.Exit(run_server(port, open_browser=open_browser, announce=stdout))


# --- garden maintain ---------------------------------------------------------------------
# Reviewed maintenance lives in its own module, owned by the maintenance work; it is only
# registered here.
app.add_typer(garden_maintain.app, name="maintain")
