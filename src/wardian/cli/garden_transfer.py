"""`wardian garden memory import|export`: instruction files in, an agent's memory out.

Registered on `wardian garden memory` by `wardian.cli.garden`. Operator only (exit 3 inside
a managed process).

* ``import FILE… --agent A`` (Markdown, the default): the durable bullets of
  ``CLAUDE.md``/``AGENTS.md``/``GEMINI.md``-style files become a maintenance plan (one
  ``create`` each; `wardian.app.instruction_import`), written to a plan file, previewed
  exactly like ``garden maintain preview`` and applied only after the usual confirmation
  (the terminal prompt, or ``--confirm sha256:…``). ``--preview-only`` stops after the
  preview.
* ``import FILE --agent A --format json``: restores an export (same ids, revisions and
  sources) after confirming the file's digest.
* ``export --agent A [--format md|json] [--include-history] [--output FILE]``.

Spec: "Operator maintenance in Garden"; issue 16.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from wardian.cli._common import JsonOption, emit_json, require_operator, stderr, stdout

__all__ = ["register"]

FormatOpt = typer.Option("md", "--format", help="md (instruction files) or json (an export).")


def _owner(agent: str) -> tuple[str, str]:
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry()
    try:
        found = registry.get(agent)
    finally:
        registry.close()
    return found.id, found.name


def _check_format(value: str) -> str:
    from wardian.errors import UsageError

    if value not in ("md", "json"):
        raise UsageError(f"unknown format {value!r}", hint="use --format md or --format json")
    return value


def register(memory_app: typer.Typer) -> None:
    """Add ``import`` and ``export`` to the ``garden memory`` group."""

    @memory_app.command("import")
    def import_(
        files: list[Path] = typer.Argument(..., metavar="FILE...",
                                           help="Markdown instruction files, or one export."),
        agent: str = typer.Option(..., "--agent", help="Agent name, id or unique prefix."),
        fmt: str = FormatOpt,
        scope: str | None = typer.Option(
            None, "--scope", help="workspace or agent for every bullet (default: workspace "
            "of the file's git root, agent outside git)."),
        output: Path | None = typer.Option(
            None, "--output", help="Where to write the plan (default: the data dir's plans/)."),
        confirm: str | None = typer.Option(
            None, "--confirm", help="Confirm without the terminal prompt: sha256:<12 hex> as "
            "the preview shows."),
        preview_only: bool = typer.Option(False, "--preview-only",
                                          help="Write and preview the plan; apply nothing."),
        as_json: bool = JsonOption,
    ) -> None:
        """Import instruction files as a reviewed maintenance plan (or restore an export)."""
        require_operator()
        owner_id, name = _owner(agent)
        if _check_format(fmt) == "json":
            _restore(files, owner_id, name, confirm=confirm, as_json=as_json)
            return
        from wardian.app.instruction_import import build_import_plan
        from wardian.config import data_dir
        from wardian.memory.store import MemoryStore

        store = MemoryStore()
        try:
            drafted = build_import_plan(owner_id, [str(f) for f in files], store, scope=scope)
        finally:
            store.close()
        if drafted.plan is None:
            if as_json:
                emit_json({"summary": drafted.summary(), "plan_path": None, "preview": None,
                           "applied": None})
            else:
                stdout(f"Nothing to import · {drafted.summary()}")
            return
        path = output or data_dir() / "plans" / f"{drafted.plan['plan_id']}.json"
        from wardian._fs import open_private, private_dir

        # The plan quotes the agent's memory: private like the database (issue 15).
        private_dir(path.parent)
        with open_private(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(json.dumps(drafted.plan, indent=2, ensure_ascii=False) + "\n")
        from wardian.cli.garden_maintain import _print_receipt, _render_preview
        from wardian.memory.maintenance.service import apply_file, preview_file

        preview = preview_file(path, owner_id).to_json()
        applied: dict[str, Any] | None = None
        if not preview_only:
            from wardian.memory.maintenance.terminal import confirm_on_terminal

            if not as_json:
                _render_preview(preview, name, path, agent)
            result = apply_file(path, owner_id, confirm_digest=confirm,
                                confirm=lambda request: confirm_on_terminal(request.prompt()))
            applied = {"replayed": result.replayed, "receipt": result.receipt.to_json()}
        if as_json:
            emit_json({"summary": drafted.summary(), "plan_path": str(path),
                       "preview": preview, "applied": applied})
            return
        if preview_only:
            _render_preview(preview, name, path, agent)
        stdout(f"Import · {drafted.summary()} · plan {path}")
        if applied is not None:
            stdout(f"Applied: {len(applied['receipt']['created'])} record(s) created")
            _print_receipt(applied["receipt"])

    @memory_app.command("export")
    def export(
        agent: str = typer.Option(..., "--agent", help="Agent name, id or unique prefix."),
        fmt: str = FormatOpt,
        include_history: bool = typer.Option(
            False, "--include-history",
            help="Markdown: list every revision too (JSON always carries them)."),
        output: Path | None = typer.Option(None, "--output",
                                           help="Write to this file instead of stdout."),
    ) -> None:
        """Export an agent's memory: Markdown by scope and kind, or lossless JSON."""
        require_operator()
        from wardian.memory.portable import export_document, render_markdown
        from wardian.memory.store import MemoryStore

        owner_id, name = _owner(agent)
        store = MemoryStore()
        try:
            doc = export_document(store, owner_id, name)
        finally:
            store.close()
        if _check_format(fmt) == "json":
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        else:
            text = render_markdown(doc, include_history=include_history)
        if output is None:
            typer.echo(text, nl=False)
            return
        from wardian._fs import open_private

        with open_private(output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        stderr(f"Exported {len(doc['records'])} record(s) of {name} to {output}")


def _restore(files: list[Path], owner_id: str, name: str, *, confirm: str | None,
             as_json: bool) -> None:
    from wardian.errors import UsageError
    from wardian.memory.maintenance.errors import ConfirmationMismatch
    from wardian.memory.maintenance.terminal import NoTerminal, confirm_on_terminal
    from wardian.memory.portable import (
        RestoreAborted,
        document_digest,
        load_export,
        restore_document,
    )
    from wardian.memory.store import MemoryStore

    if len(files) != 1:
        raise UsageError("--format json restores exactly one export file",
                         hint="pass the file `garden memory export --format json` wrote")
    try:
        raw = files[0].read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {files[0]}: {exc.strerror or exc}") from exc
    doc = load_export(raw, source=str(files[0]))
    digest = document_digest(raw)
    revisions = sum(len(r["revisions"]) for r in doc["records"])
    summary = (f"Restore {len(doc['records'])} record(s) and {revisions} revision(s) for "
               f"{name} · owner {owner_id} · digest {digest}")
    if confirm is not None:
        if confirm.strip() != digest:
            raise ConfirmationMismatch(confirm, digest)
    else:
        try:
            agreed = confirm_on_terminal(f"{summary}\nType yes to restore: ")
        except NoTerminal as exc:
            raise RestoreAborted(f"no terminal to confirm on ({exc})", digest) from exc
        if not agreed:
            raise RestoreAborted("declined", digest)
    store = MemoryStore()
    try:
        result = restore_document(store, doc, owner_id)
    finally:
        store.close()
    if as_json:
        emit_json({**result.to_json(), "digest": digest})
        return
    stdout(f"Restored {result.records} record(s) and {result.revisions} revision(s) for "
           f"{name} · owner {owner_id}")
