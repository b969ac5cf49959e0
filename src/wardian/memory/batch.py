"""The curator batch: what a curator (builtin or LLM) returns, and what `memory.commit` takes.

Spec "Optional consolidation"; DESIGN.md "Blueprints, runs, providers" (`memory.commit`:
``{agent_id, workspace, idempotency_key, cursor, operations: [save|update|remove]}``).

`CuratorBatch` is the role output (the same schema for every provider); `CommitBatch` wraps
it with the run's principal, workspace, idempotency key and archive cursor.

Memory registers the curator batch as the output schema ``wardian:curator-batch`` of the
blueprint language through `wardian.builtin_plugin` (`curator_output_schema`,
`check_curator_answer`): this module never imports `wardian.blueprints`, which sits above
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wardian.memory.models import MAX_EVIDENCE_CHARS, MAX_TEXT_CHARS

__all__ = [
    "CURATOR_BATCH_REF",
    "CommitBatch",
    "CuratorBatch",
    "CuratorOperation",
    "RemoveOp",
    "SaveOp",
    "UpdateOp",
    "check_answer",
    "check_commit_batch",
    "check_curator_answer",
    "check_curator_operations",
    "curator_operations",
    "curator_output_schema",
]

CURATOR_BATCH_REF = "wardian:curator-batch"
"""The output schema name a role step uses for the curator batch (``output: {$ref: ...}``)."""

_Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
_Evidence = Annotated[str, Field(min_length=1, max_length=MAX_EVIDENCE_CHARS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SaveOp(_Strict):
    """Save a new record. `evidence` is quoted exactly from the archive slice."""

    op: Literal["save"]
    text: _Text
    kind: Literal["stable", "current"] = "stable"
    scope: Literal["agent", "workspace"] = "workspace"
    evidence: _Evidence


class UpdateOp(_Strict):
    """Correct or refine an active record (`memory_id` full or 8-char prefix)."""

    op: Literal["update"]
    memory_id: Annotated[str, Field(min_length=4)]
    text: _Text
    kind: Literal["stable", "current"] = "stable"
    scope: Literal["agent", "workspace"] = "workspace"
    evidence: _Evidence


class RemoveOp(_Strict):
    """Retire an active record (e.g. a `current` checkpoint the session shows finished)."""

    op: Literal["remove"]
    memory_id: Annotated[str, Field(min_length=4)]
    evidence: _Evidence
    reason: Annotated[str, Field(min_length=1, max_length=1_000)]


CuratorOperation = Annotated[SaveOp | UpdateOp | RemoveOp, Field(discriminator="op")]


class CuratorBatch(_Strict):
    """A curator's answer: at most `max_changes` operations, best first (may be empty)."""

    operations: list[CuratorOperation] = Field(default_factory=list, max_length=100)


class CommitBatch(_Strict):
    """The `memory.commit` input: the curator's operations bound to a principal and cursor.

    Attributes:
        agent_id: must equal the run's principal (the agent whose session closed).
        workspace: absolute path; `workspace`-scoped saves use it.
        idempotency_key: replay returns the first result; reuse with another batch is refused.
        cursor: the archive sequence number consolidated up to (inclusive), or None.
    """

    agent_id: Annotated[str, Field(min_length=1)]
    workspace: Annotated[str, Field(min_length=1)]
    idempotency_key: Annotated[str, Field(min_length=1)]
    cursor: int | None = None
    operations: list[CuratorOperation] = Field(default_factory=list, max_length=100)


def curator_output_schema() -> dict[str, Any]:
    """The JSON Schema a curator's answer must match (sent to providers as output schema)."""
    return CuratorBatch.model_json_schema()


def curator_operations(answer: Any) -> Any:
    """The ``operations`` of a curator's answer as given (normally a list), not checked:
    the engine checked the answer when it accepted the provider's result, and the commit
    checks the whole batch once more (`check_commit_batch`); nothing else validates it.

    Args:
        answer: the answer as an object, as JSON text, or None/"" (a skipped curator step:
            no operations).

    Raises:
        ValidationError: the answer is not JSON, not an object, or has keys other than
            ``operations`` (path ``batch`` or ``batch.<key>``).
    """
    import json

    from wardian.errors import ValidationError

    if answer is None or answer == "":
        return []
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"the curator's answer is not JSON: {exc}",
                                  path="batch") from None
    if not isinstance(answer, Mapping):
        raise ValidationError("the curator's answer does not match the curator schema: "
                              "it is not an object", path="batch")
    extra = sorted(str(key) for key in answer if key != "operations")
    if extra:
        raise ValidationError("the curator's answer does not match the curator schema: "
                              "Extra inputs are not permitted", path=f"batch.{extra[0]}")
    return answer.get("operations", [])


def check_commit_batch(value: Mapping[str, Any]) -> CommitBatch:
    """Validate a `memory.commit` input (`CommitBatch` fields) — the commit's one check.

    Raises:
        ValidationError: the first problem, e.g. path ``batch.operations.0.save.text``.
    """
    from pydantic import ValidationError as PydanticError

    try:
        return CommitBatch.model_validate(value)
    except PydanticError as exc:
        raise _invalid(exc) from None


def check_curator_operations(answer: Any) -> CuratorBatch:
    """Validate a curator's answer (as `curator_operations` reads it) as a `CuratorBatch`:
    review mode's one check of the batch (`memory.draft_plan`).

    Raises:
        ValidationError: as `curator_operations`, or the first problem of an operation.
    """
    from pydantic import ValidationError as PydanticError

    try:
        return CuratorBatch.model_validate({"operations": curator_operations(answer)})
    except PydanticError as exc:
        raise _invalid(exc) from None


def _invalid(exc: Any) -> Exception:
    """The `ValidationError` for a pydantic error of a batch (its first problem)."""
    from wardian.errors import ValidationError

    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return ValidationError(
        f"the curator's batch does not match the curator schema: {first['msg']}",
        path=f"batch.{where}" if where else "batch")


def check_curator_answer(value: Any) -> None:
    """Accept a curator's answer as a `CuratorBatch`, or say where it is wrong.

    The check of ``wardian:curator-batch``: the engine calls it once, when it accepts the
    provider's result (`wardian.blueprints.output_schemas.OutputSchema.check_value`).

    Raises:
        ValidationError: ``path`` is the JSON path of the first problem, e.g.
            ``$['operations'][0]['text']``.
    """
    check_answer(CuratorBatch, value)


def check_answer(model: type[BaseModel], value: Any) -> None:
    """Accept `value` as `model` (a role's answer schema), or say where it is wrong.

    Raises:
        ValidationError: ``path`` is the JSON path of the first problem, e.g.
            ``$['operations'][0]['text']``; the message is pydantic's for that field.
    """
    from pydantic import ValidationError as PydanticError

    from wardian.errors import ValidationError

    try:
        model.model_validate(value)
    except PydanticError as exc:
        first = exc.errors()[0]
        path = "$" + "".join(f"[{p!r}]" for p in first["loc"])
        raise ValidationError(str(first["msg"]), path=path) from None
