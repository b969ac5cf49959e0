"""Memory records, scopes, sources and revisions, with the spec's caps.

Spec: "Save and inspect memory" (kinds, scopes, evidence) and "Plan structure and
constraints" (the caps below apply to direct saves too). Plain named tuples (not
dataclasses, whose import and class building cost a hot command a noticeable share of its CPU)
keep the agent-facing CLI fast to start; documents from outside (plans, batches) are validated
with pydantic in their own modules.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian.errors import UsageError, ValidationError

if TYPE_CHECKING:
    from typing import Any, Literal

__all__ = [
    "KINDS",
    "MAX_EVIDENCE_CHARS",
    "MAX_ID_CHARS",
    "MAX_LOCATOR_CHARS",
    "MAX_PATH_CHARS",
    "MAX_SOURCES",
    "MAX_SOURCE_TYPE_CHARS",
    "MAX_TEXT_CHARS",
    "Record",
    "Revision",
    "Scope",
    "Source",
    "check_caps",
    "control_character",
    "default_workspace",
]

MAX_TEXT_CHARS = 8_192
MAX_EVIDENCE_CHARS = 8_192
MAX_SOURCES = 64
MAX_LOCATOR_CHARS = 4_096
MAX_SOURCE_TYPE_CHARS = 64
"""A source's type (``file``, ``url``, ``transcript``…): a short word, not a payload."""
MAX_ID_CHARS = 256
"""Ids and keys given from outside (plan ids, idempotency keys, client keys, memory ids)."""
MAX_PATH_CHARS = 4_096
"""Paths given from outside (workspace scopes): PATH_MAX on Linux."""


def control_character(value: str, *, newlines: bool) -> str | None:
    """The first disallowed control character of `value` as ``U+XXXX``, or None.

    NUL and every other C0/C1 control character are refused; with `newlines` (free text:
    memory text, evidence, reasons) newline, carriage return and tab are allowed.
    """
    for char in value:
        code = ord(char)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            if newlines and char in "\n\r\t":
                continue
            return f"U+{code:04X}"
    return None

if TYPE_CHECKING:
    Kind = Literal["stable", "current"]
KINDS: tuple[str, ...] = ("stable", "current")


class Scope(NamedTuple):
    """``{"kind": "agent"}`` or ``{"kind": "workspace", "path": ABS}``."""

    kind: Literal["agent", "workspace"]
    path: str | None = None

    @staticmethod
    def agent() -> Scope:
        """The agent scope: follows the agent between projects."""
        return Scope("agent")

    @staticmethod
    def workspace(path: str | os.PathLike[str]) -> Scope:
        """A workspace scope for an absolute path (made absolute and normalised here)."""
        return Scope("workspace", str(Path(path).expanduser().resolve()))

    def to_json(self) -> dict[str, str]:
        """The tagged-object form used in JSON documents."""
        if self.kind == "agent":
            return {"kind": "agent"}
        return {"kind": "workspace", "path": self.path or ""}

    def label(self) -> str:
        """A short human label: ``agent`` or ``workspace:<path>``."""
        return "agent" if self.kind == "agent" else f"workspace:{self.path}"


class Source(NamedTuple):
    """A link preserved for deeper inspection (``source_type``, ``locator``, ``primary``)."""

    source_type: str
    locator: str
    primary: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON form used in plans and `--json` output."""
        return {"source_type": self.source_type, "locator": self.locator, "primary": self.primary}


class Record(NamedTuple):
    """The current state of one memory record."""

    id: str
    agent_id: str
    kind: Kind
    scope: Scope
    text: str
    evidence: str
    status: Literal["active", "removed"]
    created_at: str
    updated_at: str
    current_revision_id: str
    sources: tuple[Source, ...] = ()
    removed_reason: str | None = None
    flagged: str | None = None
    """Why the record is set aside (e.g. ``secret_detected: AWS Access Key in text``), or
    None. A flagged record keeps its status but is left out of recall and the startup
    context until the operator retires or revises it."""

    @property
    def short_id(self) -> str:
        """The 8-character id shown in startup context and tables."""
        return self.id[:8]

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (``--json`` output)."""
        return {
            "id": self.id,
            "agent_id": self.agent_id,
            "kind": self.kind,
            "scope": self.scope.to_json(),
            "text": self.text,
            "evidence": self.evidence,
            "sources": [s.to_json() for s in self.sources],
            "status": self.status,
            "removed_reason": self.removed_reason,
            "flagged": self.flagged,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "current_revision_id": self.current_revision_id,
        }


class Revision(NamedTuple):
    """One immutable revision: a full snapshot plus who changed it, why and when."""

    revision_id: str
    record_id: str
    seq: int
    snapshot: dict[str, Any]
    actor: str
    reason: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """The revision as a JSON-ready dict."""
        return {
            "revision_id": self.revision_id,
            "record_id": self.record_id,
            "seq": self.seq,
            "actor": self.actor,
            "reason": self.reason,
            "created_at": self.created_at,
            "snapshot": self.snapshot,
        }


def check_caps(
    *,
    text: str | None = None,
    evidence: str | None = None,
    sources: tuple[Source, ...] | list[Source] | None = None,
    where: str = "",
) -> None:
    """Enforce the spec's caps; over a cap is an error, never a silent cut.

    Args:
        text: memory text (1..8,192 characters) when given.
        evidence: evidence excerpt (1..8,192 characters) when given.
        sources: at most 64, each type 1..64 and locator 1..4,096 characters, when given
            (one primary per operation is the plan's rule, `maintenance.plan`: a record's
            combined sources may hold several).
        Text and evidence may hold newlines and tabs but no other control character
        (NUL…); a source's type and locator none at all.
        where: a prefix for the field path in messages (e.g. ``operations[2].``).

    Raises:
        ValidationError: naming the field, the limit and the actual length.
    """
    if text is not None:
        if not text.strip():
            raise ValidationError("memory text must not be empty", path=f"{where}text")
        if len(text) > MAX_TEXT_CHARS:
            raise ValidationError(
                f"text is {len(text)} characters; the limit is {MAX_TEXT_CHARS}",
                path=f"{where}text", hint="shorten it",
            )
        _no_control(text, f"{where}text", newlines=True)
    if evidence is not None:
        if not evidence.strip():
            raise ValidationError(
                "an evidence excerpt is required and must not be empty",
                path=f"{where}evidence", hint="pass --evidence with the words that justify it",
            )
        if len(evidence) > MAX_EVIDENCE_CHARS:
            raise ValidationError(
                f"evidence is {len(evidence)} characters; the limit is {MAX_EVIDENCE_CHARS}",
                path=f"{where}evidence", hint="quote a shorter excerpt",
            )
        _no_control(evidence, f"{where}evidence", newlines=True)
    if sources is not None:
        if len(sources) > MAX_SOURCES:
            raise ValidationError(
                f"{len(sources)} sources given; the limit is {MAX_SOURCES}",
                path=f"{where}sources",
            )
        for index, source in enumerate(sources):
            if not source.source_type.strip() or not source.locator.strip():
                raise ValidationError(
                    "a source needs a type and a locator (TYPE=LOCATOR)",
                    path=f"{where}sources[{index}]",
                )
            if len(source.locator) > MAX_LOCATOR_CHARS:
                raise ValidationError(
                    f"locator is {len(source.locator)} characters; the limit is "
                    f"{MAX_LOCATOR_CHARS}",
                    path=f"{where}sources[{index}].locator",
                )
            if len(source.source_type) > MAX_SOURCE_TYPE_CHARS:
                raise ValidationError(
                    f"source type is {len(source.source_type)} characters; the limit is "
                    f"{MAX_SOURCE_TYPE_CHARS}",
                    path=f"{where}sources[{index}].source_type",
                    hint="use a short word such as file, url or transcript",
                )
            _no_control(source.source_type, f"{where}sources[{index}].source_type",
                        newlines=False)
            _no_control(source.locator, f"{where}sources[{index}].locator", newlines=False)


def _no_control(value: str, path: str, *, newlines: bool) -> None:
    found = control_character(value, newlines=newlines)
    if found is not None:
        allowed = " (newlines and tabs are allowed)" if newlines else ""
        raise ValidationError(
            f"contains the control character {found}{allowed}", path=path,
            hint="remove it; text is stored and shown as plain characters",
        )


def default_workspace(cwd: str | os.PathLike[str] | None = None) -> str:
    """The default workspace path: the git root of `cwd` (default: the current directory),
    or the directory itself when it is not inside a git work tree.

    Walks up looking for ``.git`` (a directory or a worktree file) rather than running git,
    so it costs no subprocess.

    Raises:
        UsageError: the current directory no longer exists (deleted under the process).
    """
    if cwd is None:
        try:
            cwd = os.getcwd()
        except FileNotFoundError:
            raise UsageError(
                "the current directory no longer exists, so it names no workspace",
                hint="cd into your project, or use --scope agent",
            ) from None
    start = Path(cwd).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(start)


