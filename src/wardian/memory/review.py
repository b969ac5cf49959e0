"""The memory review: what a reviewer (builtin or model) answers about an agent's whole memory.

The ``memory-review`` blueprint's ``reviewer`` role reads every record of one agent and
answers a `ReviewAnswer`: findings, each naming the records it is about and why. The
``memory.draft_review`` step turns the findings into ONE schema-v1 maintenance plan for an
operator to preview and apply (`wardian.app.reviews`); nothing here writes memory.

Finding kinds:

* ``duplicate`` — `keep` stays; every id in `absorbed` restates it and is retired into it
  (its sources move to `keep`, a ``retire_into``);
* ``contradiction`` — two active records contradict (negation or value); `retire` is the
  one that no longer holds, `keep` the one that does;
* ``stale_checkpoint`` — a ``current`` record not revised for
  ``memory.current_review_days`` days;
* ``missing_evidence`` — the record's evidence excerpt no longer occurs in any of the
  agent's archives;
* ``flagged`` — a record set aside as holding a secret.

Ids are full record ids or unique prefixes of at least 8 characters (what a prompt shows).

Memory registers the answer as the output schema ``wardian:memory-review`` of the
blueprint language through `wardian.builtin_plugin` (`review_output_schema`,
`check_review_answer`): this module never imports `wardian.blueprints`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FINDING_KINDS",
    "REVIEW_REF",
    "REVIEW_SCHEMA_TITLE",
    "ContradictionFinding",
    "DuplicateFinding",
    "Finding",
    "RecordFinding",
    "ReviewAnswer",
    "check_review_answer",
    "parse_review_answer",
    "review_output_schema",
]

REVIEW_REF = "wardian:memory-review"
"""The output schema name of the reviewer's answer (``output: {$ref: ...}``)."""

REVIEW_SCHEMA_TITLE = "MemoryReview"
"""The JSON Schema ``title`` of the answer."""

FINDING_KINDS = ("flagged", "stale_checkpoint", "missing_evidence", "contradiction",
                 "duplicate")
"""Every finding kind, in the order a drafted plan takes them when two claim one record."""

MAX_FINDINGS = 1_000
"""Most findings one answer may hold (a plan takes at most 100 operations of them)."""

_Id = Annotated[str, Field(min_length=8, max_length=256)]
_Reason = Annotated[str, Field(min_length=1, max_length=1_000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DuplicateFinding(_Strict):
    """`absorbed` restate `keep`: each is retired into it."""

    kind: Literal["duplicate"]
    keep: _Id
    absorbed: Annotated[list[_Id], Field(min_length=1, max_length=99)]
    reason: _Reason


class ContradictionFinding(_Strict):
    """`retire` contradicts `keep` and no longer holds."""

    kind: Literal["contradiction"]
    keep: _Id
    retire: _Id
    reason: _Reason


class RecordFinding(_Strict):
    """One record to retire: a stale checkpoint, evidence gone, or a flagged record."""

    kind: Literal["stale_checkpoint", "missing_evidence", "flagged"]
    memory_id: _Id
    reason: _Reason


Finding = Annotated[DuplicateFinding | ContradictionFinding | RecordFinding,
                    Field(discriminator="kind")]


class ReviewAnswer(_Strict):
    """A reviewer's answer: its findings, most useful first (may be empty)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title=REVIEW_SCHEMA_TITLE)
    findings: list[Finding] = Field(default_factory=list, max_length=MAX_FINDINGS)


def review_output_schema() -> dict[str, Any]:
    """The JSON Schema a reviewer's answer must match (sent to providers as output schema)."""
    return ReviewAnswer.model_json_schema()


def check_review_answer(value: Any) -> None:
    """Accept a reviewer's answer as a `ReviewAnswer`, or say where it is wrong.

    Raises:
        ValidationError: ``path`` is the JSON path of the first problem, e.g.
            ``$['findings'][0]['keep']``.
    """
    from wardian.memory.batch import check_answer

    check_answer(ReviewAnswer, value)


def parse_review_answer(value: Any) -> ReviewAnswer:
    """The reviewer's answer (an object, JSON text, or None/"" for a skipped reviewer: no
    findings) as a `ReviewAnswer`.

    Raises:
        ValidationError: not JSON, or not a valid answer (path ``review`` or
            ``review.<location>``).
    """
    import json

    from pydantic import ValidationError as PydanticError

    from wardian.errors import ValidationError

    if value is None or value == "":
        return ReviewAnswer()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"the reviewer's answer is not JSON: {exc}",
                                  path="review") from None
    try:
        return ReviewAnswer.model_validate(value)
    except PydanticError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValidationError(
            f"the reviewer's answer does not match the review schema: {first['msg']}",
            path=f"review.{where}" if where else "review") from None
