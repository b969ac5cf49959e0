"""The typed outputs of the memory actions (`wardian.app.consolidation_actions`).

Each built-in memory action returns one of these models; the engine stores its
``model_dump(mode="json")`` as the step's output, so ``{{ steps.X.output.KEY }}`` reads the
same keys as before (the fields are named as those keys), and Python readers use the
attributes. A model's **storage rule** says what of it the run store keeps:

* `ArchiveLoadOutput` — the conversation lives in the agent's archive: a run stores the
  slice's seq range and a digest of its messages, not the messages or their text
  (`ArchiveLoadOutput.STORAGE`, registered with the action; `OutputStorage`); a transcript
  file's messages are stored (the file is not ours to keep).
* the others — stored whole, as dumped.

An output that does not fit its model is a bug in the action: `typed` raises
a `WardianError` naming the action and the field, and the step fails with that text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer
from pydantic import ValidationError as PydanticValidationError

from wardian.app.consolidation import expand_archive_output, shorten_archive_output
from wardian.engine.actions import OutputStorage
from wardian.errors import WardianError

__all__ = [
    "ArchiveLoadOutput",
    "DraftPlanOutput",
    "DraftReviewOutput",
    "MemoryCommitOutput",
    "MemorySnapshotOutput",
    "typed",
]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ArchiveLoadOutput(_Output):
    """``archive.load``: the archive slice after the agent's cursor (or a transcript
    file's messages), see `wardian.app.consolidation.archive_load`."""

    agent_id: str
    agent_name: str
    workspace: str
    source: str
    path: str | None
    after_seq: int | None
    first_seq: int | None
    last_seq: int | None
    count: int
    skipped_tool_messages: int
    cursor: int | None
    secrets_redacted: int
    include_tool_output: bool
    messages: list[dict[str, Any]]
    text: str
    cut: dict[str, Any] | None

    STORAGE: ClassVar[OutputStorage] = OutputStorage(shorten=shorten_archive_output,
                                                     expand=expand_archive_output)
    """Stored without ``text`` and, for an archive slice, without ``messages`` (their seq
    range and digest read them again)."""


class MemorySnapshotOutput(_Output):
    """``memory.snapshot``: the agent's records (`wardian.app.consolidation.memory_snapshot`);
    ``current_review_days`` and ``taken_at`` only for the whole memory (null otherwise)."""

    agent_id: str
    workspace: str | None
    count: int
    current_review_days: int | None = None
    taken_at: str | None = None
    records: list[dict[str, Any]]

    @model_serializer(mode="wrap")
    def _whole_memory_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A workspace's snapshot is dumped without the whole memory's two keys."""
        out: dict[str, Any] = handler(self)
        for key in ("current_review_days", "taken_at"):
            if out.get(key) is None:
                out.pop(key, None)
        return out


class MemoryCommitOutput(_Output):
    """``memory.commit``: the commit's receipt (`wardian.memory.consolidation.CommitResult`)
    and its one-line summary."""

    agent_id: str
    idempotency_key: str
    batch_digest: str
    committed_at: str
    actor: str
    previous_cursor: int | None
    cursor: int | None
    applied: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    counts: dict[str, int]
    replayed: bool
    summary: str


class DraftPlanOutput(_Output):
    """``memory.draft_plan``: the maintenance plan written (``path`` null when nothing)."""

    path: str | None
    operations: int
    dropped: list[dict[str, Any]]
    plan_id: str | None
    agent_id: str
    next: str | None


class DraftReviewOutput(_Output):
    """``memory.draft_review``: the pending review (`wardian.app.reviews.draft_review`)."""

    run_id: str
    agent_id: str
    drafted_at: str
    snapshot_taken_at: str | None
    plan: dict[str, Any] | None
    digest: str | None
    digest_prefix: str | None
    operations: int
    counts: dict[str, int]
    findings: int
    dropped: list[dict[str, Any]]
    left: int
    next: str | None


M = TypeVar("M", bound=_Output)


def typed(model: type[M], value: Mapping[str, Any], action: str) -> M:
    """`value` (a service function's result) as `model`.

    Raises:
        WardianError: `value` does not fit `model` (names the action and the
            first field that does not).
    """
    try:
        return model.model_validate(dict(value))
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
        raise WardianError(
            f"action {action!r} produced a malformed output: {where}: {first.get('msg')} "
            f"({exc.error_count()} problem(s))",
            hint="this is a bug in the action; report it with the run id") from None
