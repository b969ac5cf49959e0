"""`wardian memory …`: agent-facing memory commands (need the managed process's capability).

Every command first authenticates the calling managed process
(`wardian.app.agent_memory.open_agent_memory`) and then acts on that agent's records only;
without a valid capability it exits 3 with a one-line reason and writes nothing.

The current workspace of a command is the git root of its current directory (or the
directory itself outside git): the default scope of `save`, and the workspace whose
records `recall` considers. `agent exec` starts the process in its launch workspace, so
by default the two agree.

Human output of `list` and `recall` uses the startup context's line format
(``- [id8] kind · scope: text``) so the ids an agent sees are the same everywhere. Only
typer and the light memory modules are imported on this path (no pydantic models, no
Rich, no Jinja2) to keep a whole-process call fast; ``save`` and ``recall`` usually do not
even get here: `wardian.cli.hot` runs their bodies without Typer.

Spec: "Save and inspect memory", "What appears in chat".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from wardian.cli._common import DashArgsCommand, JsonOption, emit_json, stdout
from wardian.cli.hot import memory_recall, memory_save, report_record

if TYPE_CHECKING:
    from wardian.app.agent_memory import AgentMemory, Record

app = typer.Typer(
    help="Agent-facing memory commands (need the managed process's capability).",
    no_args_is_help=True,
)

KindOpt = typer.Option(None, "--kind", help="stable (default) or current.")
SourceOpt = typer.Option(
    [], "--source", help="TYPE=LOCATOR link kept for deeper inspection; repeatable."
)


def _open() -> AgentMemory:
    """Authenticate the caller and open its records (exit 3 before anything is written)."""
    from wardian.app.agent_memory import open_agent_memory

    return open_agent_memory()


def _line(record: Record) -> str:
    from wardian.app.agent_memory import record_line

    return record_line(record)


def _show(record: Record) -> None:
    scope = record.scope.label()
    stdout(f"id:          {record.id}")
    stdout(f"revision:    {record.current_revision_id}")
    stdout(f"kind:        {record.kind}")
    stdout(f"scope:       {scope}")
    stdout(f"status:      {record.status}"
           + (f" ({record.removed_reason})" if record.removed_reason else ""))
    stdout(f"created:     {record.created_at}")
    stdout(f"updated:     {record.updated_at}")
    stdout(f"text:        {record.text}")
    stdout(f"evidence:    {record.evidence}")
    for source in record.sources:
        mark = " (primary)" if source.primary else ""
        stdout(f"source:      {source.source_type}={source.locator}{mark}")


@app.command("save", cls=DashArgsCommand, context_settings={"ignore_unknown_options": True})
def save(
    text: str = typer.Argument(
        ..., help="What to remember (at most 8,192 characters). Text that starts with '-' "
        "(a pasted key block) is taken as the text too; `--` before it always works: "
        "memory save --evidence E -- \"-text\"."),
    evidence: str = typer.Option(
        ..., "--evidence", help="Excerpt that justifies it (required, at most 8,192)."
    ),
    kind: str = typer.Option("stable", "--kind", help="stable (default) or current."),
    scope: str = typer.Option(
        "workspace", "--scope", help="workspace (default: git root of this directory) or agent."
    ),
    source: list[str] = SourceOpt,
    as_json: bool = JsonOption,
) -> None:
    """Save a memory record for this agent (the first --source is marked primary).

    Saving the same text, kind and scope again returns the existing record ("Memory
    unchanged · already saved"); different evidence or new sources are added to it as a
    revision. Text, evidence and sources that hold a secret are refused (exit 2): save a
    reference to where the secret lives instead.
    """
    memory_save(text, evidence=evidence, kind=kind, scope=scope, sources=list(source),
                as_json=as_json)


@app.command("list")
def list_(
    kind: str | None = KindOpt,
    scope: str | None = typer.Option(None, "--scope", help="agent or workspace."),
    include_removed: bool = typer.Option(False, "--all", help="Include removed records."),
    as_json: bool = JsonOption,
) -> None:
    """List this agent's records (every workspace), newest first."""
    records = _open().list(kind=kind, scope=scope, include_removed=include_removed)
    if as_json:
        emit_json([r.to_json() for r in records])
        return
    if not records:
        stdout("(no memory records)")
    for record in records:
        where = f" ({record.scope.path})" if record.scope.kind == "workspace" else ""
        removed = " [removed]" if record.status == "removed" else ""
        stdout(_line(record) + where + removed)


@app.command("recall", help=(
    "Recall memory: the startup set (no query), or the records that fit a query, best first."
    "\n\nA query is matched by its words and, with the optional embedding model, by meaning."
    " When nothing fits, it says so, then lists up to three records that came nearest below"
    " the relevance floor, under their own heading: they may not answer it."))
def recall(
    query: str | None = typer.Argument(None, help="Words to search for; omit for the startup set."),
    limit: int = typer.Option(10, "--limit", min=1, help="Maximum records for a query."),
    as_json: bool = JsonOption,
) -> None:
    """``wardian memory recall`` (its help is the command's ``help=``: one paragraph per
    line, as the terminal wraps it)."""
    memory_recall(query, limit=limit, as_json=as_json)


@app.command("show")
def show(record_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JsonOption) -> None:
    """Show one of this agent's records (full id or unique prefix), also when removed."""
    record = _open().show(record_id)
    if as_json:
        emit_json(record.to_json())
    else:
        _show(record)


@app.command("history")
def history(
    record_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JsonOption
) -> None:
    """Show every revision of one of this agent's records, oldest first."""
    revisions = _open().history(record_id)
    if as_json:
        emit_json([r.to_json() for r in revisions])
        return
    for rev in revisions:
        snap = rev.snapshot
        reason = f" · reason: {rev.reason}" if rev.reason else ""
        stdout(f"#{rev.seq} {rev.revision_id}  {rev.created_at}  {rev.actor}{reason}")
        text = " ⏎ ".join(part.strip() for part in str(snap["text"]).strip().splitlines())
        stdout(f"    {snap['status']} · {snap['kind']} · {snap['scope']['kind']}: {text}")


@app.command("update")
def update(
    record_id: str = typer.Argument(..., metavar="ID"),
    text: str | None = typer.Option(None, "--text", help="New text."),
    kind: str | None = KindOpt,
    scope: str | None = typer.Option(
        None, "--scope", help="workspace (this directory's git root) or agent."
    ),
    evidence: str | None = typer.Option(None, "--evidence", help="New evidence excerpt."),
    source: list[str] = SourceOpt,
    reason: str | None = typer.Option(None, "--reason", help="Why (kept in history)."),
    as_json: bool = JsonOption,
) -> None:
    """Update one of this agent's active records; the previous state stays in history."""
    from wardian.app.agent_memory import ROW_UPDATED

    record = _open().update(record_id, text=text, kind=kind, scope=scope, evidence=evidence,
                            sources=source, reason=reason)
    report_record(record, ROW_UPDATED, as_json=as_json)


@app.command("remove")
def remove(
    record_id: str = typer.Argument(..., metavar="ID"),
    reason: str | None = typer.Option(None, "--reason", help="Why (kept in history)."),
    as_json: bool = JsonOption,
) -> None:
    """Remove one of this agent's records; it and its history stay inspectable."""
    from wardian.app.agent_memory import ROW_REMOVED

    record = _open().remove(record_id, reason=reason)
    report_record(record, ROW_REMOVED, as_json=as_json)


@app.command("draft-plan")
def draft_plan(
    memory_ids: list[str] = typer.Argument(..., metavar="ID...", help="This agent's records."),
    output: str | None = typer.Option(
        None, "--output", help="Write the plan to this file instead of printing it."
    ),
) -> None:
    """Draft a maintenance plan (schema v1) for some of this agent's records.

    Writes nothing to memory: the plan is a proposal that only the operator can preview and
    apply (`wardian garden maintain preview|apply PLAN --agent A`).
    """
    doc = _open().draft_plan(memory_ids)
    if output is None:
        emit_json(doc)
        return
    from pathlib import Path

    from wardian.app.plan_file import write_plan

    write_plan(doc, Path(output))  # private: the draft quotes the agent's records
    stdout(f"Draft plan written to {output} · {len(doc['operations'])} operation(s) · "
           "the operator previews it with `wardian garden maintain preview`")


@app.command("import")
def import_(
    files: list[str] = typer.Argument(..., metavar="FILE...",
                                      help="CLAUDE.md / AGENTS.md / GEMINI.md-style Markdown."),
    scope: str | None = typer.Option(
        None, "--scope", help="workspace (the default: the git root of the folder you run "
        "it in, or that folder outside git; see --workspace) or agent (every project)."),
    workspace: str | None = typer.Option(
        None, "--workspace", help="The workspace folder the bullets belong to (default: "
        "the current folder's)."),
    output: str | None = typer.Option(
        None, "--output", help="Write the plan to this file instead of printing it."
    ),
) -> None:
    """Draft a maintenance plan from instruction files: one create per durable bullet.

    Writes nothing to memory: the operator previews and applies the plan
    (`wardian garden maintain preview|apply PLAN --agent A`). Bullets this agent already
    remembers are left out.
    """
    drafted = _open().draft_import(files, scope=scope, workspace=workspace)
    if drafted.plan is None:
        stdout(f"Nothing to import · {drafted.summary()}")
        return
    if output is None:
        emit_json(drafted.plan)
        return
    from pathlib import Path

    from wardian.app.plan_file import write_plan

    write_plan(drafted.plan, Path(output))
    stdout(f"Import plan written to {output} · {drafted.summary()} · the operator previews "
           "it with `wardian garden maintain preview`")
