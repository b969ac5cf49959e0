"""`wardian garden maintain …`: reviewed memory maintenance (preview, apply, check-receipt).

Owned by the maintenance work; registered by `wardian.cli.garden`. Operator only: every
command refuses inside a managed process (exit 3). Spec: "Operator maintenance in Garden" —
the desktop dialog becomes these commands; the flow and the guarantees are the same.
The commands call `wardian.app.maintenance` and render what it returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from wardian.cli._common import JsonOption, emit_json, require_operator, stdout

app = typer.Typer(
    help="Reviewed memory maintenance: preview a plan, apply it with confirmation, "
    "check a receipt.",
    no_args_is_help=True,
)

AgentOption = typer.Option(..., "--agent", help="The owner agent (name or id) the plan binds to.")
PlanArgument = typer.Argument(
    ..., metavar="PLAN", help="The plan file (JSON, schema version 1, at most 1 MiB)."
)


def _refuse_if_managed() -> None:
    """Operator commands refuse inside a managed process (exit 3, `OperatorOnly`)."""
    require_operator()


def _owner(agent: str) -> tuple[str, str]:
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import resolve_owner

    return resolve_owner(open_state_db(), open_memory_db(), agent, allow_removed=False)


PREVIEW_TEXT_CHARS = 600
"""A record text or evidence longer than this is shown cut in a preview, with its length
and the command that shows it whole (`--full` shows every text whole)."""


def _shown(text: str, full: bool, whole: str) -> str:
    """`text`, or (unless `full`) its first `PREVIEW_TEXT_CHARS` characters with a marker
    naming its length and `whole`, the command that prints all of it. Nothing an
    operator approves is hidden: the marker says a cut was made and where the rest is."""
    if full or len(text) <= PREVIEW_TEXT_CHARS:
        return text
    return (f"{text[:PREVIEW_TEXT_CHARS].rstrip()} … [cut: {len(text):,} characters; "
            f"{whole} shows the whole text]")


def _wrapped(text: str, indent: str) -> list[str]:
    """`text` whole, wrapped to the terminal width: each paragraph kept, no word cut."""
    import shutil
    import textwrap

    width = max(40, min(shutil.get_terminal_size((100, 24)).columns, 100))
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines.extend(textwrap.wrap(
            paragraph, width, initial_indent=indent, subsequent_indent=indent,
            break_long_words=False, break_on_hyphens=False,
        ) or [indent.rstrip()])
    return lines


def _scope(scope: dict[str, Any]) -> str:
    return "agent" if scope.get("kind") == "agent" else f"workspace:{scope.get('path')}"


def _state(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "(none)"
    status = "" if summary["status"] == "active" else f" · {summary['status'].upper()}"
    return (
        f"{summary['kind']} · {_scope(summary['scope'])} · {len(summary['sources'])} source(s)"
        f"{status}"
    )


def _show_state(label: str, summary: dict[str, Any] | None,
                before: dict[str, Any] | None = None, *, full: bool = False,
                whole: str = "--full") -> None:
    """One Before/After block: the state line, then the text (and changed evidence), a
    long one cut unless `full` (`_shown`; `whole` says where to read it all)."""
    stdout(f"    {label} {_state(summary)}")
    if summary is None:
        return
    if before is not None and summary["text"] == before["text"]:
        stdout("        (text unchanged)")
    else:
        for line in _wrapped(_shown(summary["text"], full, whole), "        "):
            stdout(line)
    if before is None or summary["evidence"] != before["evidence"]:
        for line in _wrapped(f"Evidence: {_shown(summary['evidence'], full, whole)}",
                             "        "):
            stdout(line)


def _render_preview(doc: dict[str, Any], owner_name: str, plan: Path | None, agent: str,
                    *, apply_lines: list[str] | None = None, full: bool = False,
                    conflict_fix: str | None = None) -> None:
    """Print a preview document; `apply_lines` replace the "To apply" lines (a one-record
    command that asks for confirmation itself), `conflict_fix` the advice after "apply is
    disabled" (a drafted review is re-drafted, not edited). Texts over `PREVIEW_TEXT_CHARS`
    are cut with a marker unless `full`: a Before names `garden memory show ID`, an After
    the preview with ``--full``."""
    after_whole = (f"`wardian garden maintain preview {plan} --agent {agent} --full`"
                   if plan is not None else
                   "`--output PLAN`, then `wardian garden maintain preview PLAN --full`,")
    counts = ", ".join(f"{k} {v}" for k, v in doc["counts"].items() if v)
    stdout(f"Maintenance preview · {owner_name} · owner {doc['owner_id']}")
    stdout(f"Plan {doc['plan_id']} · idempotency key {doc['idempotency_key']}")
    stdout(f"Digest {doc['digest_prefix']}  ({doc['preview_digest']})")
    stdout(f"Operations: {doc['operation_count']} ({counts})")
    conflicts_by_op: dict[int, list[dict[str, Any]]] = {}
    for conflict in doc["conflicts"]:
        conflicts_by_op.setdefault(conflict["operation"], []).append(conflict)
    for entry in doc["entries"]:
        stdout()
        name = entry.get("memory_id") or f"client_key {entry.get('client_key')}"
        if entry["op"] == "retire":
            stdout(f"[{entry['index']}] retire {name} (plain retirement)")
        elif entry["op"] == "retire_into":
            stdout(f"[{entry['index']}] retire_into {name} → absorbed into {entry['into']}")
        else:
            stdout(f"[{entry['index']}] {entry['op']} {name}")
        if entry["before"] is not None:
            _show_state("Before:", entry["before"], full=full,
                        whole=f"`wardian garden memory show {entry.get('memory_id')}`")
        else:
            stdout("    Before: (none)")
        _show_state("After: ", entry["after"], entry["before"], full=full, whole=after_whole)
        if entry.get("reason"):
            for line in _wrapped(f"Reason: {entry['reason']}", "    "):
                stdout(line)
        for source in entry.get("source_additions", []):
            stdout(f"    + source {source['source_type']}={source['locator']}")
        for conflict in conflicts_by_op.get(entry["index"], []):
            detail = ""
            if conflict["kind"] == "revision_changed":
                detail = (f" (current {conflict['current_revision_id']}, expected "
                          f"{conflict['expected_revision_id']})")
            elif conflict["kind"] == "secret_detected":
                detail = (f" ({conflict['detector']}; the value is not shown: write where "
                          "the secret lives instead)")
            stdout(f"    CONFLICT {conflict['kind']}: {conflict['path']} "
                   f"{conflict['memory_id']}{detail}")
    stdout()
    existing = doc.get("existing_receipt")
    applied = bool(existing and existing["preview_digest"] == doc["preview_digest"])
    if existing and applied:
        stdout(f"Already applied at {existing['applied_at']}: apply prints the stored receipt.")
    elif existing:
        stdout(f"Idempotency key already committed another plan ({existing['preview_digest']}); "
               "apply will refuse — choose a new idempotency_key.")
    if doc["absorbed"]:
        stdout("Absorbed (retire_into): " + ", ".join(
            f"{a['memory_id'][:8]}→{a['into'][:20]}" for a in doc["absorbed"]))
    if doc["retired"]:
        stdout("Retired: " + ", ".join(m[:8] for m in doc["retired"]))
    if doc["conflicts"] and applied:
        # The records now hold the plan's own changes, which read as conflicts against
        # the revisions it was written for; apply replays the receipt, it is not disabled.
        stdout(f"Conflicts: {len(doc['conflicts'])}, from this plan's own applied changes: "
               "nothing is left to apply.")
    elif doc["conflicts"] and conflict_fix is not None:
        stdout(f"Conflicts: {len(doc['conflicts'])} — apply is disabled. {conflict_fix}")
    elif doc["conflicts"]:
        secret = any(c["kind"] == "secret_detected" for c in doc["conflicts"])
        fix = ("Replace the secrets with where they live" if secret else
               "Update the plan to the current revisions (`wardian garden memory history ID`)")
        stdout(f"Conflicts: {len(doc['conflicts'])} — apply is disabled. {fix} and preview "
               "again.")
    elif existing and not applied:
        # The key-reuse line above already says apply will refuse: offer no apply command.
        stdout("Conflicts: none, but apply is refused until the plan has a new "
               "idempotency_key.")
    elif apply_lines is not None:
        for line in apply_lines:
            stdout(line)
    else:
        stdout("Conflicts: none. To apply (it asks you on this terminal):")
        stdout(f"  wardian garden maintain apply {plan} --agent {agent}")
        stdout(f"  (add --confirm {doc['digest_prefix']} to have the digest checked too)")


@app.command("preview")
def preview(
    plan: Path = PlanArgument,
    agent: str = AgentOption,
    full: bool = typer.Option(False, "--full", help="Show every text and evidence whole "
                              "(default: those over 600 characters are cut, with a marker)."),
    as_json: bool = JsonOption,
) -> None:
    """Validate PLAN, show Before/After, source additions and conflicts; read-only.

    The preview is remembered (for this owner and digest) so `apply` can require it.
    """
    _refuse_if_managed()
    from wardian.app.maintenance import preview_file

    owner_id, owner_name = _owner(agent)
    document = preview_file(plan, owner_id).to_json()
    if as_json:
        emit_json(document)
        return
    _render_preview(document, owner_name, plan, agent, full=full)


def print_applied(result: Any, *, as_json: bool) -> None:
    """Print an `ApplyResult`: the receipt (JSON or lines)."""
    receipt = result.receipt.to_json()
    if as_json:
        emit_json({"replayed": result.replayed, "receipt": receipt})
        return
    verb = "Already applied (stored receipt)" if result.replayed else "Applied"
    stdout(f"{verb}: plan {receipt['plan_id']} · owner {receipt['owner_id']} · "
           f"{receipt['operation_count']} operation(s) · {receipt['preview_digest'][:19]}")
    stdout(f"Applied at {receipt['applied_at']} · idempotency key {receipt['idempotency_key']}")
    _print_receipt(receipt)


def _print_receipt(receipt: dict[str, Any]) -> None:
    for item in receipt["created"]:
        stdout(f"  created {item['memory_id']} (client_key {item['client_key']})")
    for item in receipt["revised"]:
        stdout(f"  {'/'.join(item['roles'])} {item['memory_id']} → revision {item['revision_id']}")


@app.command("apply")
def apply(
    plan: Path = PlanArgument,
    agent: str = AgentOption,
    confirm: str | None = typer.Option(
        None, "--confirm",
        help="Also check the digest: sha256:<12 hex> exactly as the preview shows. The "
        "terminal question is asked all the same.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Apply a previewed, conflict-free PLAN atomically after confirmation; print the receipt.

    Always asks on the controlling terminal (owner id, operation count, digest prefix),
    never on stdin; --confirm is checked as well. Without a terminal it refuses (exit 3):
    apply from a terminal, or in Garden's dialog. Re-applying the same plan (same
    idempotency key and contents) prints the stored receipt without asking or writing.
    """
    _refuse_if_managed()
    from wardian.app.maintenance import apply_file_on_terminal

    owner_id, _ = _owner(agent)
    result = apply_file_on_terminal(plan, owner_id, confirm_digest=confirm)
    print_applied(result, as_json=as_json)


@app.command("check-receipt")
def check_receipt(
    plan: Path | None = typer.Argument(
        None, metavar="[PLAN]", help="The plan file whose key to look up."
    ),
    agent: str = AgentOption,
    idempotency_key: str | None = typer.Option(
        None, "--idempotency-key", help="Look up this key instead of reading a plan file."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Report whether the batch (owner + idempotency key) committed, with its receipt."""
    _refuse_if_managed()
    from wardian.app.databases import open_memory_db
    from wardian.app.maintenance import check_receipt as check

    owner_id, _ = _owner(agent)
    report = check(open_memory_db(), owner_id, path=plan, idempotency_key=idempotency_key)
    if as_json:
        emit_json(report)
        return
    key = report["idempotency_key"]
    if not report["committed"]:
        stdout(f"Not committed: no receipt for owner {owner_id} and idempotency key {key!r}.")
        return
    receipt = report["receipt"]
    stdout(f"Committed: plan {receipt['plan_id']} at {receipt['applied_at']} · owner "
           f"{owner_id} · key {key!r} · {receipt['preview_digest']}")
    if report["matches_plan"] is False:
        stdout(f"Warning: this key committed a different plan (this file's digest is "
               f"{report['plan_digest']}).")
    _print_receipt(receipt)
