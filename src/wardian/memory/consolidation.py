"""`memory.commit`: apply a curator's batch to the principal's memory, atomically and once.

DESIGN.md "Blueprints, runs, providers" (`memory.commit`) and spec "Optional consolidation":

* the batch's ``agent_id`` must be the run's principal (else `AuthorityError`, exit 3);
* operations touch only that agent's records (another agent's id is "not found");
* evidence check: an operation whose evidence excerpt does not occur in the archive slice
  the curator was given (after whitespace normalisation) is dropped and reported, never
  committed — saves and updates (the spec's rule) and removes too (every
  operation quotes the archive, so a hallucinated retirement cannot slip through); so
  are operations on missing/removed records and exact duplicates, and saves/updates whose
  text or evidence holds a secret (``secret_detected``, `wardian.memory.secret_scan`);
* every change is revisioned with the run as actor and the evidence excerpt;
* the changes, the consolidation cursor and a receipt (with the digest of the canonical
  batch) commit in ONE transaction;
* replaying the same idempotency key returns the first result and writes nothing; the same
  key with a different batch is refused (`ConflictError`, exit 4) naming both digests;
* an empty batch is valid and still advances the cursor.

Imports nothing above `wardian.config`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from wardian._db import atomic
from wardian._util import utc_now_iso
from wardian.errors import (
    AmbiguousIdError,
    AuthorityError,
    ConflictError,
    NotFoundError,
    ValidationError,
)
from wardian.memory.batch import CommitBatch, RemoveOp, SaveOp, UpdateOp, check_commit_batch
from wardian.memory.models import Scope, Source
from wardian.memory.secret_scan import scan_fields
from wardian.memory.store import MemoryStore

__all__ = [
    "AppliedOp",
    "CheckedOp",
    "CommitResult",
    "DroppedOp",
    "EvidenceSlice",
    "batch_digest",
    "check_operations",
    "commit_batch",
    "evidence_in_archive",
    "evidence_slice",
    "find_duplicate",
    "get_cursor",
    "get_receipt",
    "normalise_whitespace",
    "rewind_cursor",
]


def normalise_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return " ".join(text.split())


def evidence_in_archive(evidence: str, normalised_archive: str) -> bool:
    """Whether `evidence` occurs in the archive text (both whitespace-normalised).

    Args:
        evidence: the excerpt a curator quoted.
        normalised_archive: the archive slice text already passed through
            `normalise_whitespace` (so a batch normalises it once).
    """
    needle = normalise_whitespace(evidence)
    return bool(needle) and needle in normalised_archive


def batch_digest(batch: CommitBatch) -> str:
    """``sha256:<hex>`` of the canonical JSON of `batch` (sorted keys, compact, UTF-8)."""
    canonical = json.dumps(
        batch.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AppliedOp:
    """One committed operation: its index in the batch, what it did, and the new revision."""

    index: int
    op: Literal["save", "update", "remove"]
    memory_id: str
    revision_id: str
    text: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "index": self.index, "op": self.op, "memory_id": self.memory_id,
            "revision_id": self.revision_id, "text": self.text,
        }


@dataclass(frozen=True)
class DroppedOp:
    """One operation that was not committed, with the reason (e.g. evidence not found)."""

    index: int
    op: Literal["save", "update", "remove"]
    reason: str
    code: str
    memory_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "index": self.index, "op": self.op, "code": self.code, "reason": self.reason,
            "memory_id": self.memory_id,
        }


@dataclass(frozen=True)
class CommitResult:
    """What `commit_batch` did; stored as the receipt and returned again on replay.

    Attributes:
        agent_id: the principal.
        idempotency_key: the batch's key.
        batch_digest: ``sha256:`` digest of the canonical batch.
        committed_at: UTC ISO-8601 time of the first commit.
        actor: who committed (``run:<run id>``).
        previous_cursor / cursor: the consolidation cursor before and after.
        applied: the committed operations, in batch order.
        dropped: the operations left out, with reasons.
        replayed: True when this result came from an earlier commit of the same key.
    """

    agent_id: str
    idempotency_key: str
    batch_digest: str
    committed_at: str
    actor: str
    previous_cursor: int | None
    cursor: int | None
    applied: tuple[AppliedOp, ...] = field(default_factory=tuple)
    dropped: tuple[DroppedOp, ...] = field(default_factory=tuple)
    replayed: bool = False

    def counts(self) -> dict[str, int]:
        """How many saves, updates, removes were applied and how many ops were dropped."""
        out = {"save": 0, "update": 0, "remove": 0}
        for applied in self.applied:
            out[applied.op] += 1
        out["dropped"] = len(self.dropped)
        return out

    def summary(self) -> str:
        """One human line, e.g. ``2 saved, 1 updated, 0 removed, 1 dropped; cursor 41``."""
        c = self.counts()
        cursor = "unchanged" if self.cursor is None else str(self.cursor)
        text = (
            f"{c['save']} saved, {c['update']} updated, {c['remove']} removed, "
            f"{c['dropped']} dropped; cursor {cursor}"
        )
        return text + (" (replayed: nothing written)" if self.replayed else "")

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (also the stored receipt)."""
        return {
            "agent_id": self.agent_id,
            "idempotency_key": self.idempotency_key,
            "batch_digest": self.batch_digest,
            "committed_at": self.committed_at,
            "actor": self.actor,
            "previous_cursor": self.previous_cursor,
            "cursor": self.cursor,
            "applied": [a.to_json() for a in self.applied],
            "dropped": [d.to_json() for d in self.dropped],
            "counts": self.counts(),
            "replayed": self.replayed,
        }

    @staticmethod
    def from_json(data: dict[str, Any], *, replayed: bool = False) -> CommitResult:
        """Rebuild a result from `to_json` output (a stored receipt)."""
        return CommitResult(
            agent_id=data["agent_id"],
            idempotency_key=data["idempotency_key"],
            batch_digest=data["batch_digest"],
            committed_at=data["committed_at"],
            actor=data["actor"],
            previous_cursor=data.get("previous_cursor"),
            cursor=data.get("cursor"),
            applied=tuple(
                AppliedOp(a["index"], a["op"], a["memory_id"], a["revision_id"], a.get("text"))
                for a in data.get("applied", [])
            ),
            dropped=tuple(
                DroppedOp(d["index"], d["op"], d["reason"], d["code"], d.get("memory_id"))
                for d in data.get("dropped", [])
            ),
            replayed=replayed,
        )


def get_cursor(store: MemoryStore, agent_id: str) -> int | None:
    """How far `agent_id`'s archive has been consolidated (inclusive seq), or None. Read-only."""
    row = store.conn.execute(
        "SELECT cursor_seq FROM consolidation_cursors WHERE agent_id = ?", (agent_id,)
    ).fetchone()
    return None if row is None else int(row["cursor_seq"])


def rewind_cursor(store: MemoryStore, agent_id: str, cursor_seq: int, *, actor: str) -> None:
    """Set `agent_id`'s consolidation cursor to `cursor_seq` (inclusive seq), even backwards.

    A commit only ever moves the cursor forward; this exists for ``wardian automation
    trial``, which replays an already consolidated session in a *scratch copy* of the
    memory database (`wardian.app.trial`). Never call it on the real store: messages
    behind the cursor would be consolidated a second time.

    Args:
        store: the (scratch) memory store. agent_id: whose cursor.
        cursor_seq: the last seq to count as consolidated (0 = nothing yet).
        actor: recorded as ``updated_by``.
    """
    store.conn.execute(
        "INSERT INTO consolidation_cursors (agent_id, cursor_seq, updated_at, updated_by)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET"
        " cursor_seq = excluded.cursor_seq, updated_at = excluded.updated_at,"
        " updated_by = excluded.updated_by",
        (agent_id, cursor_seq, utc_now_iso(), actor),
    )


def get_receipt(store: MemoryStore, agent_id: str, idempotency_key: str) -> CommitResult | None:
    """The stored result of an earlier commit of this key for this agent, or None. Read-only."""
    row = store.conn.execute(
        "SELECT result_json FROM consolidation_receipts WHERE agent_id = ? AND idempotency_key = ?",
        (agent_id, idempotency_key),
    ).fetchone()
    if row is None:
        return None
    return CommitResult.from_json(json.loads(row["result_json"]), replayed=True)


def _check_replay(
    store: MemoryStore, agent_id: str, key: str, digest: str
) -> CommitResult | None:
    row = store.conn.execute(
        "SELECT batch_digest, result_json FROM consolidation_receipts"
        " WHERE agent_id = ? AND idempotency_key = ?",
        (agent_id, key),
    ).fetchone()
    if row is None:
        return None
    if row["batch_digest"] != digest:
        raise ConflictError(
            f"idempotency key {key!r} was already committed for agent {agent_id[:8]} with "
            f"batch {row['batch_digest']}; this batch is {digest}",
            hint="use a new idempotency key for a different batch",
        )
    return CommitResult.from_json(json.loads(row["result_json"]), replayed=True)


def _resolve_own(store: MemoryStore, memory_id: str, agent_id: str) -> tuple[str | None, str]:
    """(full id, "") for an active record of the agent, else (None, reason code)."""
    try:
        full = store.resolve(memory_id, agent_id=agent_id)
    except AmbiguousIdError:
        return None, "ambiguous_id"
    except NotFoundError:
        return None, "not_found"
    if store.status(full) != "active":
        return full, "already_removed"
    return full, ""


def _target_scope(
    op: SaveOp | UpdateOp, workspace: str, current: Scope | None = None
) -> Scope:
    if op.scope == "agent":
        return Scope.agent()
    if current is not None and current.kind == "workspace" and current.path:
        return current  # a workspace record stays in its own workspace
    return Scope("workspace", workspace)


_DROP_MESSAGES = {
    "evidence_not_found": "its evidence excerpt does not occur in the archive slice",
    "not_found": "memory {id} is not one of this agent's records",
    "ambiguous_id": "memory id {id} matches several of this agent's records",
    "already_removed": "memory {id} is already removed",
    "duplicate": "the same text is already remembered as {id}",
    "over_max_changes": "the batch has more than max_changes operations",
    "already_consolidated": "its evidence is in a part of the archive another run "
                            "consolidated meanwhile",
    "secret_detected": "it holds what looks like a secret ({detail}); nothing of it was "
                       "stored (save where the secret lives instead, never its value)",
}


@dataclass(frozen=True)
class EvidenceSlice:
    """What each operation's evidence must occur in (whitespace-normalised).

    Attributes:
        text: the slice not yet consolidated; None skips the evidence check.
        whole: the whole slice the curator read, when it came from the agent's archive
            (evidence found only in the part consolidated meanwhile is
            ``already_consolidated``); else None.
        previous: the agent's consolidation cursor the slice was cut at, or None.
    """

    text: str | None
    whole: str | None = None
    previous: int | None = None


def evidence_slice(store: MemoryStore, agent_id: str, *, archive_text: str | None = None,
                   archive_messages: Sequence[tuple[int, str]] | None = None) -> EvidenceSlice:
    """The `EvidenceSlice` of a curator batch as of now: `archive_messages` (``(seq,
    text)`` of the agent's archive) cut at the agent's current cursor, else
    `archive_text` as given (None: no evidence check). Read-only; inside a commit's
    transaction it reads the cursor the commit moves from."""
    previous = get_cursor(store, agent_id)
    if archive_messages is None:
        return EvidenceSlice(None if archive_text is None else normalise_whitespace(archive_text),
                             None, previous)
    whole = normalise_whitespace("\n".join(text for _, text in archive_messages))
    fresh = normalise_whitespace("\n".join(
        text for seq, text in archive_messages if previous is None or seq > previous))
    return EvidenceSlice(fresh, whole, previous)


@dataclass(frozen=True)
class CheckedOp:
    """One curator operation after the consolidation checks.

    Attributes:
        index: its position in the batch.
        op: the operation.
        dropped: why it must not be applied, or None.
        memory_id: for an update or remove that passed, the full id of the agent's active
            record it names.
        scope: for a save or update that passed, the scope the record gets.
    """

    index: int
    op: SaveOp | UpdateOp | RemoveOp
    dropped: DroppedOp | None = None
    memory_id: str | None = None
    scope: Scope | None = None


def check_operations(store: MemoryStore, operations: Sequence[SaveOp | UpdateOp | RemoveOp],
                     *, agent_id: str, workspace: str, evidence: EvidenceSlice,
                     max_changes: int | None = None) -> Iterator[CheckedOp]:
    """The consolidation rules, one operation at a time, in batch order: at most
    `max_changes` operations; evidence in the slice (``evidence_not_found``,
    ``already_consolidated``); no secret in text, evidence or reason
    (``secret_detected``); a save not repeating an active record of its scope
    (``duplicate``); an update or remove naming one active record of the agent
    (``not_found``, ``ambiguous_id``, ``already_removed``).

    The one definition of what a curator batch may change: `commit_batch` applies each
    operation that passes before the next is checked (so a repeat of a save in the same
    batch is a duplicate), and review mode's plan drops what a commit would drop
    (`wardian.app.consolidation.build_plan`). Read-only.
    """
    for index, op in enumerate(operations):
        def drop(code: str, memory_id: str | None = None, detail: str = "",
                 index: int = index, op: SaveOp | UpdateOp | RemoveOp = op) -> CheckedOp:
            shown = (memory_id or getattr(op, "memory_id", "") or "")[:8]
            return CheckedOp(index, op, DroppedOp(
                index, op.op, _DROP_MESSAGES[code].format(id=shown, detail=detail), code,
                memory_id))

        if max_changes is not None and index >= max_changes:
            yield drop("over_max_changes")
            continue
        if evidence.text is not None and not evidence_in_archive(op.evidence, evidence.text):
            stale = evidence.whole is not None and evidence_in_archive(op.evidence,
                                                                       evidence.whole)
            yield drop("already_consolidated" if stale else "evidence_not_found")
            continue
        fields = ({"reason": op.reason, "evidence": op.evidence} if isinstance(op, RemoveOp)
                  else {"text": op.text, "evidence": op.evidence})
        if found := scan_fields(fields):
            detail = ", ".join(sorted({f"{f.detector} in {f.field}" for f in found}))
            yield drop("secret_detected", getattr(op, "memory_id", None), detail)
            continue
        if isinstance(op, SaveOp):
            scope = _target_scope(op, workspace)
            duplicate = find_duplicate(store, agent_id, op.text, scope)
            yield (drop("duplicate", duplicate) if duplicate is not None
                   else CheckedOp(index, op, scope=scope))
            continue
        full, problem = _resolve_own(store, op.memory_id, agent_id)
        if problem or full is None:
            yield drop(problem or "not_found", full)
            continue
        yield CheckedOp(index, op, memory_id=full, scope=(
            _target_scope(op, workspace, store.get(full).scope)
            if isinstance(op, UpdateOp) else None))


def commit_batch(
    store: MemoryStore,
    batch: CommitBatch | Mapping[str, Any],
    *,
    principal_agent_id: str,
    actor: str,
    archive_text: str | None = None,
    archive_messages: Sequence[tuple[int, str]] | None = None,
    sources: Sequence[Source] = (),
    max_changes: int | None = None,
) -> CommitResult:
    """Commit a curator batch for its principal in one transaction (atomic, idempotent).

    Args:
        store: the memory store.
        batch: the strict batch; ``batch.workspace`` must be absolute. A mapping (what
            `memory.commit` passes: the run's binding and the curator's operations as the
            step output holds them) is validated here, once, with `check_commit_batch`
            — the commit's own check of the batch, before the write lock is taken (a pure
            check needs no lock, and other writers wait while it is held).
        principal_agent_id: the run's principal (the agent whose session closed).
        actor: recorded on every revision and the cursor, e.g. ``run:<run id>``.
        archive_text: the archive slice the curator was given; each operation's evidence
            must occur in it after whitespace normalisation. ``None`` skips the evidence
            check (only for callers that have no archive by design; `memory.commit` always
            passes the slice, possibly empty).
        archive_messages: instead of `archive_text`, the slice as ``(seq, text)`` pairs of
            the agent's archive. Evidence is then checked, inside the transaction, against
            the messages after the cursor *as it is at commit time*: when another run
            consolidated part of this slice meanwhile, evidence found only in that part is
            dropped (``already_consolidated``), so nothing is consolidated twice.
        sources: links added to every saved/updated record (e.g. the archive seq range).
        max_changes: operations beyond this many are dropped (``over_max_changes``).

    Returns:
        The `CommitResult` (also stored as the receipt). On replay of the same key with
        the same batch, the first result with ``replayed=True`` and nothing written.

    Raises:
        AuthorityError: ``batch.agent_id`` is not the principal (exit 3).
        ConflictError: the key was committed before with a different batch (exit 4).
        ValidationError: the batch does not match `CommitBatch` (a mapping), or the
            workspace is not an absolute path.
        StoreError: the database is busy or broken.
    """
    if not isinstance(batch, CommitBatch):
        batch = check_commit_batch(batch)
    if batch.agent_id != principal_agent_id:
        raise AuthorityError(
            f"memory.commit batch names agent {batch.agent_id!r} but the run's principal is "
            f"{principal_agent_id!r}; a run may only change its own agent's memory",
            hint="set the batch's agent_id to the run's agent",
        )
    if not os.path.isabs(batch.workspace):
        raise ValidationError(
            f"workspace must be an absolute path, got {batch.workspace!r}", path="workspace"
        )
    digest = batch_digest(batch)
    agent_id = batch.agent_id
    replay = _check_replay(store, agent_id, batch.idempotency_key, digest)
    if replay is not None:
        return replay
    with atomic(store.conn):
        # Re-check inside the write lock: a concurrent commit of the same key may have won.
        replay = _check_replay(store, agent_id, batch.idempotency_key, digest)
        if replay is not None:
            return replay
        evidence = evidence_slice(store, agent_id, archive_text=archive_text,
                                  archive_messages=archive_messages)
        previous = evidence.previous
        now = utc_now_iso()
        reason = f"consolidation {batch.idempotency_key}"
        applied: list[AppliedOp] = []
        dropped: list[DroppedOp] = []
        for checked in check_operations(store, batch.operations, agent_id=agent_id,
                                        workspace=batch.workspace, evidence=evidence,
                                        max_changes=max_changes):
            op, index = checked.op, checked.index
            if checked.dropped is not None:
                dropped.append(checked.dropped)
            elif isinstance(op, SaveOp):
                assert checked.scope is not None
                rid = store.insert_in_transaction(
                    agent_id, text=op.text, evidence=op.evidence, kind=op.kind,
                    scope=checked.scope, sources=sources, actor=actor, reason=reason,
                    now=now, reason_checked=True,  # the run's key: Wardian's ids
                )
                applied.append(AppliedOp(index, "save", rid, _current_revision(store, rid),
                                         op.text))
            elif isinstance(op, UpdateOp):
                assert checked.memory_id is not None
                revision = store.update_in_transaction(
                    checked.memory_id, text=op.text, evidence=op.evidence, kind=op.kind,
                    scope=checked.scope, add_sources=sources, actor=actor, reason=reason,
                    now=now, reason_checked=True,
                )
                applied.append(AppliedOp(index, "update", checked.memory_id, revision,
                                         op.text))
            else:
                assert checked.memory_id is not None
                revision = store.update_in_transaction(
                    checked.memory_id, status="removed", removed_reason=op.reason,
                    actor=actor, reason=op.reason, now=now,
                    reason_checked=True,  # scanned by check_operations
                )
                applied.append(AppliedOp(index, "remove", checked.memory_id, revision))

        cursor = previous
        if batch.cursor is not None:
            cursor = batch.cursor if previous is None else max(previous, batch.cursor)
            store.conn.execute(
                "INSERT INTO consolidation_cursors (agent_id, cursor_seq, updated_at, updated_by)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET"
                " cursor_seq = excluded.cursor_seq, updated_at = excluded.updated_at,"
                " updated_by = excluded.updated_by",
                (agent_id, cursor, now, actor),
            )
        result = CommitResult(
            agent_id=agent_id, idempotency_key=batch.idempotency_key, batch_digest=digest,
            committed_at=now, actor=actor, previous_cursor=previous, cursor=cursor,
            applied=tuple(applied), dropped=tuple(dropped),
        )
        store.conn.execute(
            "INSERT INTO consolidation_receipts (agent_id, idempotency_key, batch_digest,"
            " committed_at, result_json) VALUES (?, ?, ?, ?, ?)",
            (agent_id, batch.idempotency_key, digest, now,
             json.dumps(result.to_json(), ensure_ascii=False)),
        )
    return result


def _current_revision(store: MemoryStore, record_id: str) -> str:
    return store.current_revision(record_id)


def find_duplicate(store: MemoryStore, agent_id: str, text: str, scope: Scope) -> str | None:
    """The id of an active record of the agent in `scope` with the same text (case and
    whitespace ignored), or None: a save of it would be a duplicate (dropped by
    `commit_batch`, and by the review-mode plan so the two agree)."""
    wanted = normalise_whitespace(text).casefold()
    for record_id, stored in store.active_texts(agent_id, scope):
        if normalise_whitespace(stored).casefold() == wanted:
            return record_id
    return None
