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
from typing import TYPE_CHECKING, Any

from wardian.errors import UsageError
from wardian.memory.portable import RestoreAborted, RestoreResult

if TYPE_CHECKING:
    from wardian.memory.db import MemoryDB

__all__ = [
    "ExportFile",
    "ExportText",
    "RestoreAborted",
    "RestorePreview",
    "RestoreResult",
    "check_format",
    "confirm_restore",
    "export_text",
    "preview_restore",
    "read_export",
    "refuse_markdown_report",
    "restore_export",
]


@dataclass(frozen=True)
class ExportText:
    """An export rendered for writing: the text and how many records it holds."""

    text: str
    records: int


def export_text(memory: MemoryDB, owner_id: str, name: str, *, fmt: str,
                include_history: bool = False) -> ExportText:
    """The owner's memory (in `memory`) as an export: ``json`` (lossless, with every
    revision) or ``md`` (Markdown by scope and kind; `include_history` lists the revisions
    too). Read-only.

    Raises:
        UsageError (exit 2): another format.
    """
    from wardian.memory.portable import export_document, render_markdown
    from wardian.memory.store import MemoryStore

    check_format(fmt)
    store = MemoryStore(memory)
    doc = export_document(store, owner_id, name)
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
    refuse_markdown_report(files[0], raw.decode("utf-8", errors="replace")[:4096])
    doc = load_export(raw, source=str(files[0]))
    return ExportFile(doc, document_digest(raw), len(doc["records"]),
                      sum(len(r["revisions"]) for r in doc["records"]))


def refuse_markdown_report(path: Path | str, text: str) -> None:
    """Refuse a Markdown export given to an importer: it is a one-way report (its header
    says so; `wardian.memory.portable.is_markdown_report`), and reading it back would
    duplicate records. Returns when `text` is not one.

    Raises:
        UsageError (exit 2): `text` is a Markdown export; the hint names the JSON export.
    """
    from wardian.memory.portable import is_markdown_report

    if is_markdown_report(text):
        raise UsageError(
            f"cannot import {path}: it is a Markdown export of `wardian garden memory "
            "export`, a one-way report for reading, not a backup; nothing was changed",
            hint="the backup format is JSON: `wardian garden memory export --agent NAME "
                 "--format json --output FILE`, restored with `wardian garden memory import "
                 "FILE --agent NAME --format json`")


@dataclass(frozen=True)
class RestorePreview:
    """What restoring an export would write, shown before any question (read-only).

    Attributes:
        digest: the file's ``sha256:`` + 12 hex (what the confirmation checks).
        records / revisions: counts in the file; `active` and `removed` split `records`.
        agent_scoped / workspace_scoped: the active records by scope.
        conflicts: ids of the file's records already in this store (a restore would be
            refused, exit 4, while any is listed).
    """

    digest: str
    records: int
    revisions: int
    active: int
    removed: int
    agent_scoped: int
    workspace_scoped: int
    conflicts: list[str]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"digest": self.digest, "records": self.records, "revisions": self.revisions,
                "active": self.active, "removed": self.removed,
                "agent_scoped": self.agent_scoped, "workspace_scoped": self.workspace_scoped,
                "conflicts": list(self.conflicts)}


def preview_restore(memory: MemoryDB, export: ExportFile) -> RestorePreview:
    """The preview of restoring `export` into `memory`. Read-only: asks nothing and
    writes nothing."""
    from wardian.memory.portable import restore_conflicts
    from wardian.memory.store import MemoryStore

    records = export.document["records"]
    active = [r for r in records if r["status"] == "active"]
    store = MemoryStore(memory)
    conflicts = restore_conflicts(store, export.document)
    agent_scoped = sum(1 for r in active if r["scope"]["kind"] == "agent")
    return RestorePreview(export.digest, export.records, export.revisions, len(active),
                          len(records) - len(active), agent_scoped,
                          len(active) - agent_scoped, conflicts)


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


def restore_export(memory: MemoryDB, export: ExportFile, owner_id: str) -> RestoreResult:
    """Write a confirmed export's records and revisions for `owner_id` into `memory` (one
    transaction:
    all or nothing; `wardian.memory.portable.restore_document`).

    Raises:
        ConflictError / ValidationError: see `restore_document`.
    """
    from wardian.memory.portable import restore_document
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return restore_document(store, export.document, owner_id)
