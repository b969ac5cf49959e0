"""An agent's memory out and back in: a lossless JSON export and a readable Markdown one.

`export_document` is the lossless form (``format: wardian-memory-export``, version 1):
every record of the agent — removed ones too — with its current state, its sources in
order, and every revision (ids, sequence, full snapshot, actor, reason, time).
`restore_document` reads it back into a store that has none of those ids: the same record
ids, revision ids, current revisions, sources and times, under the owner it is restored
for (a fresh store registers the agent anew, so its id may differ from the export's).
`render_markdown` is for people: a one-way report, never read back (its header says so and
`is_markdown_report` lets importers refuse it): records grouped by scope, then kind, each
with its id8 and its absolute UTC time; removed records last; optionally every revision.
The same memory always renders to the same bytes (no export time, no relative ages).

Spec: CLI.md ``garden memory export`` (round trip); DESIGN.md "Storage" (records, revisions).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from wardian._db import atomic
from wardian._util import parse_utc, utc_now_iso
from wardian.errors import ConflictError, ValidationError, WardianError
from wardian.memory.models import KINDS, check_caps
from wardian.memory.store import MemoryStore

__all__ = [
    "EXPORT_FORMAT",
    "REPORT_MARKER",
    "RestoreAborted",
    "RestoreResult",
    "document_digest",
    "export_document",
    "is_markdown_report",
    "load_export",
    "render_markdown",
    "restore_conflicts",
    "restore_document",
]

EXPORT_FORMAT = "wardian-memory-export"
EXPORT_VERSION = 1
MAX_EXPORT_BYTES = 256 * 1024 * 1024
"""An export file larger than this is refused (100k records with history fit well)."""
REPORT_MARKER = "<!-- wardian-memory-report"
"""The line that opens the header of every Markdown export (`render_markdown`)."""


def export_document(store: MemoryStore, agent_id: str, agent_name: str) -> dict[str, Any]:
    """The agent's whole memory as one JSON-ready document. Read-only."""
    records = []
    for record in sorted(store.list(agent_id, include_removed=True),
                         key=lambda r: (r.created_at, r.id)):
        doc = record.to_json()
        doc["revisions"] = [r.to_json() for r in store.history(record.id, agent_id=agent_id)]
        records.append(doc)
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": utc_now_iso(),
        "agent": {"id": agent_id, "name": agent_name},
        "records": records,
    }


def document_digest(raw: bytes) -> str:
    """``sha256:`` + the first 12 hex of the export file's bytes (what a restore confirms)."""
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:12]


def _stamp(stamp: str) -> str:
    """A stored time as ISO-8601 UTC to the second (``2026-12-07T01:22:03Z``)."""
    try:
        return parse_utc(stamp).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return stamp


def is_markdown_report(text: str) -> bool:
    """True when `text` is a Markdown export (`render_markdown`): its header opens with
    `REPORT_MARKER` within the first lines. Importers refuse it: it is a one-way report."""
    return any(line.startswith(REPORT_MARKER) for line in text.splitlines()[:5])


def _one_line(text: str) -> str:
    return " ⏎ ".join(part.strip() for part in str(text).strip().splitlines())


def render_markdown(doc: dict[str, Any], *, include_history: bool = False) -> str:
    """The export as a Markdown report: scope, then kind, then newest first; ids and UTC
    times shown. Deterministic: the same records give the same bytes.

    The header says it is a one-way report and names the JSON export as the backup
    format; importers recognise it (`is_markdown_report`) and refuse it.

    Args:
        doc: an `export_document` document.
        include_history: list every revision under its record.
    """
    agent = doc["agent"]
    records = doc["records"]
    lines = [f"# Memory of {agent['name']}", "",
             f"{REPORT_MARKER} v1: one-way report, not importable -->",
             "> A one-way report for reading, not a backup: Wardian does not import it. "
             "The backup",
             f"> format is JSON: `wardian garden memory export --agent {agent['name']} "
             "--format json --output FILE`,",
             "> restored with `wardian garden memory import FILE --agent NAME --format json`.",
             "",
             f"Agent {agent['name']} · owner {agent['id']} · {len(records)} record(s) · "
             "times in UTC", ""]

    def scope_title(scope: dict[str, Any]) -> str:
        return "Agent scope" if scope["kind"] == "agent" else f"Workspace {scope['path']}"

    active = [r for r in records if r["status"] == "active"]
    removed = [r for r in records if r["status"] != "active"]
    scopes = sorted({scope_title(r["scope"]) for r in active},
                    key=lambda t: (t != "Agent scope", t))

    def entry(record: dict[str, Any]) -> Iterable[str]:
        tail = f" (removed: {record['removed_reason']})" if record.get("removed_reason") else ""
        yield (f"- {_one_line(record['text'])} — `{record['id'][:8]}` · "
               f"updated {_stamp(record['updated_at'])}{tail}")
        if include_history:
            for rev in record.get("revisions", []):
                reason = f" · reason: {rev['reason']}" if rev.get("reason") else ""
                snap = rev["snapshot"]
                yield (f"  - #{rev['seq']} `{rev['revision_id'][:8]}` {_stamp(rev['created_at'])} "
                       f"{rev['actor']}{reason}: {snap['status']} · {snap['kind']} · "
                       f"{_one_line(snap['text'])}")

    def newest(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(items, key=lambda r: (r["updated_at"], r["id"]), reverse=True)

    for title in scopes:
        lines += [f"## {title}", ""]
        for kind in KINDS:
            group = [r for r in active if scope_title(r["scope"]) == title and r["kind"] == kind]
            if group:
                lines += [f"### {kind.capitalize()}", ""]
                for record in newest(group):
                    lines.extend(entry(record))
                lines.append("")
    if removed:
        lines += ["## Removed", ""]
        for record in newest(removed):
            lines.extend(entry(record))
        lines.append("")
    if not records:
        lines += ["(no memory records)", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- restore ------------------------------------------------------------------------------


class RestoreAborted(WardianError):
    """The operator declined the restore (exit 1); nothing was written."""

    def __init__(self, reason: str, digest: str) -> None:
        self.digest = digest
        super().__init__(f"restore aborted: {reason}; nothing was changed",
                         hint="run the import again and answer yes on the terminal")


@dataclass(frozen=True)
class RestoreResult:
    """What `restore_document` wrote: record and revision counts, and the owner."""

    owner_id: str
    records: int
    revisions: int
    flagged: list[tuple[str, str]] = field(default_factory=list)
    """(record id, ``secret_detected: <detector> in <field>, ...``) of each record set
    aside for a secret (never the value)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"owner_id": self.owner_id, "records": self.records, "revisions": self.revisions,
                "flagged": [{"id": rid, "flagged": why} for rid, why in self.flagged]}


def _set_aside(record: dict[str, Any], where: str) -> tuple[dict[str, Any], str | None]:
    """The record with every secret value in its fields, source locators, revision
    snapshots and reasons replaced by ``[REDACTED:<kind>]``, and the flag to store
    (``secret_detected: <detector> in <field>, ...``), or None when it holds none."""
    from wardian.memory.secret_scan import redact, redact_value, scan

    found: set[str] = set()

    def clean(text: str | None, path: str) -> str | None:
        if not text:
            return text
        found.update(f"{f.detector} in {where}{path}" for f in scan(text))
        return redact(text)[0]

    out = dict(record)
    out["text"] = clean(record["text"], "text")
    out["evidence"] = clean(record["evidence"], "evidence")
    out["removed_reason"] = clean(record.get("removed_reason"), "removed_reason")
    out["sources"] = [{**s, "locator": clean(s["locator"], f"sources[{i}].locator")}
                      for i, s in enumerate(record["sources"])]
    revisions = []
    for j, rev in enumerate(record["revisions"]):
        snapshot, count = redact_value(rev["snapshot"])
        if count:
            found.update(f"{f.detector} in {where}revisions[{j}].snapshot"
                         for f in _scan_strings(rev["snapshot"], scan))
        revisions.append({**rev, "snapshot": snapshot,
                          "reason": clean(rev.get("reason"), f"revisions[{j}].reason")})
    out["revisions"] = revisions
    return out, ("secret_detected: " + ", ".join(sorted(found))) if found else None


def _scan_strings(value: Any, scan: Any) -> list[Any]:
    if isinstance(value, str):
        return list(scan(value))
    if isinstance(value, dict):
        return [f for item in value.values() for f in _scan_strings(item, scan)]
    if isinstance(value, list):
        return [f for item in value for f in _scan_strings(item, scan)]
    return []


def _problem(path: str, message: str, source: str | None) -> ValidationError:
    return ValidationError(message, path=path, source=source,
                           hint="pass a file written by `wardian garden memory export "
                           "--format json`")


def _text(obj: dict[str, Any], key: str, path: str, source: str | None, *,
          optional: bool = False) -> Any:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not value and not optional):
        raise _problem(f"{path}.{key}", f"expected a non-empty string, got {value!r:.60}",
                       source)
    return value


def load_export(raw: bytes, *, source: str | None = None) -> dict[str, Any]:
    """Parse and check an export file's bytes. Touches no database.

    Raises:
        ValidationError (exit 2): not JSON, another format or version, or a field of the
            wrong shape (named by its JSON path).
    """
    if len(raw) > MAX_EXPORT_BYTES:
        raise _problem("$", f"the file is {len(raw):,} bytes; the limit is "
                       f"{MAX_EXPORT_BYTES:,}", source)
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _problem("$", f"not valid JSON ({exc})", source) from exc
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise _problem("format", f"expected format {EXPORT_FORMAT!r}", source)
    if doc.get("version") != EXPORT_VERSION:
        raise _problem("version", f"expected version {EXPORT_VERSION}, got "
                       f"{doc.get('version')!r}", source)
    records = doc.get("records")
    if not isinstance(records, list):
        raise _problem("records", "expected a list", source)
    for i, record in enumerate(records):
        where = f"records[{i}]"
        if not isinstance(record, dict):
            raise _problem(where, "expected an object", source)
        for key in ("id", "text", "evidence", "created_at", "updated_at",
                    "current_revision_id"):
            _text(record, key, where, source)
        _text(record, "removed_reason", where, source, optional=True)
        if record.get("kind") not in KINDS:
            raise _problem(f"{where}.kind", "expected stable or current", source)
        if record.get("status") not in ("active", "removed"):
            raise _problem(f"{where}.status", "expected active or removed", source)
        scope = record.get("scope")
        if not isinstance(scope, dict) or scope.get("kind") not in ("agent", "workspace") or (
                scope["kind"] == "workspace" and not isinstance(scope.get("path"), str)):
            raise _problem(f"{where}.scope", 'expected {"kind": "agent"} or '
                           '{"kind": "workspace", "path": ABS}', source)
        sources = record.get("sources")
        if not isinstance(sources, list) or not all(
                isinstance(s, dict) and isinstance(s.get("source_type"), str)
                and isinstance(s.get("locator"), str) for s in sources):
            raise _problem(f"{where}.sources", "expected a list of {source_type, locator, "
                           "primary}", source)
        revisions = record.get("revisions")
        if not isinstance(revisions, list) or not revisions:
            raise _problem(f"{where}.revisions", "expected every revision (a non-empty list)",
                           source)
        for j, rev in enumerate(revisions):
            rwhere = f"{where}.revisions[{j}]"
            if not isinstance(rev, dict):
                raise _problem(rwhere, "expected an object", source)
            for key in ("revision_id", "actor", "created_at"):
                _text(rev, key, rwhere, source)
            _text(rev, "reason", rwhere, source, optional=True)
            if rev.get("seq") != j + 1:
                raise _problem(f"{rwhere}.seq", f"expected {j + 1}, got {rev.get('seq')!r}",
                               source)
            if not isinstance(rev.get("snapshot"), dict):
                raise _problem(f"{rwhere}.snapshot", "expected an object", source)
        if revisions[-1]["revision_id"] != record["current_revision_id"]:
            raise _problem(f"{where}.current_revision_id",
                           "expected the id of the last revision", source)
    return doc


def restore_document(store: MemoryStore, doc: dict[str, Any], owner_id: str) -> RestoreResult:
    """Write an export's records, sources and revisions for `owner_id`, ids unchanged
    (atomic: all or nothing).

    Args:
        doc: a `load_export` document.

    Every field, source locator, revision snapshot and reason goes through the secret
    scanner (`wardian.memory.secret_scan`): a record holding a secret is stored with the
    values replaced by ``[REDACTED:<kind>]`` and set aside (``flagged``: not recalled, not in
    the startup context) for the operator to review with ``garden memory list --flagged``;
    the result lists them with the detectors' names, never the values.

    Raises:
        ConflictError (exit 4): a record or revision id already exists in this store.
        ValidationError (exit 2): a record over the caps.
    """
    from wardian.memory.models import Source
    from wardian.memory.store import normalise_sources

    records = doc["records"]
    revision_count = 0
    with atomic(store.conn):
        record_ids = [r["id"] for r in records]
        revision_ids = [v["revision_id"] for r in records for v in r["revisions"]]
        clash = store.existing_record_ids(record_ids) or store.existing_revision_ids(
            revision_ids)
        if clash or len(set(record_ids)) != len(record_ids) \
                or len(set(revision_ids)) != len(revision_ids):
            shown = ", ".join(i[:8] for i in clash[:5]) or "repeated within the file"
            raise ConflictError(
                f"cannot restore: ids already present ({shown})",
                hint="restore into a fresh data dir (WARDIAN_HOME), or remove the agent's "
                "records first (`wardian agent remove NAME --delete-records`)",
            )
        flagged: list[tuple[str, str]] = []
        for i, original in enumerate(records):
            record, flag = _set_aside(original, f"records[{i}].")
            if flag:
                flagged.append((record["id"], flag))
            sources = normalise_sources((), (
                Source(s["source_type"], s["locator"], bool(s.get("primary")))
                for s in record["sources"]))
            check_caps(text=record["text"], evidence=record["evidence"], sources=sources,
                       where=f"records[{i}].")
            store.restore_in_transaction(owner_id, record, sources, flagged=flag)
            revision_count += len(record["revisions"])
    return RestoreResult(owner_id, len(records), revision_count, flagged)


def restore_conflicts(store: MemoryStore, doc: dict[str, Any]) -> list[str]:
    """The record ids of `doc` (a `load_export` document) already in `store`, in the
    file's order: a restore of `doc` would be refused for them. Read-only."""
    return store.existing_record_ids([r["id"] for r in doc["records"]])
