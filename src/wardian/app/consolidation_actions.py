"""The memory actions of the engine: ``archive.load``, ``memory.snapshot``,
``memory.commit``, ``memory.draft_plan`` (memory-consolidation) and ``memory.draft_review``
(memory-review).

Each is a thin wrapper that reads what it needs from the run (`ActionContext`: principal,
workspace, trigger payload), calls the service function in `wardian.app.consolidation`,
turns what was dropped into run events and returns its typed output
(`wardian.app.action_outputs`, which also holds each output's storage rule). An earlier
step's whole output arrives as an argument: a step reference (``archive_step: archive``
gives ``archive``, ``batch_step: curate`` gives ``batch``), resolved by the engine
(`wardian.engine.executor`, "Step references") and registered with each reference's
default step, the one of the shipped blueprints.

**Wiring.** `wardian.builtin_plugin` registers `ACTIONS` (with each one's step
references and storage) through the one plugin registry (`wardian.plugins`), loaded the
first time a run looks an action up; so the engine and the invokers, below the application
layer, never import this module.

Spec "Optional consolidation"; DESIGN.md "Blueprints, runs, providers" (`memory.commit`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wardian.app.action_outputs import (
    ArchiveLoadOutput,
    DraftPlanOutput,
    DraftReviewOutput,
    MemoryCommitOutput,
    MemorySnapshotOutput,
    typed,
)
from wardian.app.consolidation import (
    archive_load,
    commit_curator_batch,
    draft_plan,
    memory_snapshot,
)
from wardian.engine.actions import ActionContext, ActionFn
from wardian.errors import UsageError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

__all__ = ["ACTIONS"]


def _databases() -> tuple[StateDB, MemoryDB]:
    """The state and memory databases one action call works in, opened once per call (the
    engine's action context carries none)."""
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db

    return open_state_db(), open_memory_db()


def _principal(ctx: ActionContext, state: StateDB) -> tuple[str, str | None, str]:
    """(agent id, name, workspace) of the run: the workspace is the run's, else the
    agent's registered one (in `state`), else the current directory's (git root)."""
    if not ctx.agent_id:
        raise UsageError("this action needs a run with an agent (the run's principal)",
                         hint="start the run with --agent NAME")
    name, workspace = ctx.agent_name, ctx.workspace
    if not workspace or not name:
        from wardian.runtime.agents import AgentRegistry

        registry = AgentRegistry(state)
        agent = registry.find(ctx.agent_id)
        workspace = workspace or (agent.workspace if agent else None)
        name = name or (agent.name if agent else None)
    if not workspace:
        from wardian.memory.models import default_workspace

        workspace = default_workspace()
    return ctx.agent_id, name, str(workspace)


def _payload(ctx: ActionContext) -> Mapping[str, Any]:
    payload = ctx.invocation.get("payload")
    return payload if isinstance(payload, Mapping) else {}


def _archive_workspace(archive: Any, default: str) -> str:
    """The workspace `archive.load` resolved (a transcript's cwd), else `default`."""
    value = archive.get("workspace") if isinstance(archive, Mapping) else None
    return value if isinstance(value, str) and value else default


def _archive_from(archive: Any, archive_step: str) -> Mapping[str, Any]:
    if not isinstance(archive, Mapping):
        raise UsageError(
            f"no archive.load output found in step {archive_step!r}",
            hint="add an `archive.load` step before it, or name it with: {archive_step: ID}",
        )
    return archive


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes", "on"}
    return bool(value)


def _action_archive_load(
    ctx: ActionContext, include_tool_output: Any = False, archive_path: str | None = None,
) -> ArchiveLoadOutput:
    """``archive.load``: see `archive_load`. The slice ends at the triggering session's last
    seq (session-close payload ``archive_seq_range``); a manual run's ``--archive PATH``
    arrives as the payload's ``archive``."""
    state, memory = _databases()
    agent_id, name, workspace = _principal(ctx, state)
    payload = _payload(ctx)
    path = archive_path or payload.get("archive_path")
    if not path and isinstance(payload.get("archive"), str):
        path = payload["archive"]
    seq_range = payload.get("archive_seq_range")
    upto = None
    if isinstance(seq_range, Sequence) and not isinstance(seq_range, str) and seq_range:
        upto = seq_range[-1]
    result = typed(ArchiveLoadOutput, archive_load(
        state=state, memory=memory, agent_id=agent_id, agent_name=name, workspace=workspace,
        transcript_path=str(path) if path else None,
        upto_seq=int(upto) if upto is not None else None,
        include_tool_output=_truthy(include_tool_output),
    ), "archive.load")
    ctx.emit("archive.loaded", result.model_dump(mode="json", include={
        "source", "after_seq", "first_seq", "last_seq", "count", "skipped_tool_messages",
        "secrets_redacted"}))
    if result.cut is not None:
        ctx.emit("archive.slice_cut", result.cut)
    return result


def _action_memory_snapshot(ctx: ActionContext, all_workspaces: Any = False,
                            include_flagged: Any = False, check_evidence: Any = False,
                            archive: Any = None, archive_step: str = "archive",
                            ) -> MemorySnapshotOutput:
    """``memory.snapshot``: see `memory_snapshot` (``include_flagged`` only with
    ``all_workspaces``); the workspace is the one step `archive_step` resolved, if any."""
    state, memory = _databases()
    agent_id, _name, workspace = _principal(ctx, state)
    workspace = _archive_workspace(archive, workspace)
    return typed(MemorySnapshotOutput, memory_snapshot(
        state=state, memory=memory, agent_id=agent_id,
        workspace=None if _truthy(all_workspaces) else workspace,
        include_flagged=_truthy(include_flagged), check_evidence=_truthy(check_evidence)),
        "memory.snapshot")


def _key(ctx: ActionContext) -> str | None:
    """The invocation's idempotency key (session-close), else None (→ ``run:<run id>``)."""
    if ctx.idempotency_key:
        return ctx.idempotency_key
    key = _payload(ctx).get("idempotency_key")
    return str(key) if key else None


def _max_changes(ctx: ActionContext, value: Any) -> int | None:
    if value is None:
        value = ctx.inputs.get("max_changes")
    return None if value is None else int(value)


def _action_memory_commit(
    ctx: ActionContext, batch: Any = None, archive: Any = None, archive_step: str = "archive",
    batch_step: str = "curate", max_changes: Any = None,
) -> MemoryCommitOutput:
    """``memory.commit``: see `commit_curator_batch`; dropped ops become run events.

    The answer is not validated here: the engine checked it when it accepted the curator's
    result, and the commit checks the batch once more, itself.
    """
    from wardian.memory.batch import curator_operations

    state, memory = _databases()
    agent_id, _name, workspace = _principal(ctx, state)
    operations = curator_operations(batch)
    archive_out = _archive_from(archive, archive_step)
    result = typed(MemoryCommitOutput, commit_curator_batch(
        memory=memory, run_id=ctx.run_id, agent_id=agent_id,
        workspace=_archive_workspace(archive_out, workspace), operations=operations,
        archive=archive_out, idempotency_key=_key(ctx),
        max_changes=_max_changes(ctx, max_changes),
    ), "memory.commit")
    for dropped in result.dropped:
        ctx.emit("memory.op_dropped", dropped)
    ctx.emit("memory.committed", {"summary": result.summary, "counts": result.counts,
                                  "replayed": result.replayed})
    return result


def _action_memory_draft_plan(
    ctx: ActionContext, batch: Any = None, archive: Any = None, archive_step: str = "archive",
    batch_step: str = "curate", max_changes: Any = None,
) -> DraftPlanOutput:
    """``memory.draft_plan``: see `draft_plan` (which checks the operations once, as a
    commit does); dropped ops become run events."""
    from wardian.memory.batch import curator_operations

    state, memory = _databases()
    agent_id, _name, workspace = _principal(ctx, state)
    operations = curator_operations(batch)
    archive_out = _archive_from(archive, archive_step)
    result = typed(DraftPlanOutput, draft_plan(
        memory=memory, run_id=ctx.run_id, agent_id=agent_id,
        workspace=_archive_workspace(archive_out, workspace), operations=operations,
        archive=archive_out, idempotency_key=_key(ctx),
        max_changes=_max_changes(ctx, max_changes),
    ), "memory.draft_plan")
    for dropped in result.dropped:
        ctx.emit("memory.op_dropped", dropped)
    ctx.emit("memory.plan_drafted", {"path": result.path, "operations": result.operations})
    return result


def _action_memory_draft_review(
    ctx: ActionContext, review: Any = None, review_step: str = "review",
    snapshot: Any = None, snapshot_step: str = "snapshot",
) -> DraftReviewOutput:
    """``memory.draft_review``: see `wardian.app.reviews.draft_review` — the reviewer's
    findings (`review`: step `review_step`'s output) against the records of `snapshot`
    (step `snapshot_step`'s output) as one plan; nothing applied. Dropped findings become
    run events."""
    from wardian.app.reviews import draft_review

    state, _memory = _databases()
    agent_id, _name, _workspace = _principal(ctx, state)
    if not isinstance(snapshot, Mapping) or "records" not in snapshot:
        raise UsageError(
            f"no memory.snapshot output found in step {snapshot_step!r}",
            hint="add a `memory.snapshot` step before it, or pass with: {snapshot_step: ID}")
    result = typed(DraftReviewOutput, draft_review(
        run_id=ctx.run_id, agent_id=agent_id, answer=review, snapshot=snapshot),
        "memory.draft_review")
    for dropped in result.dropped:
        ctx.emit("memory.finding_dropped", dropped)
    ctx.emit("memory.review_drafted", {"operations": result.operations,
                                       "counts": result.counts, "digest": result.digest})
    return result


ACTIONS: dict[str, ActionFn] = {
    "archive.load": _action_archive_load,
    "memory.snapshot": _action_memory_snapshot,
    "memory.commit": _action_memory_commit,
    "memory.draft_plan": _action_memory_draft_plan,
    "memory.draft_review": _action_memory_draft_review,
}
"""Action name -> its wrapper (registered by `wardian.builtin_plugin`)."""
