"""Errors of reviewed maintenance; each says what failed, where, and how to fix it.

Tree (under `wardian.errors`)::

    UsageError
    ├── ValidationError
    │   └── PlanError              (wardian.memory.maintenance.plan) malformed plan, exit 2
    ├── PreviewRequired            no cached preview of this digest ("preview first"), exit 2
    └── ConfirmationMismatch       --confirm does not equal the digest prefix, exit 2
    WardianError
    └── ApplyAborted               the operator declined: zero changes, exit 1
    AuthorityError
    └── TerminalRequired           no controlling terminal to ask on: zero changes, exit 3
    ConflictError
    ├── PreviewConflicted          the cached preview has conflicts: apply disabled, exit 4
    ├── RevisionConflict           conflicts found under BEGIN IMMEDIATE at apply, exit 4
    └── IdempotencyKeyReused       same key, different plan contents (both digests), exit 4
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wardian.errors import AuthorityError, ConflictError, UsageError, WardianError

if TYPE_CHECKING:
    from wardian.memory.maintenance.preview import Conflict

__all__ = [
    "ApplyAborted",
    "ConfirmationMismatch",
    "IdempotencyKeyReused",
    "PreviewConflicted",
    "PreviewRequired",
    "RevisionConflict",
    "TerminalRequired",
]


class PreviewRequired(UsageError):
    """Apply needs a cached preview of the same digest ("preview first")."""

    def __init__(self, owner_id: str, digest: str) -> None:
        self.owner_id = owner_id
        self.digest = digest
        super().__init__(
            f"preview first: no cached preview of this plan ({digest[:19]}) "
            f"for owner {owner_id}",
            hint="run `wardian garden maintain preview PLAN --agent AGENT`, review it, "
            "then apply",
        )


class PreviewConflicted(ConflictError):
    """The cached preview of this digest has conflicts, so apply is disabled (exit 4)."""

    def __init__(self, owner_id: str, digest: str, conflicts: int) -> None:
        self.owner_id = owner_id
        self.digest = digest
        self.conflicts = conflicts
        super().__init__(
            f"the preview of this plan ({digest[:19]}) for owner {owner_id} has "
            f"{conflicts} conflict(s); apply is disabled and nothing was changed",
            hint="update the plan to the current revisions (`wardian garden memory history "
            "ID`), then run `wardian garden maintain preview` again",
        )


class ConfirmationMismatch(UsageError):
    """``--confirm`` was given but does not equal ``sha256:`` + the digest's first 12 hex.

    The message names the value given, never the right digest: the digest is read from
    the preview the operator reviewed, not from an error a caller can provoke.
    """

    def __init__(self, given: str, expected: str) -> None:
        self.given = given
        self.expected = expected
        super().__init__(
            f"--confirm {given!r} does not match the digest of this plan's preview",
            hint="preview the plan again and pass the digest that preview shows",
        )


class ApplyAborted(WardianError):
    """The operator declined (or the dialog's values were not the plan's); nothing was
    changed.

    A failed apply like any other: the cached preview is cleared (spec "Recovery after
    conflict").
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            f"apply aborted: {reason}; nothing was changed",
            hint="the cached preview was cleared: preview the plan again, then apply it and "
            "answer yes on the terminal",
        )


TERMINAL_WAYS = (
    "run the command in a terminal and answer its question there, or apply the plan in "
    "Garden (`wardian garden serve`, then Maintain memory…)"
)
"""How an operator applies a plan when a command had no terminal to ask on."""


class TerminalRequired(AuthorityError):
    """A change that needs the operator's confirmation found no controlling terminal to
    ask on (exit 3, fail closed). Neither stdin nor ``--confirm`` stands in for the
    question: a script or an agent cannot answer for the operator. Nothing was changed.
    """

    def __init__(self, what: str, detail: str, *, ways: str = TERMINAL_WAYS) -> None:
        self.what = what
        super().__init__(
            f"{what} needs the operator to confirm on the controlling terminal, and this "
            f"process has none ({detail}); nothing was changed",
            hint=ways,
        )


class RevisionConflict(ConflictError):
    """Re-verification under ``BEGIN IMMEDIATE`` found conflicts; everything rolled back."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        first = conflicts[0].describe()
        more = f" (+{len(conflicts) - 1} more conflict(s))" if len(conflicts) > 1 else ""
        super().__init__(
            f"apply rolled back, nothing was changed: {first}{more}",
            hint="the cached preview was cleared; update the plan and preview again",
        )


class IdempotencyKeyReused(ConflictError):
    """The idempotency key already committed a plan with a different digest."""

    def __init__(self, key: str, stored_digest: str, new_digest: str) -> None:
        self.key = key
        self.stored_digest = stored_digest
        self.new_digest = new_digest
        super().__init__(
            f"idempotency_key {key!r} already committed a plan with digest {stored_digest}; "
            f"this plan's digest is {new_digest}",
            hint="use a new idempotency_key for a different plan, or "
            "`wardian garden maintain check-receipt` to see the committed one",
        )
