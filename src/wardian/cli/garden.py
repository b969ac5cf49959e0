"""`wardian garden …`: the operator's view of every agent's memory (CLI.md "garden").

Operator-only: every command refuses to run inside a managed process (exit 3; see
`wardian.cli._common.require_operator`). `garden memory list|show|history|loaded|stale` is
read-only inspection across agents (``stale --draft-plan`` writes only a plan file);
`garden memory reviews` and `garden memory review show|apply` (module
`wardian.cli.garden_reviews`) list and apply the plans the memory-review blueprint drafted;
`garden memory retire|revise` correct one record through a one-operation plan, and
`garden maintain …` (module `wardian.cli.garden_maintain`) is reviewed maintenance — both
through the same preview, confirmation and apply (`wardian.app.maintenance`). Every
command parses its options, calls the application layer (`wardian.app.garden`,
`wardian.app.maintenance`) and renders what comes back.

Spec: "Save and inspect memory" (cross-agent inspection is the operator's), "What appears
in chat" (Memory loaded rows), "Operator maintenance in Garden".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from wardian.cli import garden_maintain, garden_reviews, garden_transfer
from wardian.cli._common import JsonOption, emit_json, require_operator, shown, stdout

__all__ = ["app", "require_operator"]  # require_operator: re-exported for older imports

app = typer.Typer(
    help="Operator inspection and reviewed maintenance of any agent's memory.",
    no_args_is_help=True,
)

memory_app = typer.Typer(
    help="Inspect any agent's memory records and Memory loaded events; list stale "
    "checkpoints; retire or revise one record through a reviewed one-operation plan.",
    no_args_is_help=True,
)
app.add_typer(memory_app, name="memory")

AgentOpt = typer.Option(..., "--agent", help="Agent name, id or unique id prefix.")


def _owner(agent: str) -> tuple[str, str]:
    """(agent id, display name) for ``--agent``: a registered agent by name, id or prefix,
    else the owner id (or prefix) of records kept by ``agent remove --keep-records``."""
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import resolve_owner

    return resolve_owner(open_state_db(), open_memory_db(), agent)


def _one_line(text: str) -> str:
    return " ⏎ ".join(part.strip() for part in text.strip().splitlines())


@memory_app.command("list")
def memory_list(
    agent: str = AgentOpt,
    include_removed: bool = typer.Option(False, "--all", help="Include removed records."),
    flagged: bool = typer.Option(
        False, "--flagged",
        help="Only records set aside for review (they hold what looks like a secret); their "
        "text and evidence are shown with the secret replaced by a placeholder.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """List an agent's records with id and current revision id, newest first."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.garden import agent_records, redacted_json

    owner, name = _owner(agent)
    records = agent_records(open_memory_db(), owner, include_removed=include_removed,
                            flagged=flagged)
    docs = [redacted_json(r) if flagged else r.to_json() for r in records]
    if as_json:
        emit_json({"agent": {"id": owner, "name": name}, "records": docs})
        return
    # One block per record rather than a table: full ids must never be folded.
    what = "flagged record(s)" if flagged else "record(s)"
    stdout(f"{name} · owner {owner} · {len(records)} {what}")
    for r, doc in zip(records, docs, strict=True):
        stdout(f"{r.id}  revision {r.current_revision_id}")
        stdout(f"    {r.kind} · {r.scope.label()} · {r.status} · updated {r.updated_at}")
        stdout(f"    {_one_line(doc['text'])}")
        if r.flagged:
            stdout(f"    SET ASIDE: {r.flagged} (not recalled, not in the startup context)")
    if flagged and records:
        stdout("Retire each with `wardian garden memory retire ID --agent "
               f"{agent} --reason R`, or replace its text with `wardian garden memory "
               f"revise ID --agent {agent} --text ...`.")
    elif not flagged:
        held = sum(1 for r in records if r.flagged)
        if held:
            stdout(f"{held} record(s) set aside as holding a secret: review them with "
                   f"`wardian garden memory list --agent {agent} --flagged`.")


@memory_app.command("show")
def memory_show(
    record_id: str = typer.Argument(..., metavar="ID", help="Full id or unique prefix."),
    as_json: bool = JsonOption,
) -> None:
    """Show any agent's record (id, current revision id, owner, sources)."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.garden import find_record

    record = find_record(open_memory_db(), record_id)
    if as_json:
        emit_json(record.to_json())
        return
    doc = record.to_json()
    doc["scope"] = record.scope.label()
    doc["sources"] = ", ".join(
        f"{s.source_type}={s.locator}{' (primary)' if s.primary else ''}" for s in record.sources
    ) or "-"
    for key, value in doc.items():
        stdout(f"{key:>20}: {shown(value)}")


@memory_app.command("history")
def memory_history(
    record_id: str = typer.Argument(..., metavar="ID", help="Full id or unique prefix."),
    as_json: bool = JsonOption,
) -> None:
    """Every revision of any agent's record, oldest first."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.garden import record_history

    record, revisions = record_history(open_memory_db(), record_id)
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


@memory_app.command("refusals")
def memory_refusals(
    agent: str = AgentOpt,
    as_json: bool = JsonOption,
) -> None:
    """List refused uses of a capability outside its own launch's process tree (a token
    read from another process or replayed), where AGENT held it or made the attempt."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.garden import capability_refusals

    owner, name = _owner(agent)
    found = capability_refusals(open_memory_db(), owner)
    if as_json:
        emit_json({"agent": {"id": owner, "name": name},
                   "refusals": [r._asdict() for r in found]})
        return
    if not found:
        stdout(f"(no refused capability uses for {name})")
    for refusal in found:
        stdout(f"{refusal.at} · pid {refusal.caller_pid} · {refusal.reason}")


@memory_app.command("reindex")
def memory_reindex(as_json: bool = JsonOption) -> None:
    """Give every record that has no vector (saved while the embedding model was missing
    or unreadable, or under an older one) its vector, so semantic recall finds it by meaning.
    Idempotent; without the model it says so and changes nothing."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.reindex import reindex_vectors

    result = reindex_vectors(open_memory_db())
    if as_json:
        emit_json(result.to_json())
        return
    if not result.semantic:
        stdout("semantic recall is off: the embedding model (wordllama) is missing or"
               " unreadable, so there are no vectors to compute (recall ranks by words"
               " only); `wardian doctor` says why and how to reinstall it")
        return
    stdout(f"{result.filled} record(s) got a vector ({result.model});"
           f" {result.missing} still without one")


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
    from wardian.app.databases import open_memory_db
    from wardian.app.garden import loaded_events

    owner, name = _owner(agent)
    events = loaded_events(open_memory_db(), owner, limit=limit)
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


# --- garden memory import / export ------------------------------------------------------
garden_transfer.register(memory_app)
garden_reviews.register(memory_app)


# --- hygiene: stale checkpoints, one-record corrections ---------------------------------


@memory_app.command("stale")
def memory_stale(
    agent: str = AgentOpt,
    draft_plan: Path | None = typer.Option(
        None, "--draft-plan", metavar="PLAN",
        help="Write a maintenance plan retiring the stale records to this file (review it "
        "with `wardian garden maintain preview PLAN --agent A`).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """List an agent's stale `current` checkpoints: not updated for
    memory.current_review_days (default 14) days, oldest first."""
    require_operator()
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import saved_ago, stale_checkpoints
    from wardian.app.maintenance import stale_retire_plan
    from wardian.app.plan_file import write_plan

    owner, name = _owner(agent)
    found = stale_checkpoints(open_state_db(), open_memory_db(), owner)
    days, stale = found.review_days, found.records
    written = None
    if draft_plan is not None and stale:
        document = stale_retire_plan(owner, stale, review_days=days)
        written = str(write_plan(document, draft_plan))
    if as_json:
        emit_json({"agent": {"id": owner, "name": name}, "current_review_days": days,
                   "records": [item.to_json() for item in stale], "draft_plan": written})
        return
    stdout(f"{name} · owner {owner} · {len(stale)} stale current record(s) "
           f"(not updated for {days}+ days; setting memory.current_review_days)")
    for item in stale:
        r = item.record
        stdout(f"{r.id}  revision {r.current_revision_id}")
        stdout(f"    current · {r.scope.label()} · {saved_ago(item.age_days)}")
        stdout(f"    {_one_line(r.text)}")
    if written:
        stdout(f"Retire plan written to {written} · {min(len(stale), 100)} operation(s) · "
               f"review it: wardian garden maintain preview {written} --agent {agent}")
    elif draft_plan is not None:
        stdout("Nothing stale: no plan written.")


ConfirmOpt = typer.Option(
    None, "--confirm",
    help="Also check the digest: sha256:<12 hex> exactly as the preview shows. The terminal "
    "question is asked all the same.",
)
OutputOpt = typer.Option(
    None, "--output", metavar="PLAN",
    help="Only write the one-operation plan to this file (preview/apply it later with "
    "`wardian garden maintain`); nothing is previewed or applied.",
)


def _one_record_plan(
    agent: str, build: Any, *, confirm: str | None, output: Path | None, as_json: bool
) -> None:
    """Preview, confirm and apply a one-operation plan exactly like a plan file."""
    from wardian.app.maintenance import PreviewConflicted, apply_on_terminal, preview_plan
    from wardian.app.plan_file import write_plan

    owner, name = _owner(agent)
    plan, document = build(owner)
    if output is not None:
        write_plan(document, output)
        stdout(f"Plan written to {output} · 1 operation · preview it with "
               f"`wardian garden maintain preview {output} --agent {agent}`")
        return
    preview = preview_plan(plan, owner)
    doc = preview.to_json()
    if not as_json:
        garden_maintain._render_preview(doc, name, None, agent, apply_lines=[
            "Conflicts: none. Confirm below on the terminal (--confirm "
            f"{doc['digest_prefix']} has the digest checked too).",
        ])
    if preview.conflicts:
        if as_json:
            emit_json({"preview": doc, "applied": None})
        raise PreviewConflicted(owner, preview.digest, len(preview.conflicts))
    result = apply_on_terminal(plan, owner, confirm_digest=confirm)
    if as_json:
        emit_json({"preview": doc, "applied": {"replayed": result.replayed,
                                                "receipt": result.receipt.to_json()}})
        return
    garden_maintain.print_applied(result, as_json=False)


@memory_app.command("retire")
def memory_retire(
    record_id: str = typer.Argument(..., metavar="ID", help="Full id or unique prefix."),
    agent: str = AgentOpt,
    reason: str = typer.Option(..., "--reason", help="Why it is retired (kept in history)."),
    confirm: str | None = ConfirmOpt,
    output: Path | None = OutputOpt,
    as_json: bool = JsonOption,
) -> None:
    """Retire one record through a one-operation plan: the same preview, confirmation and
    receipt as `garden maintain apply`."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.maintenance import retire_record_plan

    _one_record_plan(
        agent, lambda owner: retire_record_plan(open_memory_db(), owner, record_id,
                                                reason=reason),
        confirm=confirm, output=output, as_json=as_json,
    )


@memory_app.command("revise")
def memory_revise(
    record_id: str = typer.Argument(..., metavar="ID", help="Full id or unique prefix."),
    agent: str = AgentOpt,
    text: str | None = typer.Option(None, "--text", help="New text."),
    kind: str | None = typer.Option(None, "--kind", help="stable or current."),
    scope: str | None = typer.Option(
        None, "--scope",
        help="agent, workspace (this directory's git root) or an absolute workspace path.",
    ),
    evidence: str | None = typer.Option(None, "--evidence", help="New evidence excerpt."),
    confirm: str | None = ConfirmOpt,
    output: Path | None = OutputOpt,
    as_json: bool = JsonOption,
) -> None:
    """Revise one record through a one-operation plan: the same preview, confirmation and
    receipt as `garden maintain apply`. Only the fields given change."""
    require_operator()
    from wardian.app.databases import open_memory_db
    from wardian.app.maintenance import revise_record_plan, revise_scope

    where = revise_scope(scope)
    _one_record_plan(
        agent, lambda owner: revise_record_plan(open_memory_db(), owner, record_id, text=text,
                                                kind=kind, scope=where, evidence=evidence),
        confirm=confirm, output=output, as_json=as_json,
    )


# --- garden serve ------------------------------------------------------------------------


@app.command("serve")
def serve(
    port: int = typer.Option(
        0, "--port", help="TCP port on 127.0.0.1 (0, the default: any free port)."),
    open_browser: bool = typer.Option(
        False, "--open", help="Open Garden in the default browser through a one-time "
        "link (the token is never on a command line)."),
) -> None:
    """Serve Garden in the browser on 127.0.0.1 until Ctrl-C: agents, memory, history, Memory loaded, runs, invokers and Maintain memory….

    Prints a URL with a random access token and a secret base path made for this start; requests without them, with another Host header or another site's Origin are refused.
    """  # noqa: E501 (one paragraph each: Rich re-wraps help text)
    require_operator()
    from wardian.web.server import serve as run_server

    raise typer.Exit(run_server(port, open_browser=open_browser, announce=stdout))


# --- garden maintain ---------------------------------------------------------------------
# Reviewed maintenance lives in its own module, owned by the maintenance work; it is only
# registered here.
app.add_typer(garden_maintain.app, name="maintain")
