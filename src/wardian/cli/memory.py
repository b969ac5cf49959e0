"""`wardian memory …`: agent-facing memory commands (need the managed process's capability).

Every command first authenticates the calling managed process
(`wardian.memory.principal.resolve_principal`) and then acts on that agent's records only;
without a valid capability it exits 3 with a one-line reason and writes nothing.

The current workspace of a command is the git root of its current directory (or the
directory itself outside git): the default scope of `save`, and the workspace whose
records `recall` considers. `agent exec` starts the process in its launch workspace, so
by default the two agree.

Human output of `list` and `recall` uses the startup context's line format
(``- [id8] kind · scope: text``) so the ids an agent sees are the same everywhere. Only
typer and the light memory modules are imported on this path (no pydantic models, no
Rich, no Jinja2) to keep a whole-process call fast.

Spec: "Save and inspect memory", "What appears in chat"; issue 2 point 5.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from wardian.cli._common import JsonOption, emit_json, stdout

if TYPE_CHECKING:
    from wardian.memory.models import Record, Scope, Source
    from wardian.memory.principal import Principal
    from wardian.memory.recall import StartupContext
    from wardian.memory.store import MemoryStore

app = typer.Typer(
    help="Agent-facing memory commands (need the managed process's capability).",
    no_args_is_help=True,
)

ROW_SAVED = "Memory saved · This agent"
ROW_UNCHANGED = "Memory unchanged · already saved"
ROW_EVIDENCE_ADDED = "Memory updated · already saved, new evidence added"
ROW_UPDATED = "Memory updated · This agent"
ROW_REMOVED = "Memory removed · This agent"

KindOpt = typer.Option(None, "--kind", help="stable (default) or current.")
SourceOpt = typer.Option(
    [], "--source", help="TYPE=LOCATOR link kept for deeper inspection; repeatable."
)


def _open() -> tuple[Principal, MemoryStore]:
    """Authenticate the caller and open the store (exit 3 before anything is written)."""
    import os

    from wardian.config import memory_db_path
    from wardian.memory.principal import ENV_CAPABILITY, resolve_principal
    from wardian.memory.store import MemoryStore
    from wardian.runtime.process import is_alive, lineage

    # No capability, or no memory.db to check it against: fail closed before anything,
    # not even the data directory, is created.
    path = memory_db_path(create_dir=False)
    if not os.environ.get(ENV_CAPABILITY, "").strip() or not path.exists():
        # raises CapabilityMissing/Invalid
        resolve_principal(is_alive=is_alive, caller=(), db_path=path)
    caller = [(p.pid, p.started_at) for p in lineage()]
    store = MemoryStore(path)
    try:
        return resolve_principal(is_alive=is_alive, caller=caller, store=store), store
    except BaseException:
        store.close()
        raise


def _scope(value: str | None) -> Scope | None:
    from wardian.errors import UsageError
    from wardian.memory.models import Scope, default_workspace

    if value is None:
        return None
    if value == "agent":
        return Scope.agent()
    if value == "workspace":
        return Scope("workspace", default_workspace())
    raise UsageError(f"unknown scope {value!r}", hint="use --scope workspace or --scope agent")


def _sources(values: list[str], *, first_primary: bool) -> list[Source]:
    from wardian.errors import UsageError
    from wardian.memory.models import Source

    out: list[Source] = []
    for index, item in enumerate(values):
        kind, sep, locator = item.partition("=")
        if not sep or not kind.strip() or not locator.strip():
            raise UsageError(
                f"--source expects TYPE=LOCATOR, got {item!r}",
                hint="e.g. --source file=docs/release.md",
            )
        out.append(Source(kind.strip(), locator, primary=first_primary and index == 0))
    return out


def _line(record: Record) -> str:
    from wardian.memory.recall import record_line

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


def _report(record: Record, row: str, *, as_json: bool) -> None:
    """Print the changed record: its JSON, or its id8, kind, scope and status, then the
    spec's chat row (``Memory saved · This agent`` …) as the last line."""
    if as_json:
        emit_json(record.to_json())
        return
    removed = " · removed" if record.status == "removed" else ""
    stdout(f"{record.short_id}  {record.kind} · {record.scope.label()}{removed}")
    stdout(row)


@app.command("save", context_settings={"ignore_unknown_options": True})
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
    principal, store = _open()
    where = _scope(scope)
    assert where is not None
    outcome = store.save_once(
        principal.agent_id, text, evidence=evidence, kind=kind,  # type: ignore[arg-type]
        scope=where, sources=_sources(source, first_primary=True), actor=principal.actor,
    )
    if as_json:
        emit_json({**outcome.record.to_json(), "unchanged": outcome.unchanged,
                   "already_saved": outcome.already_saved})
        return
    row = {"saved": ROW_SAVED, "unchanged": ROW_UNCHANGED,
           "evidence_added": ROW_EVIDENCE_ADDED}[outcome.outcome]
    _report(outcome.record, row, as_json=False)


@app.command("list")
def list_(
    kind: str | None = KindOpt,
    scope: str | None = typer.Option(None, "--scope", help="agent or workspace."),
    include_removed: bool = typer.Option(False, "--all", help="Include removed records."),
    as_json: bool = JsonOption,
) -> None:
    """List this agent's records (every workspace), newest first."""
    principal, store = _open()
    # Records set aside as holding a secret stay out of the agent's view, as in recall.
    records = store.list(
        principal.agent_id, kind=kind, scope_kind=scope, include_removed=include_removed,
        flagged=False,
    )
    if as_json:
        emit_json([r.to_json() for r in records])
        return
    if not records:
        stdout("(no memory records)")
    for record in records:
        where = f" ({record.scope.path})" if record.scope.kind == "workspace" else ""
        removed = " [removed]" if record.status == "removed" else ""
        stdout(_line(record) + where + removed)


@app.command("recall")
def recall(
    query: str | None = typer.Argument(None, help="Words to search for; omit for the startup set."),
    limit: int = typer.Option(10, "--limit", min=1, help="Maximum records for a query."),
    as_json: bool = JsonOption,
) -> None:
    """Recall memory: the startup set (no query) or FTS5/BM25-ranked matches, then recency."""
    from wardian.memory.models import default_workspace

    principal, store = _open()
    workspace = default_workspace()
    if query is not None and query.strip():
        records = store.recall(principal.agent_id, query, limit=limit, workspace=workspace)
        if as_json:
            emit_json({"query": query, "workspace": workspace,
                       "records": [r.to_json() for r in records]})
            return
        if not records:
            stdout(f"(no memory matches {query!r})")
        for record in records:
            stdout(_line(record))
        return
    context = _startup_context(principal, store, workspace)
    if as_json:
        emit_json({
            "workspace": workspace, "budget_chars": context.budget_chars,
            "omitted": context.omitted, "records": [r.to_json() for r in context.loaded],
        })
        return
    marker = "\n## Recalled memory"
    stdout(context.text[context.text.index(marker) + 1:].rstrip("\n"))


def _startup_context(
    principal: Principal, store: MemoryStore, workspace: str
) -> StartupContext:
    from wardian.config import SettingsStore
    from wardian.memory.recall import load_startup_context
    from wardian.runtime.agents import AgentRegistry

    settings = SettingsStore()
    try:
        budget = int(settings.get("memory.startup_budget_chars"))
        review_days = int(settings.get("memory.current_review_days"))
    finally:
        settings.close()
    registry = AgentRegistry()
    try:
        agent = registry.find(principal.agent_id)
    finally:
        registry.close()
    name = agent.name if agent else principal.agent_id[:8]
    return load_startup_context(
        store, agent_id=principal.agent_id, agent_name=name, workspace=workspace,
        budget_chars=budget, current_review_days=review_days,
    )


@app.command("show")
def show(record_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JsonOption) -> None:
    """Show one of this agent's records (full id or unique prefix), also when removed."""
    principal, store = _open()
    record = store.get(record_id, agent_id=principal.agent_id)
    if as_json:
        emit_json(record.to_json())
    else:
        _show(record)


@app.command("history")
def history(
    record_id: str = typer.Argument(..., metavar="ID"), as_json: bool = JsonOption
) -> None:
    """Show every revision of one of this agent's records, oldest first."""
    principal, store = _open()
    revisions = store.history(record_id, agent_id=principal.agent_id)
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
    from wardian.memory.store import UNSET

    principal, store = _open()
    new_scope = _scope(scope)
    record = store.update(
        principal.agent_id, record_id,
        text=UNSET if text is None else text,
        evidence=UNSET if evidence is None else evidence,
        kind=UNSET if kind is None else kind,
        scope=UNSET if new_scope is None else new_scope,
        add_sources=_sources(source, first_primary=False),
        actor=principal.actor, reason=reason,
    )
    _report(record, ROW_UPDATED, as_json=as_json)


@app.command("remove")
def remove(
    record_id: str = typer.Argument(..., metavar="ID"),
    reason: str | None = typer.Option(None, "--reason", help="Why (kept in history)."),
    as_json: bool = JsonOption,
) -> None:
    """Remove one of this agent's records; it and its history stay inspectable."""
    principal, store = _open()
    record = store.remove(principal.agent_id, record_id, actor=principal.actor, reason=reason)
    _report(record, ROW_REMOVED, as_json=as_json)


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
    import json

    from wardian.memory.maintenance.draft import draft_plan as draft

    principal, store = _open()
    doc = draft(principal.agent_id, memory_ids, store)
    if output is None:
        emit_json(doc)
        return
    from pathlib import Path

    from wardian._fs import open_private

    # The draft quotes the agent's records: private like the database it came from.
    with open_private(Path(output), "w", encoding="utf-8", newline="") as handle:
        handle.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    stdout(f"Draft plan written to {output} · {len(doc['operations'])} operation(s) · "
           "the operator previews it with `wardian garden maintain preview`")
