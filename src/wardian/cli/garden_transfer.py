"""`wardian garden memory import|export`: instruction files in, an agent's memory out.

Registered on `wardian garden memory` by `wardian.cli.garden`. Operator only (exit 3 inside
a managed process).

* ``import FILE… --agent A`` (Markdown, the default): the durable bullets of
  ``CLAUDE.md``/``AGENTS.md``/``GEMINI.md``-style files become a maintenance plan (one
  ``create`` each; `wardian.app.instruction_import`), written to a plan file, previewed
  exactly like ``garden maintain preview`` and applied only after the usual confirmation
  on the controlling terminal (``--confirm sha256:…`` is checked too, never instead).
  ``--preview-only`` stops after the preview.
* ``import FILE --agent A --format json``: restores an export (same ids, revisions and
  sources) after the operator confirmed its digest on the terminal; ``--preview-only``
  shows what the restore would write (counts, scopes, digest, ids already present) and
  asks nothing. A Markdown export is refused by both formats (exit 2): it is a one-way
  report; JSON is the backup format.
* ``export --agent A [--format md|json] [--include-history] [--output FILE]``.

The commands call `wardian.app.instruction_import`, `wardian.app.maintenance` and
`wardian.app.portable`, and render what they return.

Spec: "Operator maintenance in Garden".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from wardian.cli._common import JsonOption, emit_json, require_operator, stderr, stdout
from wardian.errors import UsageError

__all__ = ["register"]

FormatOpt = typer.Option("md", "--format", help="md (instruction files) or json (an export).")


def _owner(agent: str) -> tuple[str, str]:
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import resolve_owner

    return resolve_owner(open_state_db(), open_memory_db(), agent, allow_removed=False)


def _check_format(value: str) -> str:
    from wardian.app.portable import check_format

    return check_format(value)


def register(memory_app: typer.Typer) -> None:
    """Add ``import`` and ``export`` to the ``garden memory`` group."""

    @memory_app.command("import")
    def import_(
        files: list[Path] = typer.Argument(..., metavar="FILE...",
                                           help="Markdown instruction files, or one export."),
        agent: str = typer.Option(..., "--agent", help="Agent name, id or unique prefix."),
        fmt: str = FormatOpt,
        scope: str | None = typer.Option(
            None, "--scope", help="workspace (the default: the git root of the folder you "
            "run it in, or that folder outside git; see --workspace) or agent (every "
            "project of the agent)."),
        workspace: str | None = typer.Option(
            None, "--workspace", help="The workspace folder the bullets belong to "
            "(default: the current folder's)."),
        output: Path | None = typer.Option(
            None, "--output", help="Where to write the plan (default: the data dir's plans/)."),
        confirm: str | None = typer.Option(
            None, "--confirm", help="Also check the digest: sha256:<12 hex> as the preview "
            "shows. The terminal question is asked all the same."),
        preview_only: bool = typer.Option(
            False, "--preview-only", help="Show the preview and stop; asks nothing, "
            "changes nothing (md: writes and previews the plan; json: what the restore "
            "would write)."),
        as_json: bool = JsonOption,
    ) -> None:
        """Import instruction files as a reviewed maintenance plan (or restore an export)."""
        require_operator()
        owner_id, name = _owner(agent)
        if _check_format(fmt) == "json":
            _restore(files, owner_id, name, confirm=confirm, as_json=as_json,
                     preview_only=preview_only, agent=agent)
            return
        from wardian.app.databases import open_memory_db
        from wardian.app.instruction_import import draft_import
        from wardian.app.plan_file import write_plan

        drafted = draft_import(open_memory_db(), owner_id, [str(f) for f in files], scope=scope,
                               workspace=workspace)
        if drafted.plan is None:
            if as_json:
                emit_json({"summary": drafted.summary(), "plan_path": None, "preview": None,
                           "applied": None})
            else:
                stdout(f"Nothing to import · {drafted.summary()}")
            return
        path = write_plan(drafted.plan, output)
        from wardian.app.maintenance import apply_file_on_terminal, preview_file
        from wardian.cli.garden_maintain import _print_receipt, _render_preview

        preview = preview_file(path, owner_id).to_json()
        applied: dict[str, Any] | None = None
        if not preview_only:
            if not as_json:
                _render_preview(preview, name, path, agent)
            result = apply_file_on_terminal(path, owner_id, confirm_digest=confirm)
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
        from wardian.app.databases import open_memory_db
        from wardian.app.portable import export_text

        owner_id, name = _owner(agent)
        exported = export_text(open_memory_db(), owner_id, name, fmt=fmt,
                               include_history=include_history)
        if output is None:
            typer.echo(exported.text, nl=False)
            return
        if output.is_dir():  # also "" (the current folder)
            raise UsageError(f"--output {str(output) or '.'}: is a directory",
                             hint="pass a file path, e.g. --output ada-memory.md")
        from wardian._fs import private_dir, write_private

        # As plan files are written: missing folders created 0700, the file replaced
        # whole (an interrupted export leaves the old file or none, never half of one).
        private_dir(output.parent)
        write_private(output, exported.text)
        stderr(f"Exported {exported.records} record(s) of {name} to {output}")


def _restore(files: list[Path], owner_id: str, name: str, *, confirm: str | None,
             as_json: bool, preview_only: bool, agent: str) -> None:
    from wardian.app.databases import open_memory_db
    from wardian.app.portable import (
        confirm_restore,
        preview_restore,
        read_export,
        restore_export,
    )

    export = read_export(files)
    if preview_only:
        preview = preview_restore(open_memory_db(), export).to_json()
        if as_json:
            emit_json({"preview": preview, "applied": None})
            return
        _render_restore_preview(preview, name, owner_id)
        stdout("Preview only: nothing was restored. To restore, run "
               f"`wardian garden memory import {files[0]} --agent {agent} --format json` "
               "in a terminal and answer its question.")
        return
    summary = (f"Restore {export.records} record(s) and {export.revisions} revision(s) for "
               f"{name} · owner {owner_id} · digest {export.digest}")
    confirm_restore(export, summary, confirm)
    result = restore_export(open_memory_db(), export, owner_id)
    if as_json:
        emit_json({**result.to_json(), "digest": export.digest})
        return
    stdout(f"Restored {result.records} record(s) and {result.revisions} revision(s) for "
           f"{name} · owner {owner_id}")
    for record_id, why in result.flagged:
        stdout(f"  SET ASIDE {record_id[:8]}: {why} (stored redacted; not recalled)")
    if result.flagged:
        stdout(f"Review them with `wardian garden memory list --agent {name} --flagged`")


def _render_restore_preview(preview: dict[str, Any], name: str, owner_id: str) -> None:
    stdout(f"Restore preview for {name} · owner {owner_id} · digest {preview['digest']}")
    stdout(f"  {preview['records']} record(s): {preview['active']} active "
           f"({preview['agent_scoped']} agent scope, {preview['workspace_scoped']} workspace "
           f"scope), {preview['removed']} removed · {preview['revisions']} revision(s)")
    conflicts = preview["conflicts"]
    if conflicts:
        shown = ", ".join(c[:8] for c in conflicts[:5])
        more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        stdout(f"  REFUSED if restored: {len(conflicts)} record id(s) already in this store "
               f"({shown}{more}); restore into a fresh data dir (WARDIAN_HOME)")
