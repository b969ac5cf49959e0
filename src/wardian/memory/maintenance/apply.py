"""Confirmed, atomic apply of a reviewed plan, with receipts and idempotent replay.

Spec: "Native confirmation and atomic apply" and "Idempotency and failure recovery".

`apply_plan` does, in order:

1. Replay: a receipt for (owner, idempotency key) with the same digest is returned as is —
   no prompt, no writes; the same key with another digest is `IdempotencyKeyReused` (exit 4).
2. "Preview first": a cached, conflict-free preview of the same digest must exist in
   ``state.db`` (`PreviewCache`).
3. Confirmation: a ``--confirm sha256:<12 hex>`` given must equal the digest prefix (a
   wrong one is refused without naming the right one); then the operator is always asked
   (owner id, operation count, digest prefix) — on the controlling terminal by the CLI, in
   the dialog by Garden. ``--confirm`` never replaces the question. Declining aborts with
   zero changes; having no terminal to ask on is refused (`TerminalRequired`, exit 3).
4. One ``BEGIN IMMEDIATE`` transaction on the `MemoryStore` connection: re-check the receipt,
   rebuild the preview (re-verifying the digest and every expected revision), write every
   change with a revision whose actor is ``plan:<plan_id>``, write the receipt, commit — or
   roll back everything.

Any failed apply clears the cached preview of this plan, so a fresh preview is required
before another apply (spec "Recovery after conflict": *any* failed apply). That includes key
reuse, a missing or conflicted preview, a wrong ``--confirm``, conflicts found under the
lock, validation or database errors, and also a declined confirmation or a missing terminal:
those end the apply unsuccessfully (exit 1 or 3), and the operator reviews afresh before
trying again. A successful apply also clears it (the receipt now answers replays). Only a process
killed outright cannot clear it; its transaction never committed, and the receipt check
(``check-receipt``) tells the operator so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wardian._db import atomic
from wardian._util import utc_now_iso
from wardian.errors import ConflictError, StoreError
from wardian.memory.maintenance.errors import (
    ApplyAborted,
    ConfirmationMismatch,
    IdempotencyKeyReused,
    PreviewConflicted,
    PreviewRequired,
    RevisionConflict,
    TerminalRequired,
)
from wardian.memory.maintenance.plan import Plan
from wardian.memory.maintenance.preview import (
    RecordChange,
    build_preview,
    compute_digest,
    digest_prefix,
)
from wardian.memory.maintenance.previews import PreviewCache
from wardian.memory.maintenance.terminal import NoTerminal
from wardian.memory.store import UNSET, MemoryStore

__all__ = [
    "ApplyResult",
    "ConfirmRequest",
    "Receipt",
    "apply_plan",
    "find_receipt",
]


@dataclass(frozen=True)
class Receipt:
    """A stored ``MaintenanceReceipt`` (spec "Receipt display")."""

    owner_id: str
    idempotency_key: str
    plan_id: str
    preview_digest: str
    applied_at: str
    document: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The receipt document: applied time, plan id, owner id, key, digest, allocated ids."""
        return self.document


@dataclass(frozen=True)
class ApplyResult:
    """What `apply_plan` returns: the receipt, and whether it was a replay (no writes)."""

    receipt: Receipt
    replayed: bool


@dataclass(frozen=True)
class ConfirmRequest:
    """What the operator confirms: owner id, operation count and the digest prefix."""

    owner_id: str
    plan_id: str
    operation_count: int
    digest_prefix: str

    def prompt(self) -> str:
        """The confirmation question shown on the terminal."""
        return (
            f"Apply maintenance plan {self.plan_id!r} to owner {self.owner_id}: "
            f"{self.operation_count} operation(s), digest {self.digest_prefix}.\n"
            "Type yes to apply, anything else to abort: "
        )


def find_receipt(store: MemoryStore, owner_id: str, idempotency_key: str) -> Receipt | None:
    """The receipt of (owner, idempotency key), or None. Read-only."""
    row = store.conn.execute(
        "SELECT * FROM maintenance_receipts WHERE owner_id = ? AND idempotency_key = ?",
        (owner_id, idempotency_key),
    ).fetchone()
    if row is None:
        return None
    return Receipt(
        owner_id=row["owner_id"], idempotency_key=row["idempotency_key"],
        plan_id=row["plan_id"], preview_digest=row["preview_digest"],
        applied_at=row["applied_at"], document=json.loads(row["receipt_json"]),
    )


def _replay_or_refuse(
    store: MemoryStore, owner_id: str, plan: Plan, digest: str
) -> ApplyResult | None:
    receipt = find_receipt(store, owner_id, plan.idempotency_key)
    if receipt is None:
        return None
    if receipt.preview_digest != digest:
        raise IdempotencyKeyReused(plan.idempotency_key, receipt.preview_digest, digest)
    return ApplyResult(receipt, replayed=True)


def _write_change(
    store: MemoryStore, owner_id: str, change: RecordChange, *, actor: str, now: str
) -> tuple[str, str]:
    # The plan's reasons were scanned by the preview (a `secret_detected` conflict blocks
    # apply); the rest is Wardian's own text ("retired into <id>").
    reason = "; ".join(change.reasons) or None
    if change.memory_id is None:
        record_id = store.insert_in_transaction(
            owner_id, text=change.text, evidence=change.evidence, kind=change.kind,
            scope=change.scope, sources=change.additions, actor=actor, reason=reason, now=now,
            reason_checked=True,
        )
        return record_id, store.current_revision(record_id)
    removed = change.status == "removed"
    revision = store.update_in_transaction(
        change.memory_id,
        text=change.fields.get("text", UNSET),
        evidence=change.fields.get("evidence", UNSET),
        kind=change.fields.get("kind", UNSET),
        scope=change.fields.get("scope", UNSET),
        add_sources=change.additions,
        status="removed" if removed else None,
        removed_reason=change.removed_reason if removed else None,
        actor=actor, reason=reason, now=now, reason_checked=True,
    )
    return change.memory_id, revision


def _apply_in_transaction(
    store: MemoryStore, plan: Plan, owner_id: str, digest: str
) -> ApplyResult:
    replay = _replay_or_refuse(store, owner_id, plan, digest)
    if replay is not None:  # a concurrent apply of the same plan won the race
        return replay
    # The rows re-verified below stay ours until the commit (PostgreSQL: FOR UPDATE).
    store.lock_in_transaction(
        str(getattr(op, name)) for op in plan.operations
        for name in ("memory_id", "target_memory_id") if getattr(op, name, None))
    preview = build_preview(plan, store, owner_id)
    if preview.digest != digest:
        raise ConflictError(
            f"preview digest changed from {digest} to {preview.digest}; nothing was changed",
            hint="preview the plan again",
        )
    if preview.conflicts:
        raise RevisionConflict(preview.conflicts)
    now = utc_now_iso()
    actor = f"plan:{plan.plan_id}"
    created: list[dict[str, Any]] = []
    revised: list[dict[str, Any]] = []
    for change in preview.changes:
        record_id, revision_id = _write_change(store, owner_id, change, actor=actor, now=now)
        if change.memory_id is None:
            created.append({"client_key": change.client_key, "memory_id": record_id,
                            "revision_id": revision_id})
        else:
            revised.append({"memory_id": record_id, "revision_id": revision_id,
                            "roles": change.roles})
    document = {
        "receipt_version": 1,
        "applied_at": now,
        "plan_id": plan.plan_id,
        "owner_id": owner_id,
        "idempotency_key": plan.idempotency_key,
        "preview_digest": digest,
        "operation_count": len(plan.operations),
        "actor": actor,
        "created": created,
        "revised": revised,
    }
    store.conn.execute(
        "INSERT INTO maintenance_receipts (owner_id, idempotency_key, plan_id, preview_digest,"
        " applied_at, receipt_json) VALUES (?, ?, ?, ?, ?, ?)",
        (owner_id, plan.idempotency_key, plan.plan_id, digest, now,
         json.dumps(document, ensure_ascii=False)),
    )
    receipt = Receipt(owner_id, plan.idempotency_key, plan.plan_id, digest, now, document)
    return ApplyResult(receipt, replayed=False)


def apply_plan(
    plan: Plan,
    store: MemoryStore,
    cache: PreviewCache,
    *,
    owner_id: str,
    confirm: Callable[[ConfirmRequest], bool],
    confirm_digest: str | None = None,
) -> ApplyResult:
    """Apply a reviewed plan atomically (see the module docstring for the order of checks).

    Args:
        plan: validated and bound to `owner_id` (`check_owner`).
        store: the memory store whose connection runs the one ``BEGIN IMMEDIATE``.
        cache: the preview cache in ``state.db``.
        owner_id: the owner's agent id.
        confirm: asks the operator; True to go ahead. May raise `NoTerminal`. Called
            for every apply that writes (not on replay), also when `confirm_digest` is
            given.
        confirm_digest: ``sha256:<12 hex>`` given up front by the operator (``--confirm``):
            checked first, in addition to the question.

    Returns:
        `ApplyResult` with the receipt; ``replayed`` is True when it was already committed.

    Raises:
        IdempotencyKeyReused: the key committed another digest (exit 4).
        PreviewRequired: no cached preview of this digest (exit 2).
        PreviewConflicted: the cached preview has conflicts; apply is disabled (exit 4).
        ConfirmationMismatch: `confirm_digest` is not this digest's prefix (exit 2).
        ApplyAborted: declined (exit 1; zero changes).
        TerminalRequired: `confirm` found no controlling terminal (exit 3; zero changes).
        RevisionConflict: a record changed since the preview (exit 4; rolled back).
        PlanError / StoreError: validation or database failure (rolled back).
    """
    digest = compute_digest(plan, owner_id)
    try:
        return _checked_apply(plan, store, cache, owner_id, digest, confirm, confirm_digest)
    except store.db.backend.Error as exc:
        cache.clear(owner_id, digest)
        raise StoreError(
            f"apply rolled back, nothing was changed: {exc}",
            hint="the cached preview was cleared; preview the plan again and retry",
        ) from exc
    except BaseException:
        cache.clear(owner_id, digest)
        raise


def _checked_apply(
    plan: Plan,
    store: MemoryStore,
    cache: PreviewCache,
    owner_id: str,
    digest: str,
    confirm: Callable[[ConfirmRequest], bool],
    confirm_digest: str | None,
) -> ApplyResult:
    replay = _replay_or_refuse(store, owner_id, plan, digest)
    if replay is not None:
        return replay
    cached = cache.get(owner_id, digest)
    if cached is None:
        raise PreviewRequired(owner_id, digest)
    if cached.conflict_count:
        raise PreviewConflicted(owner_id, digest, cached.conflict_count)
    expected = digest_prefix(digest)
    if confirm_digest is not None and confirm_digest.strip().lower() != expected:
        raise ConfirmationMismatch(confirm_digest, expected)
    request = ConfirmRequest(owner_id, plan.plan_id, len(plan.operations), expected)
    try:
        accepted = confirm(request)
    except NoTerminal as exc:
        raise TerminalRequired("apply", str(exc)) from exc
    if not accepted:
        raise ApplyAborted("the operator declined")
    with atomic(store.conn):
        result = _apply_in_transaction(store, plan, owner_id, digest)
    cache.clear(owner_id, digest)
    return result
