"""Read-only preview of a maintenance plan: canonical digest, Before/After, conflicts.

Spec: "Operator maintenance in Garden" → "Import and preview" and "Handling revision
conflicts". Nothing here writes: `build_preview` only runs SELECTs on the `MemoryStore`
connection, so ``memory.db`` is byte-identical before and after a preview.

Canonical form and digest
-------------------------
``preview_digest = "sha256:" + sha256(canonical_bytes).hexdigest()`` where::

    canonical_bytes = json.dumps(canonical, sort_keys=True, separators=(",", ":"),
                                 ensure_ascii=False).encode("utf-8")
    canonical = {
        "schema_version": 1,
        "plan_id": <plan_id>,
        "owner_id": <the owner's agent id>,
        "idempotency_key": <idempotency_key>,
        "operations": [<normalised operation>, ...],          # plan order kept
        "expected_revisions": {<memory_id>: <expected_revision_id>, ...},
    }

A normalised operation holds ``op`` and only the fields the plan gave (absent optional
fields are omitted, never ``null``): strings verbatim (texts are not trimmed); a scope as
``{"kind":"agent"}`` or ``{"kind":"workspace","path":normpath(path)}``; sources as
``{"source_type","locator","primary"}`` with type and locator trimmed, de-duplicated on
(type, locator) in first-seen order (a repeat only upgrades ``primary``), and the list
omitted when empty. The digest depends on the plan only, never on the database, so the same
plan always has the same digest; the expected revisions it binds make a stale plan visible
as conflicts. The confirmation shows ``sha256:`` + the first 12 hex digits.

Conflicts (per operation): ``target_missing`` (no such record of this owner),
``already_retired`` (its status is ``removed``), ``revision_changed`` (its current revision
is not ``expected_revision_id``; both are reported), ``secret_detected`` (a create's or
revise's text, evidence or source locator holds what the shared scanner,
`wardian.memory.secret_scan`, calls a secret; the detector and field are named, never the
value). A ``retire_into`` recipient named by ``target_memory_id`` must exist and be active
too. Any conflict disables apply. Before/After texts in the preview document have secret
values replaced by ``[REDACTED:<kind>]`` (the document is shown and cached).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from wardian.memory.maintenance.plan import (
    CreateOp,
    Plan,
    PlanError,
    RetireIntoOp,
    RetireOp,
    ReviseOp,
)
from wardian.memory.models import MAX_SOURCES, Record, Scope, Source
from wardian.memory.store import MemoryStore, normalise_sources

__all__ = [
    "Conflict",
    "Preview",
    "RecordChange",
    "build_preview",
    "canonical_form",
    "compute_digest",
    "digest_prefix",
]

ConflictKind = Literal["revision_changed", "target_missing", "already_retired",
                       "secret_detected"]


def _sources_json(sources: tuple[Source, ...] | list[Source]) -> list[dict[str, Any]]:
    return [s.to_json() for s in sources]


def _normal_sources(sources: list[Any]) -> tuple[Source, ...]:
    return normalise_sources((), [s.to_source() for s in sources])


def _normal_op(op: ReviseOp | CreateOp | RetireOp | RetireIntoOp) -> dict[str, Any]:
    out: dict[str, Any] = {"op": op.op}
    if isinstance(op, CreateOp):
        out.update(
            client_key=op.client_key, text=op.text, kind=op.kind,
            scope=op.scope.to_scope().to_json(), evidence_excerpt=op.evidence_excerpt,
        )
        if op.sources:
            out["sources"] = _sources_json(_normal_sources(op.sources))
        return out
    out.update(memory_id=op.memory_id, expected_revision_id=op.expected_revision_id)
    if isinstance(op, ReviseOp):
        for name in ("text", "kind", "evidence_excerpt"):
            if getattr(op, name) is not None:
                out[name] = getattr(op, name)
        if op.scope is not None:
            out["scope"] = op.scope.to_scope().to_json()
        if op.add_sources:
            out["add_sources"] = _sources_json(_normal_sources(op.add_sources))
    elif isinstance(op, RetireOp):
        out["reason"] = op.reason
    else:
        for name in ("target_memory_id", "target_client_key", "reason"):
            if getattr(op, name) is not None:
                out[name] = getattr(op, name)
    return out


def canonical_form(plan: Plan, owner_id: str) -> dict[str, Any]:
    """The canonical document the digest is computed over (see the module docstring). Pure."""
    expected = {
        op.memory_id: op.expected_revision_id
        for op in plan.operations if not isinstance(op, CreateOp)
    }
    return {
        "schema_version": 1,
        "plan_id": plan.plan_id,
        "owner_id": owner_id,
        "idempotency_key": plan.idempotency_key,
        "operations": [_normal_op(op) for op in plan.operations],
        "expected_revisions": expected,
    }


def compute_digest(plan: Plan, owner_id: str) -> str:
    """``sha256:<64 hex>`` over the canonical form of `plan` for `owner_id`. Pure."""
    encoded = json.dumps(
        canonical_form(plan, owner_id), sort_keys=True, separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


def digest_prefix(digest: str) -> str:
    """The confirmation form: ``sha256:`` + the first 12 hex digits."""
    return digest[: len("sha256:") + 12]


@dataclass(frozen=True)
class Conflict:
    """One conflict found for one operation (spec "Handling revision conflicts")."""

    operation: int
    kind: ConflictKind
    memory_id: str
    field: str
    expected_revision_id: str | None = None
    current_revision_id: str | None = None
    detector: str | None = None

    @property
    def path(self) -> str:
        """The JSON path of the field in conflict, e.g. ``operations[2].memory_id``."""
        return f"operations[{self.operation}].{self.field}"

    def describe(self) -> str:
        """One line: what conflicts, where, and how to fix it."""
        if self.kind == "revision_changed":
            return (
                f"{self.path}: revision_changed: memory {self.memory_id} is at revision "
                f"{self.current_revision_id}, the plan expects {self.expected_revision_id} "
                "(re-read it with `wardian garden memory history` and update the plan)"
            )
        if self.kind == "secret_detected":
            return (
                f"{self.path}: secret_detected: {self.detector} (the value is not shown); "
                "a plan may not store a secret: write where it lives instead (e.g. \"the key "
                "is in 1Password item X\") and preview again"
            )
        if self.kind == "target_missing":
            return (
                f"{self.path}: target_missing: memory {self.memory_id} is not a record of "
                "this owner (check the id with `wardian garden memory list --all`)"
            )
        return (
            f"{self.path}: already_retired: memory {self.memory_id} is already removed "
            "(drop this operation from the plan)"
        )

    def to_json(self) -> dict[str, Any]:
        """The conflict as a JSON-ready dict."""
        return {
            "operation": self.operation, "path": self.path, "kind": self.kind,
            "memory_id": self.memory_id, "expected_revision_id": self.expected_revision_id,
            "current_revision_id": self.current_revision_id, "detector": self.detector,
        }


@dataclass
class RecordChange:
    """The net change to one record after the whole plan: what apply writes.

    ``memory_id`` is set for existing records, ``client_key`` for creates.
    """

    memory_id: str | None
    client_key: str | None
    before: Record | None
    text: str
    kind: Literal["stable", "current"]
    scope: Scope
    evidence: str
    sources: tuple[Source, ...]
    status: Literal["active", "removed"]
    removed_reason: str | None
    additions: list[Source] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    absorbs: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The After summary (text, kind, scope, evidence, status, sources)."""
        return {
            "text": self.text, "kind": self.kind, "scope": self.scope.to_json(),
            "evidence": self.evidence, "status": self.status,
            "removed_reason": self.removed_reason, "sources": _sources_json(self.sources),
        }


def _before(record: Record) -> dict[str, Any]:
    return {
        "text": record.text, "kind": record.kind, "scope": record.scope.to_json(),
        "evidence": record.evidence, "status": record.status,
        "removed_reason": record.removed_reason, "sources": _sources_json(record.sources),
        "revision_id": record.current_revision_id,
    }


@dataclass
class Preview:
    """The result of `build_preview`: digest, counts, entries, conflicts and net changes."""

    owner_id: str
    plan_id: str
    idempotency_key: str
    digest: str
    counts: dict[str, int]
    entries: list[dict[str, Any]]
    conflicts: list[Conflict]
    changes: list[RecordChange]
    existing_receipt: dict[str, Any] | None = None

    @property
    def conflict_free(self) -> bool:
        """True when no operation conflicts (apply is allowed)."""
        return not self.conflicts

    def to_json(self) -> dict[str, Any]:
        """The preview as a JSON document (``garden maintain preview --json``)."""
        absorbed = [
            {"memory_id": e["memory_id"], "into": e["into"]}
            for e in self.entries if e["op"] == "retire_into"
        ]
        retired = [e["memory_id"] for e in self.entries if e["op"] == "retire"]
        recipients = [
            {
                "memory_id": c.memory_id, "client_key": c.client_key, "absorbs": c.absorbs,
                "source_additions": _sources_json(
                    [s for s in c.sources if c.before is None or s not in c.before.sources]
                ),
            }
            for c in self.changes if c.absorbs
        ]
        return {
            "owner_id": self.owner_id,
            "plan_id": self.plan_id,
            "idempotency_key": self.idempotency_key,
            "preview_digest": self.digest,
            "digest_prefix": digest_prefix(self.digest),
            "operation_count": sum(self.counts.values()),
            "counts": self.counts,
            "conflict_free": self.conflict_free,
            "conflicts": [c.to_json() for c in self.conflicts],
            "existing_receipt": self.existing_receipt,
            "entries": self.entries,
            "retired": retired,
            "absorbed": absorbed,
            "recipients": recipients,
        }


def _load_records(store: MemoryStore, ids: list[str], owner_id: str) -> dict[str, Record]:
    found: dict[str, Record] = {}
    for record_id in dict.fromkeys(ids):
        record = store.owned_record(record_id, owner_id)
        if record is not None:
            found[record_id] = record
    return found


def _change_for(record: Record) -> RecordChange:
    return RecordChange(
        memory_id=record.id, client_key=None, before=record, text=record.text,
        kind=record.kind, scope=record.scope, evidence=record.evidence,
        sources=record.sources, status=record.status, removed_reason=record.removed_reason,
    )


def _add_sources(change: RecordChange, additions: list[Source]) -> list[Source]:
    """Merge `additions` into `change`; return the ones that were new (type, locator)."""
    seen = {(s.source_type, s.locator) for s in change.sources}
    new = [s for s in normalise_sources((), additions) if (s.source_type, s.locator) not in seen]
    change.additions.extend(additions)
    change.sources = normalise_sources(change.sources, additions)
    return new


def build_preview(plan: Plan, store: MemoryStore, owner_id: str) -> Preview:
    """Preview `plan` for `owner_id` against `store`. Read-only (SELECTs only).

    Args:
        plan: a validated plan already bound to `owner_id` (`check_owner`).
        store: the memory store; may be inside the caller's transaction (apply re-verifies
            with the same function under ``BEGIN IMMEDIATE``).
        owner_id: the owner's agent id.

    Returns:
        The `Preview`: digest, counts by kind, an entry per operation with Before/After and
        source additions, conflicts, and the net `RecordChange` per touched record.

    Raises:
        PlanError: a record would exceed 64 sources after the plan's additions.
    """
    ids: list[str] = []
    for op in plan.operations:
        if not isinstance(op, CreateOp):
            ids.append(op.memory_id)
        if isinstance(op, RetireIntoOp) and op.target_memory_id is not None:
            ids.append(op.target_memory_id)
    records = _load_records(store, ids, owner_id)

    conflicts: list[Conflict] = []
    changes: dict[str, RecordChange] = {}
    creates: dict[str, RecordChange] = {}
    counts = {"revise": 0, "create": 0, "retire": 0, "retire_into": 0}
    entries: list[dict[str, Any]] = []

    def check(index: int, memory_id: str, expected: str | None, name: str) -> bool:
        record = records.get(memory_id)
        if record is None:
            conflicts.append(Conflict(index, "target_missing", memory_id, name, expected))
            return False
        if record.status != "active":
            conflicts.append(Conflict(
                index, "already_retired", memory_id, name, expected, record.current_revision_id
            ))
            return False
        if expected is not None and record.current_revision_id != expected:
            conflicts.append(Conflict(
                index, "revision_changed", memory_id, name, expected,
                record.current_revision_id,
            ))
            return False
        return True

    def change(memory_id: str) -> RecordChange:
        if memory_id not in changes:
            changes[memory_id] = _change_for(records[memory_id])
        return changes[memory_id]

    # Creates first, so retire_into may name a client_key that appears later in the plan.
    for op in plan.operations:
        if isinstance(op, CreateOp):
            scope = op.scope.to_scope()
            created = RecordChange(
                memory_id=None, client_key=op.client_key, before=None, text=op.text,
                kind=op.kind, scope=scope, evidence=op.evidence_excerpt, sources=(),
                status="active", removed_reason=None, roles=["create"],
                reasons=[f"create {op.client_key}"],
            )
            _add_sources(created, [s.to_source() for s in op.sources])
            creates[op.client_key] = created

    for index, op in enumerate(plan.operations):
        counts[op.op] += 1
        entry: dict[str, Any] = {"index": index, "op": op.op}
        entries.append(entry)
        if isinstance(op, CreateOp):
            entry.update(client_key=op.client_key, before=None)
            entry["source_additions"] = _sources_json(_normal_sources(op.sources))
            continue
        entry["memory_id"] = op.memory_id
        entry["expected_revision_id"] = op.expected_revision_id
        record = records.get(op.memory_id)
        entry["before"] = _before(record) if record else None
        ok = check(index, op.memory_id, op.expected_revision_id, "memory_id")
        if isinstance(op, RetireIntoOp):
            into = op.target_memory_id or f"client_key:{op.target_client_key}"
            entry["into"] = into
            if op.target_memory_id is not None:
                ok = check(index, op.target_memory_id, None, "target_memory_id") and ok
        if not ok:
            entry["source_additions"] = []
            continue
        target = change(op.memory_id)
        if isinstance(op, ReviseOp):
            target.roles.append("revise")
            target.reasons.append("revise")
            if op.text is not None:
                target.text = target.fields["text"] = op.text
            if op.kind is not None:
                target.kind = target.fields["kind"] = op.kind
            if op.scope is not None:
                target.scope = target.fields["scope"] = op.scope.to_scope()
            if op.evidence_excerpt is not None:
                target.evidence = target.fields["evidence"] = op.evidence_excerpt
            new = _add_sources(target, [s.to_source() for s in op.add_sources])
            entry["source_additions"] = _sources_json(new)
        elif isinstance(op, RetireOp):
            target.roles.append("retire")
            shown = _redacted_reason(op.reason)
            target.status, target.removed_reason = "removed", shown
            target.reasons.append(shown)
            entry["reason"] = shown
            entry["source_additions"] = []
        else:
            target.roles.append("retire_into")
            reason = _redacted_reason(op.reason or f"retired into {entry['into']}")
            target.status, target.removed_reason = "removed", reason
            target.reasons.append(reason)
            entry["reason"] = reason
            if op.target_memory_id is not None:
                recipient = change(op.target_memory_id)
            else:
                recipient = creates[str(op.target_client_key)]
            recipient.absorbs.append(op.memory_id)
            if "absorb" not in recipient.roles:
                recipient.roles.append("absorb")
            moved = [s._replace(primary=False) for s in target.sources]
            entry["source_additions"] = _sources_json(_add_sources(recipient, moved))

    conflicts.extend(_secret_conflicts(plan))
    for index, op in enumerate(plan.operations):
        if isinstance(op, CreateOp):
            entries[index]["after"] = creates[op.client_key].summary()
        else:
            done = changes.get(op.memory_id)
            entries[index]["after"] = done.summary() if done else None
        for side in ("before", "after"):
            entries[index][side] = _redacted(entries[index][side])

    ordered = [*creates.values(), *changes.values()]
    for item in ordered:
        if item.absorbs:
            item.reasons.append("absorbed sources from " + ", ".join(item.absorbs))
        if len(item.sources) > MAX_SOURCES:
            name = item.memory_id or f"client_key {item.client_key}"
            raise PlanError([(
                _first_path(plan, item),
                f"record {name} would hold {len(item.sources)} sources after this plan; "
                f"the limit is {MAX_SOURCES} (split the retire_into operations or drop "
                "some add_sources)",
            )])
    return Preview(
        owner_id=owner_id, plan_id=plan.plan_id, idempotency_key=plan.idempotency_key,
        digest=compute_digest(plan, owner_id), counts=counts, entries=entries,
        conflicts=conflicts, changes=ordered,
    )


def _secret_conflicts(plan: Plan) -> list[Conflict]:
    """A ``secret_detected`` conflict for each field holding a secret: a create's or
    revise's text, evidence and source locators, a retire's reason."""
    from wardian.memory.secret_scan import scan_fields

    out: list[Conflict] = []
    for index, op in enumerate(plan.operations):
        if isinstance(op, CreateOp):
            subject = f"client_key:{op.client_key}"
            fields: dict[str, str | None] = {"text": op.text,
                                             "evidence_excerpt": op.evidence_excerpt}
            fields.update({f"sources[{i}].locator": s.locator
                           for i, s in enumerate(op.sources)})
        elif isinstance(op, ReviseOp):
            subject = op.memory_id
            fields = {"text": op.text, "evidence_excerpt": op.evidence_excerpt}
            fields.update({f"add_sources[{i}].locator": s.locator
                           for i, s in enumerate(op.add_sources)})
        else:  # retire, retire_into: the reason is kept in the history
            subject = op.memory_id
            fields = {"reason": op.reason}
        for finding in scan_fields(fields):
            out.append(Conflict(index, "secret_detected", subject, finding.field,
                                detector=finding.detector))
    return out


def _redacted_reason(reason: str) -> str:
    """A retire reason as the preview shows and caches it: secret values replaced (the
    operation is a ``secret_detected`` conflict then, so apply is disabled)."""
    from wardian.memory.secret_scan import redact

    return redact(reason)[0]


def _redacted(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """A Before/After summary with secret values replaced (the preview is shown and
    cached; a secret must appear in neither)."""
    if summary is None:
        return None
    from wardian.memory.secret_scan import redact

    out = dict(summary)
    out["text"] = redact(summary["text"])[0]
    out["evidence"] = redact(summary["evidence"])[0]
    out["sources"] = [{**s, "locator": redact(s["locator"])[0]} for s in summary["sources"]]
    return out


def _first_path(plan: Plan, item: RecordChange) -> str:
    for index, op in enumerate(plan.operations):
        if isinstance(op, CreateOp) and op.client_key == item.client_key:
            return f"operations[{index}]"
        if not isinstance(op, CreateOp) and item.memory_id in {
            op.memory_id, getattr(op, "target_memory_id", None)
        }:
            return f"operations[{index}]"
    return "operations"
