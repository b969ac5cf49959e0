"""An agent's memory out and back in: ``wardian garden memory export`` and
``garden memory import --format json`` (the restore of an export).

Export writes the whole memory (every record with every revision) as lossless JSON, or as
Markdown by scope and kind (`wardian.memory.portable`). Restore reads one export file,
shows its digest, and writes only after the operator answered yes on the controlling
terminal (``--confirm sha256:…``, when given, must match as well; without a terminal the
restore is refused): the same ids, revisions and sources as exported.

Operator only (the surfaces check `require_operator`). Spec: "Operator maintenance in
Garden".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wardian.errors import UsageError
from wardian.memory.portable import RestoreAborted, RestoreResult

__all__ = [
    "ExportFile",
    "ExportText",
    "RestoreAborted",
    "RestoreResult",
    "check_format",
    "confirm_restore",
    "export_text",
    "read_export",
    "restore_export",
]


@dataclass(frozen=True)
class ExportText:
    """An export rendered for writing: the text and how many records it holds."""

    text: str
    records: int


def export_text(owner_id: str, name: str, *, fmt: str, include_history: bool = False
                ) -> ExportText:
    """The owner's memory as an export: ``json`` (lossless, with every revision) or ``md``
    (Markdown by scope and kind; `include_history` lists the revisions too). Read-only.

    Raises:
        UsageError (exit 2): another format.
    """
    from wardian.memory.portable import export_document, render_markdown
    from wardian.memory.store import MemoryStore

    check_format(fmt)
    store = MemoryStore()
    try:
        doc = export_document(store, owner_id, name)
    finally:
        store.close()
    if fmt == "json":
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_markdown(doc, include_history=include_history)
    return ExportText(text, len(doc["records"]))


def check_format(value: str) -> str:
    """`value` when it is ``md`` or ``json``.

    Raises:
        UsageError (exit 2): any other format.
    """
    if value not in ("md", "json"):
        raise UsageError(f"unknown format {value!r}", hint="use --format md or --format json")
    return value


@dataclass(frozen=True)
class ExportFile:
    """A checked export file: its document, the digest a restore confirms, and counts."""

    document: dict[str, Any]
    digest: str
    records: int
    revisions: int


def read_export(files: list[Path]) -> ExportFile:
    """Read and check the one export file of ``import --format json``. Touches no database.

    Raises:
        UsageError (exit 2): not exactly one file, not a regular file (a FIFO or device,
            also through a symlink, is refused at once), over `MAX_EXPORT_BYTES`, or it
            cannot be read.
        ValidationError (exit 2): not an export (the JSON path of the problem is named).
    """
    from wardian.memory.portable import document_digest, load_export

    if len(files) != 1:
        raise UsageError("--format json restores exactly one export file",
                         hint="pass the file `garden memory export --format json` wrote")
    from wardian._fs import FileTooLarge, NotRegularFile, read_regular_file
    from wardian.memory.portable import MAX_EXPORT_BYTES

    try:
        raw = read_regular_file(files[0], MAX_EXPORT_BYTES)
    except NotRegularFile as exc:
        raise UsageError(f"cannot restore {files[0]}: it is {exc.kind}, not a regular file",
                         hint="pass the file `garden memory export --format json` wrote"
                         ) from None
    except FileTooLarge:
        raise UsageError(f"{files[0]} is over {MAX_EXPORT_BYTES:,} bytes, the most an "
                         "export may be") from None
    except OSError as exc:
        raise UsageError(f"cannot read {files[0]}: {exc.strerror or exc}") from exc
    doc = load_export(raw, source=str(files[0]))
    return ExportFile(doc, document_digest(raw), len(doc["records"]),
                      sum(len(r["revisions"]) for r in doc["records"]))


def confirm_restore(export: ExportFile, summary: str, confirm: str | None) -> None:
    """Have the operator confirm restoring `export` on the controlling terminal
    (`summary` is shown first; ``yes`` confirms). `confirm`, when given, must be the
    file's digest as well; it never replaces the question.

    Raises:
        ConfirmationMismatch (exit 2): `confirm` is not the file's digest (the right
            digest is not named).
        TerminalRequired (exit 3): no controlling terminal to ask on.
        RestoreAborted (exit 1): declined.
    """
    from wardian.memory.maintenance.errors import ConfirmationMismatch, TerminalRequired
    from wardian.memory.maintenance.terminal import NoTerminal, confirm_on_terminal

    if confirm is not None and confirm.strip().lower() != export.digest:
        raise ConfirmationMismatch(confirm, export.digest)
    try:
        agreed = confirm_on_terminal(f"{summary}\nType yes to restore: ")
    except NoTerminal as exc:
        raise TerminalRequired(
            "restoring an export", str(exc),
            ways="run `wardian garden memory import FILE --format json` in a terminal and "
                 "answer its question there") from exc
    if not agreed:
        raise RestoreAborted("declined", export.digest)


def restore_export(export: ExportFile, owner_id: str) -> RestoreResult:
    """Write a confirmed export's records and revisions for `owner_id` (one transaction:
    all or nothing; `wardian.memory.portable.restore_document`).

    Raises:
        ConflictError / ValidationError: see `restore_document`.
    """
    from wardian.memory.portable import restore_document
    from wardian.memory.store import MemoryStore

    store = MemoryStore()
    try:
        return restore_document(store, export.document, owner_id)
    finally:
        store.close()
