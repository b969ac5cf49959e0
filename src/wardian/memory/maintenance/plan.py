"""Maintenance plan schema version 1: strict pydantic models and a strict JSON loader.

Spec: "Operator maintenance in Garden" → "Plan structure and constraints" and "Supported
operations". Every rule there is enforced here, before any preview touches a database:

* the file is at most 1 MiB (`MAX_PLAN_BYTES`, checked on the bytes before parsing); UTF-8,
  with or without a BOM (PowerShell 5's ``Set-Content -Encoding utf8`` writes one);
* duplicate keys anywhere in the JSON (top level, an operation, a scope's ``kind``/``path``,
  a source) make the file malformed; so do ``NaN``/``Infinity``;
* ``schema_version`` is 1; ``plan_id``, ``agent_id``, ``idempotency_key`` are required
  non-empty strings; 1..100 operations; unknown fields are rejected;
* text and evidence excerpts are at most 8,192 characters; at most 64 sources per operation,
  at most one of them primary; each locator at most 4,096 characters, each source type at
  most 64; ids and keys (``plan_id``, ``agent_id``, ``idempotency_key``, ``memory_id``,
  ``expected_revision_id``, ``client_key``, targets) at most 256 characters; a workspace
  path at most 4,096; no string holds NUL or another control character (text, evidence and
  reasons may hold newlines and tabs);
* the file must be a regular file (a FIFO, device or directory is refused at once);
* scopes are tagged objects ``{"kind":"agent"}`` or ``{"kind":"workspace","path":ABS}``
  where ABS is absolute by the host platform's rules (`is_host_absolute`);
* an existing memory id is the subject (``memory_id``) of at most one operation; a
  ``revise`` target may additionally receive ``retire_into`` operations; ``client_key``s are
  unique; a ``retire_into`` targets a surviving memory id or a ``create``'s ``client_key``,
  never a record the same plan retires.

Every problem is reported with its JSON path (``operations[3].scope.path``), what was
expected and what was found, as a `PlanError` (a `ValidationError`, exit 2).
"""

from __future__ import annotations

import json
import ntpath
import os
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator

from wardian.errors import ValidationError
from wardian.memory.maintenance.limits import MAX_OPERATIONS, MAX_PLAN_BYTES
from wardian.memory.models import (
    MAX_EVIDENCE_CHARS,
    MAX_ID_CHARS,
    MAX_LOCATOR_CHARS,
    MAX_PATH_CHARS,
    MAX_SOURCE_TYPE_CHARS,
    MAX_SOURCES,
    MAX_TEXT_CHARS,
    Scope,
    Source,
    control_character,
)

__all__ = [
    "MAX_OPERATIONS",
    "MAX_PLAN_BYTES",
    "CreateOp",
    "Operation",
    "Plan",
    "PlanError",
    "PlanScope",
    "PlanSource",
    "RetireIntoOp",
    "RetireOp",
    "ReviseOp",
    "check_owner",
    "is_host_absolute",
    "load_plan_bytes",
    "load_plan_file",
]

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class PlanError(ValidationError):
    """A plan file is malformed or breaks a rule (exit 2).

    Args:
        problems: ``(json_path, message)`` pairs, in document order; the first is the headline.
        source: the file the plan came from.
    """

    def __init__(self, problems: list[tuple[str, str]], *, source: str | None = None) -> None:
        self.problems = problems
        path, message = problems[0]
        if len(problems) > 1:
            rest = "; ".join(f"{p or '$'}: {m}" for p, m in problems[1:6])
            more = f" (+{len(problems) - 6} more)" if len(problems) > 6 else ""
            message = f"{message}; also {rest}{more}"
        super().__init__(
            message, path=path or "$", source=source,
            hint="fix the plan file and run `wardian garden maintain preview` again",
        )


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _plain(value: str) -> str:
    found = control_character(value, newlines=False)
    if found is not None:
        raise ValueError(f"must not contain control characters (found {found})")
    return value


def _plain_text(value: str) -> str:
    found = control_character(value, newlines=True)
    if found is not None:
        raise ValueError(
            f"must not contain control characters other than newline and tab (found {found})")
    return value


NonEmpty = Annotated[
    str, Field(max_length=MAX_ID_CHARS), pydantic.AfterValidator(_non_blank),
    pydantic.AfterValidator(_plain),
]
"""Ids and keys: 1..256 characters, no control characters."""
Text = Annotated[
    str, Field(max_length=MAX_TEXT_CHARS), pydantic.AfterValidator(_non_blank),
    pydantic.AfterValidator(_plain_text),
]
Evidence = Annotated[
    str, Field(max_length=MAX_EVIDENCE_CHARS), pydantic.AfterValidator(_non_blank),
    pydantic.AfterValidator(_plain_text),
]
Reason = Text
"""A retire reason: free text like a record's."""


class PlanSource(BaseModel):
    """A source link: ``{"source_type": T, "locator": L, "primary": false}``."""

    model_config = _STRICT
    source_type: Annotated[
        str, Field(max_length=MAX_SOURCE_TYPE_CHARS), pydantic.AfterValidator(_non_blank),
        pydantic.AfterValidator(_plain),
    ]
    locator: Annotated[
        str, Field(max_length=MAX_LOCATOR_CHARS), pydantic.AfterValidator(_non_blank),
        pydantic.AfterValidator(_plain),
    ]
    primary: bool = False

    def to_source(self) -> Source:
        """The normalised store `Source` (type and locator trimmed)."""
        return Source(self.source_type.strip(), self.locator.strip(), self.primary)


def _one_primary(sources: list[PlanSource]) -> list[PlanSource]:
    primaries = sum(1 for source in sources if source.primary)
    if primaries > 1:
        raise ValueError(f"{primaries} sources are marked primary; at most one may be")
    return sources


Sources = Annotated[
    list[PlanSource], Field(max_length=MAX_SOURCES), pydantic.AfterValidator(_one_primary)
]


class AgentScope(BaseModel):
    """``{"kind": "agent"}``: follows the agent between projects."""

    model_config = _STRICT
    kind: Literal["agent"]

    def to_scope(self) -> Scope:
        """The store `Scope`."""
        return Scope("agent")


def is_host_absolute(path: str, flavour: str = os.name) -> bool:
    """Whether `path` is absolute by the rules of the host platform (`flavour`: `os.name`).

    POSIX: it starts with ``/``. Windows (``"nt"``): it has a drive or UNC share *and* a
    root (``C:\\repo``, ``\\\\server\\share\\repo``); ``\\repo`` (drive-relative) and ``C:repo``
    (relative to the drive's cwd) are relative, whatever `os.path.isabs` says on older
    Pythons. Pure. Spec "Key constraints": relative paths are rejected by platform-aware
    validation.
    """
    if "\0" in path:
        return False
    if flavour == "nt":
        drive, rest = ntpath.splitdrive(path)
        return bool(drive) and rest[:1] in ("\\", "/")
    return posixpath.isabs(path)


class WorkspaceScope(BaseModel):
    """``{"kind": "workspace", "path": ABS}``; ABS absolute by the host platform's rules."""

    model_config = _STRICT
    kind: Literal["workspace"]
    path: Annotated[str, Field(max_length=MAX_PATH_CHARS), pydantic.AfterValidator(_plain)]

    @field_validator("path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("workspace path must be a non-empty absolute path")
        if not is_host_absolute(value):
            example = "C:\\work\\repo" if os.name == "nt" else "/work/repo"
            raise ValueError(
                f"workspace path must be absolute on this host ({os.name}, e.g. "
                f"{example!r}), got {value!r}"
            )
        return value

    def to_scope(self) -> Scope:
        """The store `Scope`, its path normalised lexically (`os.path.normpath`)."""
        return Scope("workspace", os.path.normpath(self.path))


PlanScope = Annotated[AgentScope | WorkspaceScope, Field(discriminator="kind")]


Kind = Literal["stable", "current"]


class _SubjectOp(BaseModel):
    """An operation on an existing record: `memory_id` as of `expected_revision_id`."""

    model_config = _STRICT
    memory_id: NonEmpty
    expected_revision_id: NonEmpty


class ReviseOp(_SubjectOp):
    """``revise``: change text/kind/scope/evidence and add sources of `memory_id`."""

    op: Literal["revise"]
    text: Text | None = None
    kind: Kind | None = None
    scope: PlanScope | None = None
    evidence_excerpt: Evidence | None = None
    add_sources: Sources = Field(default_factory=list)


class CreateOp(BaseModel):
    """``create``: a new record, named inside the plan by `client_key`."""

    model_config = _STRICT
    op: Literal["create"]
    client_key: NonEmpty
    text: Text
    kind: Kind
    scope: PlanScope
    evidence_excerpt: Evidence
    sources: Sources = Field(default_factory=list)


class RetireOp(_SubjectOp):
    """``retire``: mark `memory_id` removed with an explicit reason."""

    op: Literal["retire"]
    reason: Reason


class RetireIntoOp(_SubjectOp):
    """``retire_into``: retire `memory_id`, moving its sources into the recipient."""

    op: Literal["retire_into"]
    target_memory_id: NonEmpty | None = None
    target_client_key: NonEmpty | None = None
    reason: Reason | None = None


Operation = Annotated[
    ReviseOp | CreateOp | RetireOp | RetireIntoOp, Field(discriminator="op")
]
_OP_MODELS: dict[str, type[BaseModel]] = {
    "revise": ReviseOp, "create": CreateOp, "retire": RetireOp, "retire_into": RetireIntoOp,
}


class Plan(BaseModel):
    """A maintenance plan, schema version 1 (spec "Plan structure and constraints")."""

    model_config = _STRICT
    schema_version: int
    plan_id: NonEmpty
    agent_id: NonEmpty
    idempotency_key: NonEmpty
    operations: Annotated[list[Operation], Field(min_length=1, max_length=MAX_OPERATIONS)]

    @field_validator("schema_version")
    @classmethod
    def _version_one(cls, value: int) -> int:
        if value != 1:
            raise ValueError(f"schema_version must be 1, got {value}")
        return value


# --- loading ------------------------------------------------------------------------------


class _Object(dict[str, Any]):
    """A JSON object that remembers keys it saw more than once."""

    duplicates: list[str]


def _pairs_hook(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    obj.duplicates = []
    for key, value in pairs:
        if key in obj and key not in obj.duplicates:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_MAX_DEPTH = 32
"""Deepest JSON nesting looked into; a valid plan is five levels deep."""
_TOO_DEEP = ("JSON nested too deeply; a plan is at most a few levels deep "
             "(plan → operations → operation → scope/sources)")


def _walk_duplicates(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > _MAX_DEPTH and isinstance(value, dict | list):
        yield (path, _TOO_DEEP)
        return
    if isinstance(value, _Object):
        for key in value.duplicates:
            yield (
                _join(path, key),
                f"duplicate key {key!r}; a JSON object may name each key once",
            )
        for key, child in value.items():
            yield from _walk_duplicates(child, _join(path, key), depth + 1)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _walk_duplicates(child, f"{path}[{index}]", depth + 1)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _loc_to_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    previous: int | str | None = None
    for part in loc:
        # Discriminated unions put the tag into the location; JSON paths do not have it.
        if isinstance(previous, int) and path.startswith("operations") and part in _OP_MODELS:
            previous = part
            continue
        if previous == "scope" and part in {"agent", "workspace"}:
            previous = part
            continue
        path = _join(path, part)
        previous = part
    return path


def _describe(error: Any, loc: tuple[int | str, ...]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    found = error.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        allowed = _allowed_fields(loc)
        suffix = f"; allowed fields: {', '.join(allowed)}" if allowed else ""
        return f"unknown field {str(loc[-1])!r}{suffix}"
    if kind == "string_too_long":
        return f"is {len(found)} characters; the limit is {ctx.get('max_length')}"
    if kind == "too_long":
        return f"has {len(found)} items; the limit is {ctx.get('max_length')}"
    if kind == "too_short":
        return f"has {len(found)} items; at least {ctx.get('min_length')} required"
    if kind == "union_tag_invalid":
        field_name = str(ctx.get("discriminator", "tag")).strip("'")
        return (
            f"unknown {field_name} {ctx.get('tag')!r}; expected one of "
            f"{ctx.get('expected_tags')}"
        )
    if kind == "union_tag_not_found":
        if loc and loc[-1] == "scope":
            return ('required field is missing: a scope needs "kind": "agent" or "workspace" '
                    '(e.g. {"kind": "workspace", "path": ABS})')
        return ("required field is missing: an operation needs \"op\": one of "
                "'revise', 'create', 'retire', 'retire_into'")
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}, got {found!r}"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    if kind in {"string_type", "bool_type", "int_type", "list_type", "model_type",
                "dict_type", "model_attributes_type"}:
        wanted = {"string_type": "a string", "bool_type": "true or false",
                  "int_type": "an integer", "list_type": "a list"}.get(kind, "an object")
        if loc and loc[-1] == "scope":
            wanted = 'a tagged object {"kind": "agent"} or {"kind": "workspace", "path": ABS}'
        shown = "" if found is None else " " + json.dumps(found)[:200]
        return f"expected {wanted}, got {_json_type(found)}{shown}"
    return str(error["msg"])


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _allowed_fields(loc: tuple[int | str, ...]) -> list[str]:
    parents = loc[:-1]
    model: type[BaseModel] | None = Plan
    if len(parents) >= 3 and parents[0] == "operations":
        model = _OP_MODELS.get(str(parents[2]))
        if len(parents) >= 5 and parents[3] == "scope":
            scopes: dict[str, type[BaseModel]] = {
                "agent": AgentScope, "workspace": WorkspaceScope,
            }
            model = scopes.get(str(parents[4]))
        elif len(parents) >= 5 and parents[3] in {"sources", "add_sources"}:
            model = PlanSource
    elif parents:
        model = None
    return sorted(model.model_fields) if model else []


def load_plan_bytes(data: bytes, *, source: str | None = None) -> Plan:
    """Parse and validate a plan from the file's bytes. Pure: touches no database.

    Args:
        data: the file contents (UTF-8, optional BOM), at most `MAX_PLAN_BYTES` bytes.
        source: the file name for messages.

    Returns:
        The validated `Plan`.

    Raises:
        PlanError: too large, not UTF-8, not JSON, duplicate keys, schema or rule violations;
            every problem names its JSON path.
    """
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(
            [("", f"plan file is {len(data)} bytes; the limit is {MAX_PLAN_BYTES} (1 MiB)")],
            source=source,
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlanError(
            [("", f"plan file is not UTF-8 (byte {exc.start}); save it as UTF-8")],
            source=source,
        ) from exc
    if not text.strip():
        raise PlanError([("", "plan file is empty; expected a JSON object")], source=source)
    try:
        raw = json.loads(text, object_pairs_hook=_pairs_hook, parse_constant=_reject_constant)
        duplicates = list(_walk_duplicates(raw, ""))
    except RecursionError as exc:
        raise PlanError([("", _TOO_DEEP)], source=source) from exc
    except json.JSONDecodeError as exc:
        raise PlanError(
            [("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")],
            source=source,
        ) from exc
    except ValueError as exc:
        raise PlanError([("", f"not valid JSON: {exc}")], source=source) from exc
    if duplicates:
        raise PlanError(duplicates, source=source)
    if not isinstance(raw, dict):
        raise PlanError([("", "a plan must be a JSON object")], source=source)
    try:
        plan = Plan.model_validate(raw)
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = tuple(error["loc"])
            path = _loc_to_path(loc)
            if error["type"] in {"union_tag_invalid", "union_tag_not_found"}:
                # The problem is the tag field itself: operations[3].op, …scope.kind.
                tag = str((error.get("ctx") or {}).get("discriminator", "")).strip("'")
                path = _join(path, tag) if tag else path
            problems.append((path, _describe(error, loc)))
        raise PlanError(problems, source=source) from exc
    problems = list(_rule_problems(plan))
    if problems:
        raise PlanError(problems, source=source)
    return plan


def load_plan_file(path: str | os.PathLike[str]) -> Plan:
    """Read and validate the plan at `path`; the size is checked before reading it all.

    Raises:
        PlanError: see `load_plan_bytes`; also when the file cannot be read.
    """
    from wardian._fs import FileTooLarge, NotRegularFile, read_regular_file

    where = str(path)
    try:
        # Opened without blocking: a FIFO or device is refused at once, never waited on.
        data = read_regular_file(Path(path), MAX_PLAN_BYTES)
    except NotRegularFile as exc:
        raise PlanError(
            [("", f"the plan file is {exc.kind}, not a regular file")], source=where
        ) from exc
    except FileTooLarge as exc:
        size = Path(path).stat().st_size
        raise PlanError(
            [("", f"plan file is {size} bytes; the limit is {MAX_PLAN_BYTES} (1 MiB)")],
            source=where,
        ) from exc
    except OSError as exc:
        raise PlanError(
            [("", f"cannot read the plan file: {exc.strerror or exc}")], source=where
        ) from exc
    return load_plan_bytes(data, source=where)


def _rule_problems(plan: Plan) -> Iterator[tuple[str, str]]:
    """Cross-operation rules (spec "Key constraints"), in document order."""
    subjects: dict[str, int] = {}
    client_keys: dict[str, int] = {}
    retired: set[str] = set()
    for index, op in enumerate(plan.operations):
        where = f"operations[{index}]"
        if isinstance(op, CreateOp):
            if op.client_key in client_keys:
                yield (
                    f"{where}.client_key",
                    f"client_key {op.client_key!r} is already used by "
                    f"operations[{client_keys[op.client_key]}]; client keys must be unique",
                )
            else:
                client_keys[op.client_key] = index
            continue
        if op.memory_id in subjects:
            yield (
                f"{where}.memory_id",
                f"memory {op.memory_id} is already the subject of "
                f"operations[{subjects[op.memory_id]}]; an existing memory id may appear in "
                "at most one operation (a revise target may only also receive retire_into)",
            )
        else:
            subjects[op.memory_id] = index
        if isinstance(op, RetireOp | RetireIntoOp):
            retired.add(op.memory_id)
        if isinstance(op, ReviseOp) and not (
            op.text is not None or op.kind is not None or op.scope is not None
            or op.evidence_excerpt is not None or op.add_sources
        ):
            yield (
                where,
                "revise changes nothing; give at least one of text, kind, scope, "
                "evidence_excerpt, add_sources",
            )
    for index, op in enumerate(plan.operations):
        if not isinstance(op, RetireIntoOp):
            continue
        where = f"operations[{index}]"
        if (op.target_memory_id is None) == (op.target_client_key is None):
            yield (
                where,
                "retire_into needs exactly one of target_memory_id or target_client_key",
            )
            continue
        if op.target_client_key is not None and op.target_client_key not in client_keys:
            yield (
                f"{where}.target_client_key",
                f"no create operation has client_key {op.target_client_key!r}",
            )
        if op.target_memory_id is not None and op.target_memory_id in retired:
            yield (
                f"{where}.target_memory_id",
                f"memory {op.target_memory_id} is retired by this plan "
                f"(operations[{subjects[op.target_memory_id]}]); retire into a surviving "
                "record or a create's client_key",
            )


def check_owner(plan: Plan, agent_id: str, *, source: str | None = None) -> None:
    """Bind the plan to its owner: the plan's ``agent_id`` must be exactly `agent_id`.

    Spec: "The dialog binds to that exact agent owner … Plans targeting any other agent
    are rejected on import."

    Raises:
        PlanError: naming both ids.
    """
    if plan.agent_id != agent_id:
        raise PlanError(
            [(
                "agent_id",
                f"plan is for agent {plan.agent_id!r} but --agent is owner {agent_id!r}; "
                "a plan may only maintain the agent named by --agent",
            )],
            source=source,
        )
