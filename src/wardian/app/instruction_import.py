"""Instruction files (``CLAUDE.md``, ``AGENTS.md``, ``GEMINI.md``) into a maintenance plan.

`build_import_plan` turns the durable bullets of one or more Markdown files
(`wardian.memory.instruction_files`) into a schema-v1 maintenance plan for one agent: one
``create`` per bullet, with the source line as ``evidence_excerpt`` and a primary source
``file`` = ``PATH#L<line>``. Nothing is written to memory here: the operator previews and
applies the plan with the usual services (`wardian.memory.maintenance.service`), which
show Before/After and ask for the digest confirmation; a managed agent only drafts it.

Bullets whose text the agent already remembers (an active record with the same text,
compared case- and whitespace-insensitively) are skipped, as are repeats within the
batch, so importing the same file again after applying proposes nothing new. A plan holds
at most 100 operations; further bullets are counted as left out (import again after
applying). The plan's id and idempotency key are derived from its content, so the same
import twice is the same plan (apply replays its receipt).

Scope: ``workspace`` of the folder the import runs in (its git root inside a git work
tree, else the folder itself), or of ``workspace`` when given — never derived from where
the file lies, so a file imported in one project never becomes every project's memory.
Agent scope only when asked (``scope="agent"``).

Files: each must be a regular file (a symlink is followed; to a device, FIFO, socket or
directory it is refused at once, never read or waited on) of at most `MAX_FILE_BYTES`.
A Markdown export of ``garden memory export`` is refused (exit 2): it is a one-way report,
and importing its lines would duplicate the records it lists
(`wardian.app.portable.refuse_markdown_report`).

Spec: "Operator maintenance in Garden" (plan format, preview, confirmation).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wardian.errors import UsageError
from wardian.memory.db import MemoryDB
from wardian.memory.instruction_files import parse_instructions
from wardian.memory.maintenance.limits import MAX_OPERATIONS
from wardian.memory.store import MemoryStore

__all__ = ["ImportPlan", "build_import_plan", "draft_import"]

MAX_FILE_BYTES = 1024 * 1024
"""An instruction file over 1 MiB is refused (the plan file's own limit)."""


@dataclass
class ImportPlan:
    """A drafted import.

    Attributes:
        plan: the schema-v1 plan document (JSON-ready), or None when nothing is new.
        found: durable bullets read, over all files.
        known: bullets skipped because the agent already remembers them (or repeated).
        left_out: durable, new bullets beyond the plan's 100 operations.
        skipped: non-durable list items by reason.
    """

    plan: dict[str, Any] | None
    found: int = 0
    known: int = 0
    left_out: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        """One line: what was found and what the plan proposes."""
        count = len(self.plan["operations"]) if self.plan else 0
        parts = [f"{self.found} durable bullet(s)", f"{count} to create"]
        if self.known:
            parts.append(f"{self.known} already remembered")
        if self.left_out:
            parts.append(f"{self.left_out} left out (over {MAX_OPERATIONS}; import again "
                         "after applying)")
        if self.skipped:
            parts.append("skipped: " + ", ".join(f"{n} {why}" for why, n in
                                                  sorted(self.skipped.items())))
        return " · ".join(parts)


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def import_scope(override: str | None, workspace: str | os.PathLike[str] | None = None
                 ) -> dict[str, str]:
    """The scope every imported bullet gets (module doc): ``agent`` only when `override`
    is ``agent``; else the workspace `workspace` (an existing folder) or, without it, the
    git root of the current folder (the folder itself outside git).

    Raises:
        UsageError (exit 2): another scope, ``--workspace`` with ``--scope agent``, or a
            workspace that is no folder.
    """
    from wardian.memory.models import default_workspace

    if override not in (None, "agent", "workspace"):
        raise UsageError(f"unknown scope {override!r}",
                         hint="use --scope workspace (the default) or --scope agent")
    if override == "agent":
        if workspace is not None:
            raise UsageError("--workspace names a workspace, --scope agent none",
                             hint="drop one of them")
        return {"kind": "agent"}
    if workspace is None:
        return {"kind": "workspace", "path": default_workspace()}
    folder = Path(workspace).expanduser().absolute()
    if not folder.is_dir():
        raise UsageError(f"--workspace {workspace}: no such folder",
                         hint="pass the project's folder (absolute or relative)")
    return {"kind": "workspace", "path": str(folder.resolve())}


def _read(path: Path) -> str:
    from wardian._fs import FileTooLarge, NotRegularFile, read_regular_file

    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file", hint="pass a Markdown file such as "
                         "CLAUDE.md, AGENTS.md or GEMINI.md") from None
    except NotRegularFile as exc:
        raise UsageError(f"cannot import {path}: it is {exc.kind}, not a regular file",
                         hint="pass the instruction file itself (a symlink must point to "
                         "a regular file)") from None
    except FileTooLarge:
        raise UsageError(f"{path} is over {MAX_FILE_BYTES:,} bytes, the most an "
                         "instruction file may be", hint="split it, or import the part "
                         "you need") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})",
                         hint="save the file as UTF-8") from exc
    from wardian.app.portable import refuse_markdown_report

    refuse_markdown_report(path, text)
    return text


def build_import_plan(
    agent_id: str, files: Sequence[str | os.PathLike[str]], store: MemoryStore, *,
    scope: str | None = None, workspace: str | os.PathLike[str] | None = None,
) -> ImportPlan:
    """Draft the maintenance plan that imports `files` for `agent_id`. Reads only.

    Args:
        agent_id: the plan's owner (its records are compared to skip known bullets).
        files: Markdown files, in order.
        store: the memory store (only read).
        scope: ``workspace`` (the default) or ``agent`` for every bullet (module doc).
        workspace: the workspace folder (default: the current folder's, `import_scope`).

    Raises:
        UsageError: a file is missing, not a regular file, unreadable, over 1 MiB or not
            UTF-8; bad scope or workspace.
    """
    if not files:
        raise UsageError("no file given", hint="e.g. `… import CLAUDE.md`")
    where = import_scope(scope, workspace)
    remembered = {_key(r.text) for r in store.list(agent_id)}
    result = ImportPlan(plan=None)
    operations: list[dict[str, Any]] = []
    for number, given in enumerate(files, start=1):
        path = Path(given).expanduser().absolute()
        parsed = parse_instructions(_read(path))
        result.skipped.update(parsed.skipped)
        for bullet in parsed.bullets:
            result.found += 1
            if _key(bullet.text) in remembered:
                result.known += 1
                continue
            remembered.add(_key(bullet.text))
            if len(operations) >= MAX_OPERATIONS:
                result.left_out += 1
                continue
            operations.append({
                "op": "create",
                "client_key": f"f{number}-L{bullet.line}",
                "text": bullet.text,
                "kind": "stable",
                "scope": where,
                "evidence_excerpt": bullet.evidence,
                "sources": [{"source_type": "file", "locator": f"{path}#L{bullet.line}",
                             "primary": True}],
            })
    if operations:
        digest = hashlib.sha256(json.dumps([agent_id, operations], sort_keys=True,
                                           ensure_ascii=False).encode()).hexdigest()[:16]
        result.plan = {
            "schema_version": 1,
            "plan_id": f"import-{digest}",
            "agent_id": agent_id,
            "idempotency_key": f"import-{digest}",
            "operations": operations,
        }
    return result


def draft_import(memory: MemoryDB, agent_id: str, files: Sequence[str | os.PathLike[str]],
                 *, scope: str | None = None, workspace: str | None = None) -> ImportPlan:
    """`build_import_plan` over the memory store of the open database `memory`: the
    operator's ``garden memory import FILE… --agent A``. Reads only.

    Raises:
        UsageError: as `build_import_plan`.
    """
    store = MemoryStore(memory)
    return build_import_plan(agent_id, files, store, scope=scope, workspace=workspace)
