"""One-operation plans for correcting one record without writing JSON.

``wardian garden memory retire ID --agent A --reason R`` and ``wardian garden memory
revise ID --agent A [--text|--kind|--scope|--evidence]`` build a schema-v1 plan with one
``retire`` or ``revise`` operation bound to the record's current revision; it then goes
through exactly what a plan file goes through (`service.preview_plan`, the operator's
confirmation, `service.apply_loaded`: atomic apply and a receipt). The plan id and
idempotency key are derived from the record, its revision and the change, so running the
same command again replays the stored receipt instead of applying twice, and a
``--confirm`` digest shown by one run matches the next.

Text typed on the command line (the reason, the new text or evidence) is scanned for
secrets before any plan exists: a secret there is refused (`SecretDetected`, exit 2) like
``memory save`` refuses one, so neither the preview nor an ``--output`` plan file ever
holds it. (A plan file written elsewhere is previewed, and a secret in it is a conflict.)

Spec: "Operator
maintenance in Garden".
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from wardian.errors import NotFoundError, UsageError
from wardian.memory.maintenance.plan import Plan, check_owner, load_plan_bytes
from wardian.memory.models import Record, Scope
from wardian.memory.secret_scan import check_fields
from wardian.memory.store import MemoryStore

__all__ = ["plan_document", "retire_one", "revise_one"]


def _record(store: MemoryStore, owner_id: str, record_id: str) -> Record:
    record = store.get(record_id, agent_id=None)
    if record.agent_id != owner_id:
        raise NotFoundError(
            f"memory {record.short_id} is not a record of agent {owner_id[:8]}",
            hint="list the agent's records with `wardian garden memory list --agent A`",
        )
    if record.status != "active":
        raise UsageError(f"memory {record.short_id} is already removed",
                         hint="`wardian garden memory history ID` shows its history")
    return record


def plan_document(owner_id: str, verb: str, record: Record, op: dict[str, Any]
                  ) -> dict[str, Any]:
    """The one-operation plan document for `op` on `record` (deterministic). Pure."""
    change = hashlib.sha256(json.dumps(op, sort_keys=True).encode("utf-8")).hexdigest()[:12]
    return {
        "schema_version": 1,
        "plan_id": f"{verb}-{record.short_id}-{record.current_revision_id[:8]}",
        "agent_id": owner_id,
        "idempotency_key": f"garden-{verb}:{record.id}:{record.current_revision_id}:{change}",
        "operations": [op],
    }


def _plan(owner_id: str, document: dict[str, Any]) -> Plan:
    """Validate `document` exactly as a plan file is validated, and bind it to the owner."""
    plan = load_plan_bytes(json.dumps(document, ensure_ascii=False).encode("utf-8"),
                           source="(command line)")
    check_owner(plan, owner_id, source="(command line)")
    return plan


def retire_one(store: MemoryStore, owner_id: str, record_id: str, *, reason: str
               ) -> tuple[Plan, dict[str, Any]]:
    """A validated one-operation ``retire`` plan for one active record of `owner_id`.

    Returns:
        (the plan, its JSON document).

    Raises:
        NotFoundError / AmbiguousIdError: no such record of this owner.
        UsageError: it is already removed, or the reason is empty.
        SecretDetected: the reason holds a secret (exit 2; nothing written, the value is
            not shown).
        PlanError: the operation breaks a plan rule.
    """
    if not reason.strip():
        raise UsageError("--reason must not be empty", hint="say why it is retired")
    check_fields({"reason": reason}, action="garden memory retire")
    record = _record(store, owner_id, record_id)
    op = {"op": "retire", "memory_id": record.id,
          "expected_revision_id": record.current_revision_id, "reason": reason}
    document = plan_document(owner_id, "retire", record, op)
    return _plan(owner_id, document), document


def revise_one(
    store: MemoryStore,
    owner_id: str,
    record_id: str,
    *,
    text: str | None = None,
    kind: str | None = None,
    scope: Scope | None = None,
    evidence: str | None = None,
) -> tuple[Plan, dict[str, Any]]:
    """A validated one-operation ``revise`` plan for one active record of `owner_id`.

    Only the fields given are changed.

    Raises:
        NotFoundError / AmbiguousIdError: no such record of this owner.
        UsageError: it is removed, or nothing to change was given.
        SecretDetected: the new text or evidence holds a secret (exit 2; nothing written,
            the value is not shown).
        PlanError: a field breaks a plan rule (caps, kind, absolute workspace path).
    """
    if text is None and kind is None and scope is None and evidence is None:
        raise UsageError("nothing to revise",
                         hint="pass --text, --kind, --scope or --evidence")
    check_fields({"text": text, "evidence": evidence}, action="garden memory revise")
    record = _record(store, owner_id, record_id)
    op: dict[str, Any] = {"op": "revise", "memory_id": record.id,
                          "expected_revision_id": record.current_revision_id}
    if text is not None:
        op["text"] = text
    if kind is not None:
        op["kind"] = kind
    if scope is not None:
        op["scope"] = scope.to_json()
    if evidence is not None:
        op["evidence_excerpt"] = evidence
    document = plan_document(owner_id, "revise", record, op)
    return _plan(owner_id, document), document
