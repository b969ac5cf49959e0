"""Memory reviews: the ``memory-review`` blueprint's drafted maintenance plans, pending an
operator's review, as the operator surfaces list, show and apply them.

A review run reads the agent's whole memory (``memory.snapshot``), asks its ``reviewer``
role for findings (`wardian.memory.review.ReviewAnswer`) and drafts them into ONE
schema-v1 maintenance plan (`draft_review`, the ``memory.draft_review`` step), never
applying anything. The plan and its preview digest are the step's output: the *pending
review*, kept with the run. An operator lists them (`list_reviews`), opens one
(`load_review`: plan, digest, state, conflicts) and applies it (`apply_review`) through the
same preview, preview cache, confirmation and receipt as any plan
(`wardian.app.maintenance`). A review page shows its operations (`review_operations`) and
may apply only those the operator accepted: `review_subset_plan` builds their plan.

States: ``pending`` (no conflicts, not applied), ``applied`` (its idempotency key has a
receipt of this digest), ``stale`` (a record it names changed since it was drafted: the
preview shows the conflicts and apply refuses with `ReviewStale`, exit 4, until it is
re-drafted), ``empty`` (the reviewer found nothing to do).

These functions are what a Garden page builds on; the CLI is ``wardian garden memory
reviews`` and ``wardian garden memory review show|apply``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wardian.errors import ConflictError, NotFoundError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

__all__ = [
    "BLUEPRINT_ID",
    "DRAFT_ACTION",
    "Review",
    "ReviewOperation",
    "ReviewStale",
    "SubsetPlan",
    "apply_review",
    "apply_review_on_terminal",
    "build_review_plan",
    "draft_review",
    "list_reviews",
    "load_review",
    "pending_reviews",
    "preview_review",
    "review_operations",
    "review_subset_plan",
]

BLUEPRINT_ID = "memory-review"
"""The shipped blueprint whose runs draft reviews."""

DRAFT_ACTION = "memory.draft_review"
"""The action whose output is a pending review (any blueprint may run it)."""

class ReviewStale(ConflictError):
    """A review's records changed since it was drafted: it cannot be applied (exit 4)."""

    def __init__(self, run_id: str, agent_id: str, conflicts: Sequence[Mapping[str, Any]]
                 ) -> None:
        self.run_id = run_id
        self.conflicts = list(conflicts)
        named = ", ".join(sorted({str(c.get("memory_id", ""))[:8] for c in conflicts}))
        super().__init__(
            f"review {run_id[:8]} is stale: {len(self.conflicts)} conflict(s) — record(s) "
            f"{named} changed since it was drafted; nothing was applied",
            hint=f"draft it again: `wardian automation run start {BLUEPRINT_ID} --agent "
                 f"{agent_id} --assignments JSON --wait`, then apply the new review",
        )


# --- drafting (the memory.draft_review step) ----------------------------------------------


def _resolver(records: Sequence[Mapping[str, Any]]) -> Callable[[str], str | None]:
    """Full id for a full id or unique prefix (>= 8 characters) of a snapshot record."""
    ids = [str(r["id"]) for r in records]
    exact = set(ids)
    by_head: dict[str, list[str]] = {}
    for rid in ids:
        by_head.setdefault(rid[:8], []).append(rid)

    def resolve(given: str) -> str | None:
        given = given.strip()
        if given in exact:
            return given
        found = [rid for rid in by_head.get(given[:8], []) if rid.startswith(given)]
        return found[0] if len(found) == 1 else None

    return resolve


def build_review_plan(*, run_id: str, agent_id: str, answer: Any,
                      snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The reviewer's findings as ONE schema-v1 plan, bound to the revisions the snapshot
    read. Pure (reads no store): a record revised after the snapshot is a conflict at
    preview.

    Findings are taken in `wardian.memory.review.FINDING_KINDS` order (flagged, stale
    checkpoints, missing evidence, contradictions, duplicates), each only when every
    record it names is in the snapshot and not yet claimed: a record is the subject of
    one operation; a duplicate's ``keep`` is never retired. Flagged, stale, missing
    evidence and contradicted records become ``retire``; each absorbed duplicate a
    ``retire_into`` its ``keep``. At most 100 operations; later findings are ``left``
    for the next review.

    Returns:
        ``{"plan" (None when no operation), "counts" {kind: operations},
        "dropped" [{index, kind, reason}], "left", "findings"}``.

    Raises:
        ValidationError: `answer` is not a valid review answer.
    """
    from wardian.memory.maintenance.limits import MAX_OPERATIONS
    from wardian.memory.review import (
        FINDING_KINDS,
        ContradictionFinding,
        DuplicateFinding,
        parse_review_answer,
    )

    findings = parse_review_answer(answer).findings
    records = [r for r in snapshot.get("records") or [] if isinstance(r, Mapping)]
    revision = {str(r["id"]): str(r["revision_id"]) for r in records}
    resolve = _resolver(records)
    subjects: set[str] = set()
    kept: set[str] = set()
    ops: list[dict[str, Any]] = []
    counts = dict.fromkeys(FINDING_KINDS, 0)
    dropped: list[dict[str, Any]] = []
    left = 0
    order = sorted(range(len(findings)), key=lambda k: FINDING_KINDS.index(findings[k].kind))

    def drop(index: int, kind: str, reason: str) -> None:
        dropped.append({"index": index, "kind": kind, "reason": reason})

    for index in order:
        finding = findings[index]
        if len(ops) >= MAX_OPERATIONS:
            left += 1
            continue
        if isinstance(finding, DuplicateFinding):
            keep = resolve(finding.keep)
            if keep is None:
                drop(index, finding.kind, f"keep {finding.keep!r} is no record of this memory")
                continue
            if keep in subjects:
                drop(index, finding.kind, f"keep {keep[:8]} is retired by this plan")
                continue
            absorbed: list[str] = []
            for given in finding.absorbed:
                rid = resolve(given)
                if rid is None or rid == keep or rid in subjects or rid in kept \
                        or rid in absorbed:
                    continue
                absorbed.append(rid)
            room = MAX_OPERATIONS - len(ops)
            if not absorbed:
                drop(index, finding.kind, "every absorbed record is unknown, the keep "
                                          "itself, or already in this plan")
                continue
            if len(absorbed) > room:
                left += 1
                absorbed = absorbed[:room]
            kept.add(keep)
            for rid in absorbed:
                subjects.add(rid)
                ops.append({"op": "retire_into", "memory_id": rid,
                            "expected_revision_id": revision[rid],
                            "target_memory_id": keep,
                            "reason": f"memory review: {finding.reason}"})
            counts[finding.kind] += len(absorbed)
            continue
        if isinstance(finding, ContradictionFinding):
            subject, other = resolve(finding.retire), resolve(finding.keep)
            if other is None or subject == other:
                drop(index, finding.kind, f"keep {finding.keep!r} is no other record of "
                                          "this memory")
                continue
        else:
            subject = resolve(finding.memory_id)
        if subject is None:
            drop(index, finding.kind, "it names no record of this memory")
            continue
        if subject in subjects or subject in kept:
            drop(index, finding.kind, f"memory {subject[:8]} is already in this plan")
            continue
        subjects.add(subject)
        ops.append({"op": "retire", "memory_id": subject,
                    "expected_revision_id": revision[subject],
                    "reason": f"memory review ({finding.kind.replace('_', ' ')}): "
                              f"{finding.reason}"})
        counts[finding.kind] += 1
    plan = None
    if ops:
        # ids after a colon: a run's stored output is scanned for secrets, and a long
        # word mixing letters and digits reads as a token; a bare uuid does not
        plan = {"schema_version": 1, "plan_id": f"memory-review:{run_id}",
                "agent_id": agent_id, "idempotency_key": f"review:{run_id}",
                "operations": ops}
    return {"plan": plan, "counts": counts, "dropped": dropped, "left": left,
            "findings": len(findings)}


def draft_review(*, run_id: str, agent_id: str, answer: Any,
                 snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The ``memory.draft_review`` step: `build_review_plan`, checked by the maintenance
    plan loader and digested as a preview would digest it. Writes nothing: the returned
    document, stored as the step's output, is the pending review.

    Returns:
        ``{"run_id", "agent_id", "drafted_at", "snapshot_taken_at", "plan", "digest",
        "digest_prefix", "operations", "counts", "findings", "dropped", "left", "next"}``
        (``plan``/``digest``/``next`` None when there is nothing to do).

    Raises:
        ValidationError: `answer` is not a review answer, or the drafted plan failed the
            maintenance plan model (a bug; reported).
    """
    from wardian._util import utc_now_iso
    from wardian.app.plan_file import plan_bytes
    from wardian.memory.maintenance.plan import load_plan_bytes
    from wardian.memory.maintenance.preview import compute_digest, digest_prefix

    built = build_review_plan(run_id=run_id, agent_id=agent_id, answer=answer,
                              snapshot=snapshot)
    plan = built["plan"]
    digest = None
    if plan is not None:
        digest = compute_digest(load_plan_bytes(plan_bytes(plan), source=DRAFT_ACTION),
                                agent_id)
    return {
        "run_id": run_id, "agent_id": agent_id, "drafted_at": utc_now_iso(),
        "snapshot_taken_at": snapshot.get("taken_at"), "plan": plan, "digest": digest,
        "digest_prefix": digest_prefix(digest) if digest else None,
        "operations": len(plan["operations"]) if plan else 0, "counts": built["counts"],
        "findings": built["findings"], "dropped": built["dropped"], "left": built["left"],
        "next": (f"wardian garden memory review show {run_id[:8]} --agent {agent_id}"
                 if plan else None),
    }


# --- reading reviews ----------------------------------------------------------------------


@dataclass
class Review:
    """A pending (or applied, or stale) review: one run's drafted plan and its state.

    Attributes:
        run_id / agent_id / drafted_at: the run that drafted it, for whom, when.
        plan: the schema-v1 plan document, or None (state ``empty``).
        digest / digest_prefix: the preview digest of the plan for its owner.
        counts: operations per finding kind; operations: their total.
        state: ``pending``, ``applied``, ``stale`` or ``empty``.
        conflicts: the preview's conflicts (``stale``: why it cannot be applied).
        receipt: the receipt (``applied``).
        document: the step output as stored.
    """

    run_id: str
    agent_id: str
    drafted_at: str | None
    plan: dict[str, Any] | None
    digest: str | None
    digest_prefix: str | None
    counts: dict[str, int]
    operations: int
    state: str
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    receipt: dict[str, Any] | None = None
    document: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """One line: ``3 operations: contradiction 1, duplicate 2`` (or ``nothing to do``)."""
        if not self.operations:
            return "nothing to do"
        counts = ", ".join(f"{kind.replace('_', ' ')} {n}"
                           for kind, n in self.counts.items() if n)
        noun = "operation" if self.operations == 1 else "operations"
        return f"{self.operations} {noun}: {counts}"

    def to_json(self, *, with_plan: bool = False) -> dict[str, Any]:
        """The review as JSON (the plan itself only with `with_plan`); ``id``,
        ``summary`` and ``created_at`` (the run id, `summary`, the drafted time) are what a
        list of reviews shows."""
        doc: dict[str, Any] = {
            "id": self.run_id, "summary": self.summary, "created_at": self.drafted_at,
            "run_id": self.run_id, "agent_id": self.agent_id, "drafted_at": self.drafted_at,
            "state": self.state, "operations": self.operations, "counts": self.counts,
            "digest": self.digest, "digest_prefix": self.digest_prefix,
            "conflicts": self.conflicts,
            "applied_at": self.receipt["applied_at"] if self.receipt else None,
            "left": self.document.get("left", 0),
        }
        if with_plan:
            doc["plan"] = self.plan
            doc["receipt"] = self.receipt
            doc["dropped"] = self.document.get("dropped", [])
        return doc


def _review_of(run_id: str, agent_id: str, document: Mapping[str, Any], store: Any) -> Review:
    """The `Review` of one stored draft output, its state read from `store`."""
    from wardian.memory.maintenance.apply import find_receipt
    from wardian.memory.maintenance.plan import load_plan_bytes
    from wardian.memory.maintenance.preview import build_preview, compute_digest, digest_prefix

    plan_doc = document.get("plan")
    review = Review(
        run_id=run_id, agent_id=agent_id, drafted_at=document.get("drafted_at"),
        plan=plan_doc if isinstance(plan_doc, dict) else None,
        digest=document.get("digest"), digest_prefix=document.get("digest_prefix"),
        counts=dict(document.get("counts") or {}), operations=int(document.get("operations")
                                                                  or 0),
        state="empty", document=dict(document))
    if review.plan is None:
        return review
    from wardian.app.plan_file import plan_bytes

    plan = load_plan_bytes(plan_bytes(review.plan), source=f"review {run_id[:8]}")
    # the digest of the plan as stored: what a preview shows and an apply confirms
    review.digest = compute_digest(plan, agent_id)
    review.digest_prefix = digest_prefix(review.digest)
    receipt = find_receipt(store, agent_id, plan.idempotency_key)
    if receipt is not None and receipt.preview_digest == review.digest:
        review.state, review.receipt = "applied", receipt.to_json()
        return review
    preview = build_preview(plan, store, agent_id)
    review.conflicts = [c.to_json() for c in preview.conflicts]
    review.state = "stale" if preview.conflicts or receipt is not None else "pending"
    return review


def _reviewer_runs(state: StateDB, agent_id: str, limit: int
                   ) -> list[tuple[str, str, dict[str, Any]]]:
    """(run id, agent id, draft output) of the agent's review runs in `state`, newest
    first."""
    from wardian.engine.runs import RunStore

    runs = RunStore(state)
    found: list[tuple[str, str, dict[str, Any]]] = []
    for run in runs.list(blueprint_id=BLUEPRINT_ID, status="succeeded", limit=1_000):
        if run.agent_id != agent_id:
            continue
        for _step, output in runs.action_outputs(run.id, DRAFT_ACTION):
            if isinstance(output, dict):
                found.append((run.id, agent_id, output))
        if len(found) >= limit:
            break
    return found[:limit]


def list_reviews(state: StateDB, memory: MemoryDB, agent_id: str, *,
                 limit: int = 50) -> list[Review]:
    """The agent's reviews (runs of ``memory-review`` that drafted one), newest first, each
    with its state. Read-only.

    Args:
        state: the open state database the runs are read from.
        memory: the open memory database each review's state is checked against.
        agent_id: the owner (`wardian.app.garden.resolve_owner`).
        limit: at most this many.
    """
    from wardian.memory.store import MemoryStore

    drafts = _reviewer_runs(state, agent_id, limit)
    store = MemoryStore(memory)
    return [_review_of(run_id, owner, doc, store) for run_id, owner, doc in drafts]


def pending_reviews(state: StateDB, memory: MemoryDB, agent_id: str) -> list[Review]:
    """The agent's reviews in state ``pending`` (drafted, not applied, nothing changed
    since), newest first, read from `state` and `memory` (`list_reviews`). Read-only."""
    return [review for review in list_reviews(state, memory, agent_id)
            if review.state == "pending"]


def load_review(state: StateDB, memory: MemoryDB, run_id: str,
                agent_id: str | None = None) -> Review:
    """One review by its run id (or unique prefix): plan, digest, state, conflicts.
    Read-only.

    Args:
        state: the open state database the run is read from.
        memory: the open memory database the review's state is checked against.
        agent_id: the owner the caller resolved (the review must be this agent's); None =
            the run's own agent.

    Raises:
        NotFoundError / AmbiguousIdError: no such run, or it drafted no review for
            `agent_id`.
    """
    from wardian.engine.runs import RunStore
    from wardian.memory.store import MemoryStore

    runs = RunStore(state)
    run = runs.get(run_id)
    if agent_id is None:
        agent_id = run.agent_id or ""
    outputs = runs.action_outputs(run.id, DRAFT_ACTION) if run.agent_id == agent_id \
        else []
    drafts = [doc for _step, doc in outputs if isinstance(doc, dict)]
    if not drafts:
        raise NotFoundError(
            f"run {run.id[:8]} drafted no memory review for agent {agent_id[:8]}",
            hint=f"list them: `wardian garden memory reviews --agent {agent_id}`")
    store = MemoryStore(memory)
    return _review_of(run.id, agent_id, drafts[-1], store)


def _loaded_plan(review: Review) -> Any:
    from wardian.app.plan_file import plan_bytes
    from wardian.memory.maintenance.plan import check_owner, load_plan_bytes

    if review.plan is None:
        raise NotFoundError(f"review {review.run_id[:8]} found nothing to do: no plan",
                            hint="nothing to apply")
    plan = load_plan_bytes(plan_bytes(review.plan), source=f"review {review.run_id[:8]}")
    check_owner(plan, review.agent_id, source=f"review {review.run_id[:8]}")
    return plan


def preview_review(state: StateDB, memory: MemoryDB, run_id: str, agent_id: str
                   ) -> tuple[Review, Any]:
    """The review and its preview (`wardian.app.maintenance.preview_plan`: cached, so the
    apply that follows can require it).

    Raises:
        NotFoundError: no such review, or it has no plan.
    """
    from wardian.app.maintenance import preview_plan

    review = load_review(state, memory, run_id, agent_id)
    return review, preview_plan(_loaded_plan(review), agent_id)


def apply_review(state: StateDB, memory: MemoryDB, run_id: str, agent_id: str, *,
                 confirm: Callable[[Any], bool], confirm_digest: str | None = None) -> Any:
    """Apply a pending review through the ordinary plan apply (preview cached first, then
    `wardian.app.maintenance.apply_loaded`: confirmation, atomic apply, receipt). An
    applied review replays its receipt without asking.

    Raises:
        ReviewStale (exit 4): a record it names changed since it was drafted.
        NotFoundError: no such review, or nothing to apply. And every error of
            `apply_loaded` (declined, no terminal, digest mismatch, revision conflict).
    """
    from wardian.app.maintenance import apply_loaded

    plan = _checked(state, memory, run_id, agent_id)
    return apply_loaded(plan, agent_id, confirm=confirm, confirm_digest=confirm_digest)


def apply_review_on_terminal(state: StateDB, memory: MemoryDB, run_id: str, agent_id: str,
                             *, confirm_digest: str | None) -> Any:
    """`apply_review`, confirmed on the controlling terminal
    (`wardian.app.maintenance.apply_on_terminal`; same errors)."""
    from wardian.app.maintenance import apply_on_terminal

    plan = _checked(state, memory, run_id, agent_id)
    return apply_on_terminal(plan, agent_id, confirm_digest=confirm_digest)


def _checked(state: StateDB, memory: MemoryDB, run_id: str, agent_id: str) -> Any:
    """The review's loaded plan, previewed (and cached) unless already applied.

    Raises:
        ReviewStale: the preview has conflicts.
    """
    from wardian.app.maintenance import preview_plan

    review = load_review(state, memory, run_id, agent_id)
    plan = _loaded_plan(review)
    if review.state == "applied":
        return plan  # the apply replays the stored receipt
    preview = preview_plan(plan, agent_id)
    if preview.conflicts or review.state == "stale":
        raise ReviewStale(review.run_id, agent_id,
                          [c.to_json() for c in preview.conflicts] or review.conflicts)
    return plan


# --- reviewing a review operation by operation (Garden's review page) --------------------


@dataclass(frozen=True)
class ReviewOperation:
    """One operation of a review's plan, as a review page shows it.

    Attributes:
        index: its position in the stored plan (what an accepted subset names).
        op: the plan operation (``retire`` or ``retire_into``); label: ``merge`` for a
            ``retire_into``, else the op.
        finding: the finding kind it came from (``duplicate``, ``stale checkpoint``, …).
        reason: the reviewer's reason, as the plan carries it.
        record / target: the subject's and (``retire_into``) the keep's JSON as stored now,
            secrets redacted; None when the record is gone.
        conflicts: the review's conflicts about this operation.
    """

    index: int
    op: str
    label: str
    finding: str
    memory_id: str
    target_memory_id: str | None
    expected_revision_id: str
    reason: str
    record: dict[str, Any] | None
    target: dict[str, Any] | None
    conflicts: list[dict[str, Any]]


def _finding_of(op: Mapping[str, Any]) -> str:
    if op.get("op") == "retire_into":
        return "duplicate"
    reason = str(op.get("reason") or "")
    if reason.startswith("memory review (") and ")" in reason:
        return reason[len("memory review ("):reason.index(")")]
    return str(op.get("op") or "")


def review_operations(memory: MemoryDB, review: Review) -> list[ReviewOperation]:
    """The review's operations in plan order, each with the records it names (read now
    from `memory`, redacted) and its conflicts. Read-only; [] for an ``empty`` review."""
    from wardian.app.garden import redacted_json
    from wardian.memory.store import MemoryStore

    if review.plan is None:
        return []
    by_op: dict[int, list[dict[str, Any]]] = {}
    for conflict in review.conflicts:
        by_op.setdefault(int(conflict.get("operation", -1)), []).append(conflict)
    store = MemoryStore(memory)

    def read(record_id: str | None) -> dict[str, Any] | None:
        if not record_id:
            return None
        try:
            return redacted_json(store.get(record_id, agent_id=review.agent_id))
        except NotFoundError:
            return None

    out = []
    for index, op in enumerate(review.plan.get("operations") or []):
        target = op.get("target_memory_id")
        out.append(ReviewOperation(
            index=index, op=str(op.get("op")),
            label="merge" if op.get("op") == "retire_into" else str(op.get("op")),
            finding=_finding_of(op), memory_id=str(op.get("memory_id")),
            target_memory_id=str(target) if target else None,
            expected_revision_id=str(op.get("expected_revision_id") or ""),
            reason=str(op.get("reason") or ""), record=read(op.get("memory_id")),
            target=read(target), conflicts=by_op.get(index, [])))
    return out


@dataclass(frozen=True)
class SubsetPlan:
    """The plan of a review's accepted operations, ready for the ordinary preview.

    Attributes:
        review: the review it came from (state ``pending`` or ``applied``).
        accepted: the accepted operation indices, ascending.
        plan: the validated plan (`wardian.memory.maintenance.plan.Plan`), bound to owner.
        document: its schema-v1 JSON document (what the preview form carries on).
    """

    review: Review
    accepted: list[int]
    plan: Any
    document: dict[str, Any]


ACCEPT_FIELD = "accept"
"""The form field (repeated) naming an accepted operation's index."""


def _accepted(values: Sequence[str], total: int, run_id: str) -> list[int]:
    from wardian.app.garden import FormError

    seen: list[int] = []
    for raw in values:
        value = str(raw).strip()
        if not value.isdigit() or not value.isascii():
            raise FormError(ACCEPT_FIELD, f"{value[:40]!r} is no operation "
                            f"index (a whole number from 0 to {total - 1})",
                            hint="reload the review page and submit it again")
        index = int(value)
        if index >= total:
            raise FormError(ACCEPT_FIELD, f"operation {index} is out of "
                            f"range: review {run_id[:8]} has {total} operation(s), "
                            f"0 to {total - 1}",
                            hint="reload the review page and submit it again")
        if index in seen:
            raise FormError(ACCEPT_FIELD, f"operation {index} is accepted "
                            "twice; each index may appear once",
                            hint="reload the review page and submit it again")
        seen.append(index)
    if not seen:
        raise FormError(ACCEPT_FIELD, f"nothing to apply: every operation of review "
                        f"{run_id[:8]} was dropped; nothing was changed",
                        hint="accept at least one operation, or leave the review pending")
    return sorted(seen)


def review_subset_plan(state: StateDB, memory: MemoryDB, run_id: str, agent_id: str,
                       accepted: Sequence[str]) -> SubsetPlan:
    """The plan of exactly the `accepted` operations of a review, for the ordinary
    preview, confirmation, apply and receipt (`wardian.app.maintenance`).

    Every operation accepted: the stored plan itself (same digest; applying it marks the
    review ``applied``). A subset: the same plan document — same owner, each operation
    exactly as drafted with its revision binding — under its own ``plan_id`` and
    ``idempotency_key`` (``review:RUN:ops-0,2``), re-validated, so its preview has its own
    digest. Read-only.

    Args:
        accepted: the accepted operation indices as the form gave them (decimal strings).

    Raises:
        FormError (exit 2, field ``accept``): an index that is not a whole number, out of
            range or given twice; or none at all ("nothing to apply").
        ReviewStale (exit 4): a record the review names changed since it was drafted.
        NotFoundError: no such review for `agent_id`, or it found nothing to do.
    """
    import hashlib

    from wardian.app.maintenance import load_bound_bytes
    from wardian.app.plan_file import plan_bytes

    review = load_review(state, memory, run_id, agent_id)
    if review.plan is None:
        raise NotFoundError(f"review {review.run_id[:8]} found nothing to do: no plan",
                            hint="nothing to apply")
    if review.state == "stale":
        raise ReviewStale(review.run_id, agent_id, review.conflicts)
    operations = list(review.plan.get("operations") or [])
    indices = _accepted(accepted, len(operations), review.run_id)
    if len(indices) == len(operations):
        document = dict(review.plan)
    else:
        named = ",".join(str(i) for i in indices)
        if len(named) > 160:
            named = "sha256-" + hashlib.sha256(named.encode()).hexdigest()[:16]
        document = {**review.plan,
                    "plan_id": f"{review.plan['plan_id']}:ops-{named}",
                    "idempotency_key": f"{review.plan['idempotency_key']}:ops-{named}",
                    "operations": [operations[i] for i in indices]}
    plan = load_bound_bytes(plan_bytes(document), agent_id,
                            source=f"review {review.run_id[:8]}")
    return SubsetPlan(review, indices, plan, document)
