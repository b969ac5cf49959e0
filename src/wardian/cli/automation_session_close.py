"""`wardian automation session-close …`: session-close invokers (CLI.md).

Operator-only: inside a managed process every command exits 3 — the ``automation`` group's
callback (`wardian.cli.automation`) checks it once for all of them.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from wardian.cli._common import JsonOption, emit_json, parse_kv, print_table, shown, stdout
from wardian.config import open_state_db

app = typer.Typer(help="Session-close invokers: fire a blueprint when an agent's session closes.",
                  no_args_is_help=True)


def _selection(assignments: dict[str, Any]) -> str:
    parts = []
    for role, a in sorted(assignments.items()):
        if not isinstance(a, dict):
            continue
        if a.get("target_type") == "agent":
            parts.append(f"{role}=agent:{a.get('agent')}")
        else:
            bits = [str(a.get("provider"))]
            if a.get("model"):
                bits.append(str(a["model"]))
            if a.get("effort"):
                bits.append(str(a["effort"]))
            parts.append(f"{role}={'/'.join(bits)}")
    return ", ".join(parts)


def _local(stamp: str | None) -> str:
    """A stored UTC timestamp in local time for human output (DESIGN.md "Conventions")."""
    if not stamp:
        return "-"
    from wardian._util import parse_utc

    return parse_utc(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _outcome(doc: dict[str, Any]) -> str:
    last = doc.get("last_outcome")
    if not last:
        return "-"
    text = f"{last['status']} {last['run_id'][:8]}"
    reason = last.get("skip_reason") or (last.get("error") if last["status"] != "succeeded"
                                         else None)
    if reason:
        text += f" ({reason})"
    return text


def _status(doc: dict[str, Any]) -> str:
    if doc["status"] == "broken":
        return f"broken: {doc['broken_reason']}"
    return str(doc["status"])


@app.command("add")
def add(
    blueprint: str = typer.Option(..., "--blueprint", help="Blueprint id (see `blueprint list`)."),
    name: str = typer.Option(..., "--name", help="A label for this invoker."),
    agent: str = typer.Option(..., "--agent", help="Agent name or id whose sessions fire it."),
    boundary: list[str] = typer.Option(
        [], "--boundary", help="Boundary reason to fire on (repeatable): clear, shutdown, "
        "provider_source_changed, worktree_switch, recovered (a session no hook reported, "
        "found by recovery). None given = any.",
    ),
    require_archive: bool = typer.Option(
        False, "--require-archive",
        help="Record a skipped run when the session left no conversation archive.",
    ),
    assignments: str | None = typer.Option(
        None, "--assignments", help='Role assignments as JSON, e.g. \'{"curator":{"target_type":'
        '"temporary_provider","provider":"codex","model":"ID","effort":"low"}}\'. '
        "Give this or --curator.",
    ),
    curator: str | None = typer.Option(
        None, "--curator", help="The curator role in one word instead of --assignments: host = "
        "a small model of the agent's own provider, exact model and effort from its refreshed "
        "catalog (printed); builtin = the rules curator.",
    ),
    input_: list[str] = typer.Option([], "--input", help="Blueprint input KEY=VALUE (repeatable)."),
    as_json: bool = JsonOption,
) -> None:
    """Create a session-close invoker, disabled; prints its id."""
    from wardian.app.session_close import add_session_close, curator_assignment
    from wardian.errors import UsageError

    if (assignments is None) == (curator is None):
        raise UsageError("give exactly one of --assignments and --curator",
                         hint="e.g. `--curator host` for the agent's own model, "
                         "`--curator builtin` for the rules curator")
    if curator is not None:
        chosen, line = curator_assignment(open_state_db(), curator, agent)
        typer.echo(line, err=True)
        assignments = json.dumps({"curator": chosen})
    invoker = add_session_close(
        open_state_db(),
        blueprint=blueprint, name=name, agent=agent, boundaries=list(boundary),
        require_archive=require_archive, assignments=assignments or "{}",
        inputs=parse_kv(input_, "--input"),
    )
    if as_json:
        emit_json(invoker.to_json())
        return
    stdout(invoker.id)
    typer.echo(
        f"Created disabled · enable it with `wardian automation session-close enable "
        f"{invoker.id[:8]}`", err=True,
    )


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """List session-close invokers: status, blueprint, agent, boundaries, bindings, last outcome."""
    from wardian.app.session_close import list_session_close

    docs = list_session_close(open_state_db())
    if as_json:
        emit_json(docs)
        return
    print_table(
        ["id", "name", "status", "blueprint", "agent", "boundaries", "archive", "assignments",
         "last outcome"],
        [(d["id"][:8], d["name"], _status(d), d["blueprint_id"],
          d["agent_name"] or d["agent_id"][:8], ",".join(d["boundaries"]),
          "required" if d["require_archive"] else "-", _selection(d["assignments"]), _outcome(d))
         for d in docs],
    )


@app.command("show")
def show(invoker_id: str = typer.Argument(..., help="Invoker id or prefix."),
         as_json: bool = JsonOption) -> None:
    """Show one session-close invoker."""
    from wardian.app.session_close import show_session_close

    doc = show_session_close(open_state_db(), invoker_id)
    if as_json:
        emit_json(doc)
        return
    rows = [
        ("id", doc["id"]), ("name", doc["name"]), ("status", _status(doc)),
        *([("fix", doc["fix"])] if doc["fix"] else []),
        ("blueprint", doc["blueprint_id"]),
        ("agent", f"{doc['agent_name'] or '?'} ({doc['agent_id']})"),
        ("boundaries", ", ".join(doc["boundaries"])),
        ("require archive", "yes" if doc["require_archive"] else "no"),
        ("assignments", _selection(doc["assignments"])),
        ("inputs", ", ".join(f"{k}={v}" for k, v in doc["inputs"].items()) or "-"),
        ("last outcome", _outcome(doc)), ("created", _local(doc["created_at"])),
        ("updated", _local(doc["updated_at"])),
    ]
    for key, value in rows:
        stdout(f"{key:>16}: {shown(value)}")


@app.command("set")
def set_(
    invoker_id: str = typer.Argument(..., help="Invoker id or prefix."),
    input_: list[str] = typer.Option(
        [], "--input", help="Blueprint input KEY=VALUE (repeatable); other inputs stay."),
    assignments: str | None = typer.Option(
        None, "--assignments", help="Role assignments as JSON (replaces the stored ones)."),
    boundary: list[str] = typer.Option(
        [], "--boundary", help="Boundary reason to fire on (repeatable; replaces the stored "
        "list): clear, shutdown, provider_source_changed, worktree_switch, recovered."),
    any_boundary: bool = typer.Option(
        False, "--any-boundary", help="Fire on every boundary (clears the stored list)."),
    require_archive: bool | None = typer.Option(
        None, "--require-archive/--no-require-archive",
        help="Record a skipped run when the session left no conversation archive."),
    name: str | None = typer.Option(None, "--name", help="A new label."),
    as_json: bool = JsonOption,
) -> None:
    """Edit an invoker, validated exactly as `add`; its enabled state and history stay."""
    from wardian.app.session_close import update_session_close
    from wardian.errors import UsageError

    if boundary and any_boundary:
        raise UsageError("--boundary and --any-boundary exclude each other")
    invoker = update_session_close(
        open_state_db(),
        invoker_id, inputs=parse_kv(input_, "--input") if input_ else None,
        assignments=assignments,
        boundaries=[] if any_boundary else (list(boundary) if boundary else None),
        require_archive=require_archive, name=name)
    if as_json:
        emit_json(invoker.to_json())
        return
    stdout(f"Updated {invoker.id[:8]} ({invoker.name})")


@app.command("enable")
def enable(invoker_id: str = typer.Argument(..., help="Invoker id or prefix.")) -> None:
    """Re-validate blueprint, assignments and catalog, then enable the invoker."""
    from wardian.app.session_close import set_enabled

    invoker = set_enabled(open_state_db(), invoker_id, True)
    stdout(f"Enabled {invoker.id[:8]} ({invoker.name})")


@app.command("disable")
def disable(invoker_id: str = typer.Argument(..., help="Invoker id or prefix.")) -> None:
    """Disable the invoker (it no longer fires; its history stays)."""
    from wardian.app.session_close import set_enabled

    invoker = set_enabled(open_state_db(), invoker_id, False)
    stdout(f"Disabled {invoker.id[:8]} ({invoker.name})")


@app.command("remove")
def remove(invoker_id: str = typer.Argument(..., help="Invoker id or prefix.")) -> None:
    """Remove the invoker; its runs stay in the run history."""
    from wardian.app.session_close import remove_session_close

    invoker = remove_session_close(open_state_db(), invoker_id)
    stdout(f"Removed {invoker.id[:8]} ({invoker.name})")


@app.command("history")
def history(invoker_id: str = typer.Argument(..., help="Invoker id or prefix."),
            limit: int = typer.Option(50, "--limit", help="At most this many runs."),
            as_json: bool = JsonOption) -> None:
    """The invoker's runs and recorded skips, newest first."""
    from wardian.app.session_close import session_close_history

    invoker, docs = session_close_history(open_state_db(), invoker_id, limit=limit)
    if as_json:
        emit_json({"invoker": invoker.to_json(), "runs": docs})
        return
    print_table(
        ["run", "status", "boundary", "event", "created", "reason / error"],
        [(d["run_id"][:8] or "-", d["status"], d["boundary"], (d["boundary_id"] or "")[:8],
          _local(d["created_at"]), d["skip_reason"] or d["error"] or "") for d in docs],
        title=f"{invoker.name} ({invoker.id[:8]})",
    )
