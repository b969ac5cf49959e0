"""Reviewed memory maintenance for the operator surfaces: plans validated, previewed,
confirmed and applied, and the one-record plans of ``garden memory retire|revise``.

``wardian garden maintain …``, ``wardian garden memory retire|revise|stale --draft-plan``
and Garden in the browser ("Maintain memory…") all call this module, so every surface goes
through the same preview, preview cache, confirmation and atomic apply
(`wardian.memory.maintenance.service`). The surface resolves the agent
(`wardian.app.garden.resolve_owner`), calls one function here, and renders the document it
gets back; the types and errors it needs are re-exported here.

Confirmation: the CLI asks on the controlling terminal (`ask_on_terminal`, never stdin;
``--confirm`` is checked as well but never replaces the question, and without a terminal
the apply is refused); the web app passes `confirmed_as_shown`, which accepts only the
owner, operation count and digest prefix its dialog showed.

Spec: "Operator maintenance in Garden", "Native confirmation and atomic apply"
(one-record corrections, stale checkpoints).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from wardian.memory.maintenance.apply import ApplyResult, ConfirmRequest
from wardian.memory.maintenance.errors import (
    ApplyAborted,
    ConfirmationMismatch,
    PreviewConflicted,
)
from wardian.memory.maintenance.plan import Plan
from wardian.memory.maintenance.preview import Preview, compute_digest, digest_prefix
from wardian.memory.maintenance.service import (
    apply_file,
    apply_loaded,
    check_receipt,
    load_bound_bytes,
    load_bound_plan,
    preview_file,
    preview_plan,
)

if TYPE_CHECKING:
    from wardian.memory.db import MemoryDB
    from wardian.memory.freshness import StaleRecord
    from wardian.memory.models import Scope

__all__ = [
    "ApplyAborted",
    "ApplyResult",
    "ConfirmRequest",
    "ConfirmationMismatch",
    "ConfirmationShown",
    "Plan",
    "Preview",
    "PreviewConflicted",
    "apply_file",
    "apply_file_on_terminal",
    "apply_loaded",
    "apply_on_terminal",
    "ask_on_terminal",
    "check_receipt",
    "confirm_spelling",
    "confirmation_for",
    "confirmed_as_shown",
    "load_bound_bytes",
    "preview_file",
    "preview_plan",
    "retire_record_plan",
    "revise_record_plan",
    "revise_scope",
    "stale_retire_plan",
]


def ask_on_terminal(request: ConfirmRequest) -> bool:
    """Ask the operator on the controlling terminal (``/dev/tty``, never stdin) to confirm
    `request`; True only for ``yes``.

    Raises:
        NoTerminal: there is no controlling terminal (apply turns it into
            `TerminalRequired`, exit 3).
    """
    from wardian.memory.maintenance.terminal import confirm_on_terminal

    return confirm_on_terminal(request.prompt())


def apply_file_on_terminal(path: str | os.PathLike[str], owner_id: str, *,
                           confirm_digest: str | None) -> ApplyResult:
    """Apply the reviewed plan file at `path` for `owner_id` after the operator answered
    yes on the controlling terminal. `confirm_digest` (``sha256:`` + 12 hex, as the
    preview showed), when given, is checked too; it never replaces the question.

    Raises:
        PlanError, PreviewRequired, PreviewConflicted, ConfirmationMismatch, ApplyAborted,
        TerminalRequired, RevisionConflict, IdempotencyKeyReused: see
        `wardian.memory.maintenance.apply`.
    """
    return apply_on_terminal(load_bound_plan(path, owner_id), owner_id,
                             confirm_digest=confirm_digest)


def apply_on_terminal(plan: Plan, owner_id: str, *, confirm_digest: str | None) -> ApplyResult:
    """`apply_file_on_terminal` for a loaded, owner-bound plan (same errors, and
    UsageError: `confirm_digest` is no digest at all, see `confirm_spelling`)."""
    if confirm_digest is not None:
        confirm_digest = confirm_spelling(confirm_digest, compute_digest(plan, owner_id))
    return apply_loaded(plan, owner_id, confirm=ask_on_terminal, confirm_digest=confirm_digest)


_HEX = frozenset("0123456789abcdef")


def confirm_spelling(given: str, digest: str) -> str:
    """``--confirm`` as the apply compares it: ``sha256:`` + 12 lowercase hex. Pure.

    The preview prints ``sha256:<12 hex>  (sha256:<64 hex>)``; an operator may copy either,
    with or without ``sha256:``, in either case. A 64-hex value is compared whole here (a
    wrong tail is a mismatch, not silently cut off). A value that is no digest at all (a
    typo, ``yes``, an empty string) is refused before anything is attempted, so the
    reviewed preview stays cached; a real digest that differs still goes to the apply,
    which refuses it and clears the preview.

    Args:
        given: the operator's ``--confirm`` value.
        digest: this plan's full ``sha256:<64 hex>`` preview digest.

    Raises:
        UsageError (exit 2): `given` is not 12 or 64 hex digits after an optional
            ``sha256:``.
    """
    from wardian.errors import UsageError

    value = given.strip().lower()
    hex_part = value.removeprefix("sha256:")
    if len(hex_part) not in (12, 64) or not set(hex_part) <= _HEX:
        raise UsageError(
            f"--confirm {given!r} is not a preview digest",
            hint="pass sha256: and the 12 hex digits the preview printed (or leave "
                 "--confirm out and answer the question on the terminal)",
        )
    if len(hex_part) == 64 and "sha256:" + hex_part == digest:
        return digest_prefix(digest)
    return "sha256:" + hex_part  # 12 hex, or a full digest of another plan: a mismatch


class ConfirmationShown(NamedTuple):
    """What the confirmation dialog shows: plan id, owner, operation count, digest prefix."""

    plan_id: str
    owner_id: str
    operation_count: int
    digest_prefix: str


def confirmation_for(plan: Plan, owner_id: str) -> ConfirmationShown:
    """The values the operator confirms for `plan` bound to `owner_id`. Pure."""
    return ConfirmationShown(plan.plan_id, owner_id, len(plan.operations),
                             digest_prefix(compute_digest(plan, owner_id)))


def confirmed_as_shown(decision: Any, shown: tuple[Any, Any, Any]
                       ) -> Callable[[ConfirmRequest], bool]:
    """A ``confirm`` callback for `apply_loaded` from a dialog's answer.

    Args:
        decision: the operator's button (``"apply"`` confirms, anything else declines).
        shown: (owner id, operation count as text, digest prefix) the dialog showed.

    The callback declines unless the decision is ``apply``; it raises `ApplyAborted` when
    the shown values are not exactly the plan's being applied (the backend's own check:
    only what the operator saw may be applied).
    """

    def confirmed(asked: ConfirmRequest) -> bool:
        if decision != "apply":
            return False
        if shown != (asked.owner_id, str(asked.operation_count), asked.digest_prefix):
            raise ApplyAborted(
                "the confirmed owner, operation count or digest is not this plan's "
                "(open the plan's preview again and confirm what it shows)")
        return True

    return confirmed


def retire_record_plan(memory: MemoryDB, owner_id: str, record_id: str, *, reason: str
                       ) -> tuple[Plan, dict[str, Any]]:
    """A validated one-operation ``retire`` plan (and its JSON document) for one active
    record of `owner_id`, bound to its current revision. Reads `memory` only.

    Raises:
        NotFoundError / AmbiguousIdError: no such record of this owner.
        UsageError: already removed, or an empty reason. PlanError: a plan rule broken.
    """
    from wardian.memory.maintenance.single import retire_one
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return retire_one(store, owner_id, record_id, reason=reason)


def revise_scope(value: str | None) -> Scope | None:
    """``--scope`` of ``garden memory revise``: ``agent``, ``workspace`` (the current
    directory's git root) or an absolute workspace path; None keeps the record's scope.

    Raises:
        UsageError (exit 2): any other value.
    """
    from pathlib import Path

    from wardian.app.agent_memory import parse_scope
    from wardian.memory.models import Scope

    if value is not None and value not in ("agent", "workspace") and Path(value).is_absolute():
        return Scope.workspace(value)
    return parse_scope(value)


def revise_record_plan(
    memory: MemoryDB, owner_id: str, record_id: str, *, text: str | None = None,
    kind: str | None = None, scope: Scope | None = None, evidence: str | None = None,
) -> tuple[Plan, dict[str, Any]]:
    """A validated one-operation ``revise`` plan (and its JSON document) for one active
    record of `owner_id`; only the fields given change (`scope` from `revise_scope`).
    Reads `memory` only.

    Raises:
        NotFoundError / AmbiguousIdError; UsageError (removed, nothing to change);
        PlanError (caps, kind, absolute workspace path).
    """
    from wardian.memory.maintenance.single import revise_one
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return revise_one(store, owner_id, record_id, text=text, kind=kind, scope=scope,
                      evidence=evidence)


def stale_retire_plan(owner_id: str, stale: list[StaleRecord], *, review_days: int
                      ) -> dict[str, Any]:
    """A schema-v1 plan retiring the first 100 of `stale` (from
    `wardian.app.garden.stale_checkpoints`), each bound to its current revision, for the
    operator to preview and apply. Pure.

    Raises:
        ValueError: `stale` is empty.
    """
    from wardian.memory.freshness import retire_plan

    return retire_plan(owner_id, stale, review_days=review_days)
