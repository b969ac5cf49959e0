"""One call per ``garden maintain`` step: open the stores, do the work.

The CLI and the Garden web app resolve the agent to an owner id (the agents registry lives
above ``memory``) and call these; they return documents each surface renders. The CLI reads
a plan file (`preview_file`, `apply_file`); the web app has the uploaded or pasted bytes
(`load_bound_bytes`, then `preview_plan`, `apply_loaded`, `check_receipt(plan=...)`). Both
go through the same preview, cache, confirmation and apply code.

Spec: "Operator maintenance in Garden" (import, preview, apply, check receipt).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wardian._db import StateDB
from wardian.config import memory_db_path, state_db_path
from wardian.errors import UsageError
from wardian.memory.db import MemoryDB
from wardian.memory.maintenance.apply import (
    ApplyResult,
    ConfirmRequest,
    apply_plan,
    find_receipt,
)
from wardian.memory.maintenance.plan import (
    Plan,
    check_owner,
    load_plan_bytes,
    load_plan_file,
)
from wardian.memory.maintenance.preview import Preview, build_preview, compute_digest
from wardian.memory.maintenance.previews import PreviewCache
from wardian.memory.store import MemoryStore

__all__ = [
    "apply_file",
    "apply_loaded",
    "check_receipt",
    "load_bound_bytes",
    "load_bound_plan",
    "preview_file",
    "preview_plan",
]


def load_bound_plan(path: str | os.PathLike[str], owner_id: str) -> Plan:
    """Load and validate the plan at `path` and bind it to `owner_id`. Touches no database.

    Raises:
        PlanError: malformed, a rule broken, or the plan's ``agent_id`` is another agent.
    """
    plan = load_plan_file(path)
    check_owner(plan, owner_id, source=str(path))
    return plan


def load_bound_bytes(data: bytes, owner_id: str, *, source: str) -> Plan:
    """Validate a plan from its bytes (an upload or a paste) and bind it to `owner_id`.

    Args:
        data: the plan document (UTF-8 JSON, at most 1 MiB).
        source: what to call it in messages (the uploaded file's name, or "pasted plan").

    Raises:
        PlanError: as `load_bound_plan`.
    """
    plan = load_plan_bytes(data, source=source)
    check_owner(plan, owner_id, source=source)
    return plan


def preview_file(
    path: str | os.PathLike[str],
    owner_id: str,
    *,
    memory_db: Path | None = None,
    state_db: Path | None = None,
) -> Preview:
    """Preview the plan at `path` for `owner_id` and cache it in ``state.db``.

    Read-only on ``memory.db`` (byte-identical before and after); writes only the preview
    cache row in ``state.db``.

    Raises:
        PlanError: see `load_bound_plan`; also a record over 64 sources after the plan.
    """
    return preview_plan(
        load_bound_plan(path, owner_id), owner_id, memory_db=memory_db, state_db=state_db
    )


def preview_plan(
    plan: Plan,
    owner_id: str,
    *,
    memory_db: Path | None = None,
    state_db: Path | None = None,
) -> Preview:
    """Preview a loaded, owner-bound `plan` and cache it in ``state.db`` (see `preview_file`).

    Raises:
        PlanError: a record over 64 sources after the plan.
    """
    store = MemoryStore(MemoryDB.open(memory_db or memory_db_path()))
    preview = build_preview(plan, store, owner_id)
    receipt = find_receipt(store, owner_id, plan.idempotency_key)
    if receipt is not None:
        # The key already committed: apply will replay it (same digest) or refuse it.
        preview.existing_receipt = receipt.to_json()
    cache = PreviewCache(StateDB.open(state_db or state_db_path()))
    cache.put(
        owner_id=owner_id, digest=preview.digest, plan_id=plan.plan_id,
        idempotency_key=plan.idempotency_key, conflict_count=len(preview.conflicts),
        document=preview.to_json(),
    )
    return preview


def apply_file(
    path: str | os.PathLike[str],
    owner_id: str,
    *,
    confirm: Callable[[ConfirmRequest], bool],
    confirm_digest: str | None = None,
    memory_db: Path | None = None,
    state_db: Path | None = None,
) -> ApplyResult:
    """Apply the reviewed plan at `path` for `owner_id` (`apply_plan`: atomic, receipted).

    Raises:
        PlanError, PreviewRequired, PreviewConflicted, ConfirmationMismatch, ApplyAborted,
        RevisionConflict, IdempotencyKeyReused, StoreError: see `apply_plan`.
    """
    return apply_loaded(
        load_bound_plan(path, owner_id), owner_id, confirm=confirm,
        confirm_digest=confirm_digest, memory_db=memory_db, state_db=state_db,
    )


def apply_loaded(
    plan: Plan,
    owner_id: str,
    *,
    confirm: Callable[[ConfirmRequest], bool],
    confirm_digest: str | None = None,
    memory_db: Path | None = None,
    state_db: Path | None = None,
) -> ApplyResult:
    """Apply a loaded, owner-bound `plan` (see `apply_file`; same errors)."""
    store = MemoryStore(MemoryDB.open(memory_db or memory_db_path()))
    cache = PreviewCache(StateDB.open(state_db or state_db_path()))
    return apply_plan(
        plan, store, cache, owner_id=owner_id, confirm=confirm,
        confirm_digest=confirm_digest,
    )


def check_receipt(
    memory: MemoryDB,
    owner_id: str,
    *,
    path: str | os.PathLike[str] | None = None,
    idempotency_key: str | None = None,
    plan: Plan | None = None,
) -> dict[str, Any]:
    """Whether the batch of (owner, idempotency key) committed, with its receipt. Read-only.

    Args:
        memory: the open memory database the receipts are read from.
        path: a plan file (its key is used, and its digest is compared with the receipt's).
        idempotency_key: the key directly.
        plan: an already loaded, owner-bound plan (the web app's upload or paste).
            Exactly one of `path` / `idempotency_key` / `plan`.

    Returns:
        ``{"owner_id", "idempotency_key", "committed", "receipt", "plan_digest",
        "matches_plan"}`` (``plan_digest``/``matches_plan`` are None without a plan file).

    Raises:
        UsageError: not exactly one of `path`, `idempotency_key` and `plan`.
        PlanError: the plan file is invalid or for another agent.
    """
    if sum(x is not None for x in (path, idempotency_key, plan)) != 1:
        raise UsageError(
            "give either a PLAN file or --idempotency-key, not both or neither",
            hint="e.g. `wardian garden maintain check-receipt plan.json --agent A`",
        )
    digest: str | None = None
    if path is not None:
        plan = load_bound_plan(path, owner_id)
    if plan is not None:
        key = plan.idempotency_key
        digest = compute_digest(plan, owner_id)
    else:
        key = str(idempotency_key)
        if not key.strip():
            raise UsageError(
                "--idempotency-key must not be empty",
                hint="pass the plan's idempotency_key, or the PLAN file instead",
            )
    receipt = find_receipt(MemoryStore(memory), owner_id, key)
    return {
        "owner_id": owner_id,
        "idempotency_key": key,
        "committed": receipt is not None,
        "receipt": receipt.to_json() if receipt else None,
        "plan_digest": digest,
        "matches_plan": (
            None if digest is None or receipt is None else receipt.preview_digest == digest
        ),
    }
