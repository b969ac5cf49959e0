"""`MemoryStore`: the record store over ``memory.db`` — the only writer of records,
sources and revisions; recall is `wardian.memory.recall_index.RecallIndex`
(`MemoryStore.index`).

Every change writes an immutable revision (full snapshot, actor, reason, time) in the
same transaction as the change. Writes go through `wardian._db.atomic` (``BEGIN
IMMEDIATE``); methods ending in ``_in_transaction`` expect the caller's open
transaction, so maintenance apply and `memory.commit` can compose them atomically.

On PostgreSQL the direct writes (`save`, `save_once`, `update`, `remove`) are *narrow*
transactions (``atomic(locks=...)``): writers of different records run side by side.
What SQLite's one writer gave them, they get from the rows they change: a revised or
removed record's row is read ``FOR UPDATE`` (a second writer of it waits, then reads what
the first committed: no lost change, revision numbers in order, unique per record), a new
record has a new id, and `save_once`'s "same text, kind and scope" check holds a lock on
that (agent, kind, scope, text) key alone.

Spec: "Save and inspect memory"; DESIGN.md "Storage" (records, recall, ids).
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from wardian._backend import Connection, Row
from wardian._db import atomic
from wardian._util import new_id, utc_now_iso
from wardian.errors import AmbiguousIdError, NotFoundError, UsageError, require_ref
from wardian.memory.db import FullText, MemoryDB
from wardian.memory.models import (
    KINDS,
    Record,
    Revision,
    Scope,
    Source,
    check_caps,
)

if TYPE_CHECKING:
    from typing import Any, Literal

    from wardian.memory.models import Kind
    from wardian.memory.recall_index import RecallIndex

__all__ = ["UNSET", "MemoryStore", "SaveOutcome", "normalise_sources", "record_from_row"]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Sentinel: "not given" (distinct from None) for `MemoryStore.update`."""

_HEX_PREFIX = re.compile(r"^[0-9a-fA-F-]{1,36}$")
_TOKEN = re.compile(r"\w+", re.UNICODE)

_STARTUP_FROM = {"sqlite": "records INDEXED BY records_startup", "postgres": "records"}
"""What the startup reads select from, per backend (`MemoryDB.dialect`): SQLite is held
to the ``records_startup`` index, whose ranges are already in time order; PostgreSQL
knows no planner hints and picks that index from its statistics."""


def _row_scope(row: Row) -> Scope:
    if row["scope_kind"] == "agent":
        return Scope("agent")
    return Scope("workspace", row["scope_path"])


def record_from_row(row: Row, sources: tuple[Source, ...] = ()) -> Record:
    """The `Record` of a ``records`` row, with `sources` (read separately)."""
    return Record(
        id=row["id"],
        agent_id=row["agent_id"],
        kind=row["kind"],
        scope=_row_scope(row),
        text=row["text"],
        evidence=row["evidence"],
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        current_revision_id=row["current_revision_id"],
        sources=sources,
        removed_reason=row["removed_reason"],
        flagged=row["flagged"],
    )


def _snapshot(record: Record) -> dict[str, Any]:
    return {
        "text": record.text,
        "kind": record.kind,
        "scope": record.scope.to_json(),
        "evidence": record.evidence,
        "sources": [s.to_json() for s in record.sources],
        "status": record.status,
        "removed_reason": record.removed_reason,
    }


def _check_secrets(
    *, text: Any = UNSET, evidence: Any = UNSET, sources: Sequence[Source] = (), action: str,
    reason: str | None = None,
) -> None:
    """Refuse a write whose new text, evidence, source locators or reason (kept in the
    history, shown by ``history``) hold a secret.

    Raises:
        SecretDetected: (exit 2) naming the detector and field, never the value.
    """
    from wardian.memory.secret_scan import check_fields

    fields: dict[str, str | None] = {}
    if text is not UNSET:
        fields["text"] = text
    if evidence is not UNSET:
        fields["evidence"] = evidence
    for index, source in enumerate(sources):
        fields[f"sources[{index}].locator"] = source.locator
    fields["reason"] = reason
    check_fields(fields, action=action)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise UsageError(f"unknown kind {kind!r}", hint="use stable or current")


def normalise_sources(
    existing: Sequence[Source], additions: Iterable[Source]
) -> tuple[Source, ...]:
    """Existing sources followed by additions, de-duplicated on (type, locator), trimmed.

    An addition that repeats an existing (type, locator) only upgrades ``primary``.
    Spec "Supported operations": existing sources are preserved and combined with
    normalised additions.
    """
    out: dict[tuple[str, str], Source] = {}
    for source in (*existing, *additions):
        key = (source.source_type.strip(), source.locator.strip())
        previous = out.get(key)
        out[key] = Source(key[0], key[1], source.primary or bool(previous and previous.primary))
    return tuple(out.values())


def _text_filter(text: str, fulltext: FullText) -> tuple[str, list[Any]]:
    """SQL condition and parameters for `MemoryStore.page`'s text filter, whose words
    `fulltext` (the backend's, `MemoryDB.fulltext`) finds."""
    words = _TOKEN.findall(text)
    if not words:
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        needle = f"%{escaped}%"
        return ("(lower(text) LIKE lower(?) ESCAPE '\\'"
                " OR lower(evidence) LIKE lower(?) ESCAPE '\\')", [needle, needle])
    clause, params = fulltext.prefix_filter(words)
    if _HEX_PREFIX.match(text.lower()) and len(text) >= 4:
        clause = f"({clause} OR id >= ? AND id < ?)"
        params += [text.lower(), text.lower() + "\uffff"]
    return clause, params


def _save_key(agent_id: str, kind: str, scope: Scope, text: str) -> str:
    """The lock key of `MemoryStore.save_once`'s "already saved?" check: one per agent,
    kind, scope and text (hashed by the lock; any length)."""
    return json.dumps(["memory.save_once", agent_id, kind, scope.kind, scope.path or "", text],
                      ensure_ascii=False)


class SaveOutcome(NamedTuple):
    """What `MemoryStore.save_once` did: ``saved``, ``unchanged`` or ``evidence_added``."""

    record: Record
    outcome: Literal["saved", "unchanged", "evidence_added"]

    @property
    def unchanged(self) -> bool:
        """True when the record was already saved as is: nothing was written."""
        return self.outcome == "unchanged"

    @property
    def already_saved(self) -> bool:
        """True when an existing record was returned (unchanged or with new evidence)."""
        return self.outcome != "saved"


class MemoryStore:
    """SQL over ``memory.db``; migrates on open.

    Args:
        db: the open memory database (`wardian.memory.db.open_memory_db`).
    """

    def __init__(self, db: MemoryDB) -> None:
        self.db = db
        self.path = db.path
        self.conn: Connection = self.db.conn
        self._index: RecallIndex | None = None

    @property
    def index(self) -> RecallIndex:
        """The recall index over this store's database (`RecallIndex`, on the same
        connection), made on first use: recall, and the vectors the store's writes keep
        current."""
        if self._index is None:
            from wardian.memory.recall_index import RecallIndex

            self._index = RecallIndex(self.db)
        return self._index

    # --- reading ---------------------------------------------------------------------

    def _sources(self, record_id: str) -> tuple[Source, ...]:
        return tuple(
            Source(r["source_type"], r["locator"], bool(r["is_primary"]))
            for r in self.conn.execute(
                "SELECT source_type, locator, is_primary FROM record_sources"
                " WHERE record_id = ? ORDER BY position",
                (record_id,),
            )
        )

    def _record(self, row: Row, *, with_sources: bool = True) -> Record:
        return record_from_row(row, self._sources(row["id"]) if with_sources else ())

    def resolve(self, id_or_prefix: str, *, agent_id: str | None) -> str:
        """Resolve a full id or unique prefix to a record id. Read-only.

        Args:
            id_or_prefix: a full UUID or any unique prefix (8 characters are shown).
            agent_id: restrict to this agent's records (the managed-process view: another
                agent's id is "not found", never revealed); None for the operator view.

        Raises:
            NotFoundError: nothing matches (for this agent).
            AmbiguousIdError: several match; lists their 8-character ids.
        """
        require_ref(id_or_prefix, "record id",
                    hint="pass a record id or a unique prefix of one, as the lists show")
        prefix = id_or_prefix.strip().lower()
        if not _HEX_PREFIX.match(prefix):
            raise NotFoundError(f"memory {id_or_prefix!r} not found", hint="see `memory list`")
        sql = "SELECT id FROM records WHERE id >= ? AND id < ?"
        params: list[Any] = [prefix, prefix + "\uffff"]
        if agent_id is not None:
            sql += " AND agent_id = ?"
            params.append(agent_id)
        rows = self.conn.execute(sql + " ORDER BY id LIMIT 20", params).fetchall()
        if not rows:
            raise NotFoundError(f"memory {id_or_prefix!r} not found", hint="see `memory list`")
        if len(rows) > 1:
            if any(r["id"] == prefix for r in rows):
                return prefix
            raise AmbiguousIdError("memory", id_or_prefix, [r["id"][:8] for r in rows])
        return str(rows[0]["id"])

    def get(self, record_id: str, *, agent_id: str | None = None) -> Record:
        """The record with id (or unique prefix) `record_id`. Read-only.

        Raises:
            NotFoundError / AmbiguousIdError: see `resolve`.
        """
        full = self.resolve(record_id, agent_id=agent_id)
        row = self.conn.execute("SELECT * FROM records WHERE id = ?", (full,)).fetchone()
        return self._record(row)

    def owned_record(self, record_id: str, owner_id: str) -> Record | None:
        """The record whose full id is `record_id` when `owner_id` owns it, else None (no
        prefixes). Read-only."""
        row = self.conn.execute("SELECT * FROM records WHERE id = ? AND agent_id = ?",
                                (record_id, owner_id)).fetchone()
        return None if row is None else self._record(row)

    def status(self, record_id: str) -> str:
        """The status (``active`` or ``removed``) of the record whose full id is
        `record_id`. Read-only."""
        return str(self.conn.execute("SELECT status FROM records WHERE id = ?",
                                     (record_id,)).fetchone()["status"])

    def current_revision(self, record_id: str) -> str:
        """The current revision id of the record whose full id is `record_id`. Read-only;
        also inside the caller's transaction (what it has just written)."""
        return str(self.conn.execute("SELECT current_revision_id FROM records WHERE id = ?",
                                     (record_id,)).fetchone()["current_revision_id"])

    def active_texts(self, agent_id: str, scope: Scope) -> Iterator[tuple[str, str]]:
        """(id, text) of every active record of `agent_id` in exactly `scope`. Read-only."""
        for row in self.conn.execute(
                "SELECT id, text FROM records WHERE agent_id = ? AND status = 'active'"
                " AND scope_kind = ? AND scope_path = ?",
                (agent_id, scope.kind, scope.path or "")):
            yield str(row["id"]), str(row["text"])

    def current_saved_before(self, agent_id: str, cutoff: str) -> builtins.list[str]:
        """Ids of the agent's active ``current`` records last saved at or before `cutoff`
        (UTC ISO-8601), oldest first. Read-only."""
        return [str(row["id"]) for row in self.conn.execute(
            "SELECT id FROM records WHERE agent_id = ? AND status = 'active' AND kind = 'current'"
            " AND updated_at <= ? ORDER BY updated_at, id", (agent_id, cutoff))]

    def history(
        self, record_id: str, *, agent_id: str | None = None
    ) -> builtins.list[Revision]:
        """Every revision of the record, oldest first. Read-only."""
        full = self.resolve(record_id, agent_id=agent_id)
        return [
            Revision(
                revision_id=r["revision_id"], record_id=r["record_id"], seq=r["seq"],
                snapshot=json.loads(r["snapshot_json"]), actor=r["actor"], reason=r["reason"],
                created_at=r["created_at"],
            )
            for r in self.conn.execute(
                "SELECT * FROM revisions WHERE record_id = ? ORDER BY seq", (full,)
            )
        ]

    def workspaces(self, agent_id: str) -> builtins.list[str]:
        """The workspace paths the agent's active records are scoped to (records set aside
        as holding a secret left out), sorted. Read-only."""
        return [row[0] for row in self.conn.execute(
            "SELECT DISTINCT scope_path FROM records WHERE agent_id = ? AND status = 'active'"
            " AND scope_kind = 'workspace' AND flagged IS NULL ORDER BY scope_path",
            (agent_id,))]

    def list(
        self,
        agent_id: str,
        *,
        kind: str | None = None,
        scope_kind: str | None = None,
        include_removed: bool = False,
        workspace: str | None = None,
        flagged: bool | None = None,
        with_sources: bool = True,
    ) -> builtins.list[Record]:
        """The agent's records, newest first. Read-only.

        Args:
            kind: ``stable``/``current`` filter.
            scope_kind: ``agent``/``workspace`` filter.
            include_removed: also removed records.
            workspace: when given, workspace-scoped records only of this path.
            flagged: True = only records set aside for review, False = none of them,
                None = both.
            with_sources: False = every record's ``sources`` empty, not read (one query
                for the whole list instead of one more per record).
        """
        sql = "SELECT * FROM records WHERE agent_id = ?"
        params: list[Any] = [agent_id]
        if not include_removed:
            sql += " AND status = 'active'"
        if flagged is not None:
            sql += " AND flagged IS NOT NULL" if flagged else " AND flagged IS NULL"
        if kind:
            _check_kind(kind)
            sql += " AND kind = ?"
            params.append(kind)
        if scope_kind:
            if scope_kind not in {"agent", "workspace"}:
                raise UsageError(f"unknown scope {scope_kind!r}", hint="use agent or workspace")
            sql += " AND scope_kind = ?"
            params.append(scope_kind)
        if workspace is not None:
            sql += " AND (scope_kind = 'agent' OR scope_path = ?)"
            params.append(workspace)
        sql += " ORDER BY updated_at DESC, id"
        return [self._record(r, with_sources=with_sources)
                for r in self.conn.execute(sql, params)]

    def startup_set(
        self, agent_id: str, workspace: str | None, *, limit: int | None = None
    ) -> builtins.list[Record]:
        """The startup recall set in order of value (`iter_startup`), as a list. Read-only.

        Args:
            limit: at most this many (the first in that order); None for all.
        """
        import itertools

        rows = self.iter_startup(agent_id, workspace)
        if limit is not None:
            rows = itertools.islice(rows, max(0, limit))
        return builtins.list(rows)

    def iter_startup(self, agent_id: str, workspace: str | None) -> Iterator[Record]:
        """The startup recall set in order of value, read lazily: active current
        checkpoints first, then active stable records; within each, the most recently
        saved or confirmed (updated) first, agent scope and `workspace` together.
        Read-only. (DESIGN.md "Storage" → Recall: budget filled by value.)

        Taking n records reads O(n) rows, not O(records): each (kind, scope) is one range
        of the ``records_startup`` index, already in time order, and the ranges are
        merged as they are stepped.
        """
        import heapq

        for kind in ("current", "stable"):
            ranges = [self._startup_range(agent_id, kind, "agent", "")]
            if workspace:
                ranges.append(self._startup_range(agent_id, kind, "workspace", workspace))
            for row in heapq.merge(*ranges, key=lambda r: str(r["updated_at"]), reverse=True):
                yield self._record(row, with_sources=False)

    def _startup_range(
        self, agent_id: str, kind: str, scope_kind: str, path: str
    ) -> Iterator[Row]:
        # A lazy cursor: rows are stepped only as the merge in `startup_set` asks.
        return iter(self.conn.execute(
            f"SELECT * FROM {_STARTUP_FROM[self.db.dialect]} WHERE agent_id = ?"
            " AND status = 'active' AND kind = ? AND scope_kind = ? AND scope_path = ?"
            " AND flagged IS NULL ORDER BY updated_at DESC", (agent_id, kind, scope_kind, path)))

    def startup_count(
        self, agent_id: str, workspace: str | None, *, at_most: int | None = None
    ) -> int:
        """How many records the startup set of (`agent_id`, `workspace`) has, counting no
        further than `at_most` (then the answer is `at_most`: "at least"). Read-only;
        reads ``records_startup`` index ranges only."""
        scopes = [("agent", "")] + ([("workspace", workspace)] if workspace else [])
        total = 0
        for kind in ("current", "stable"):
            for scope_kind, path in scopes:
                room = -1 if at_most is None else at_most - total
                if room == 0:
                    return total
                total += int(self.conn.execute(
                    f"SELECT COUNT(*) FROM (SELECT 1 FROM {_STARTUP_FROM[self.db.dialect]}"
                    " WHERE agent_id = ? AND status = 'active' AND kind = ?"
                    " AND scope_kind = ? AND scope_path = ? AND flagged IS NULL LIMIT ?) AS n",
                    # No limit is a huge one: PostgreSQL refuses SQLite's LIMIT -1.
                    (agent_id, kind, scope_kind, path, room if room > 0 else 2**62),
                ).fetchone()[0])
        return total

    def owner(self, id_or_prefix: str) -> str:
        """The full agent id of the records' owner matching `id_or_prefix` (4+ hex
        characters or a full id). Read-only. For the operator's view of records kept after
        `wardian agent remove --keep-records`, whose agent is no longer registered.

        Raises:
            NotFoundError: no records have such an owner.
            AmbiguousIdError: several owners match; lists their 8-character ids.
        """
        require_ref(id_or_prefix, "agent name or id", hint="see `wardian agent list`")
        prefix = id_or_prefix.strip().lower()
        rows = []
        if len(prefix) >= 4 and _HEX_PREFIX.match(prefix):
            rows = self.conn.execute(
                "SELECT DISTINCT agent_id FROM records WHERE agent_id >= ? AND agent_id < ?"
                " ORDER BY agent_id LIMIT 20",
                (prefix, prefix + "\uffff"),
            ).fetchall()
        if not rows:
            raise NotFoundError(
                f"no agent named or with id {id_or_prefix!r}, and no kept records of such an id",
                hint="see `wardian agent list`",
            )
        if len(rows) > 1:
            raise AmbiguousIdError("agent", id_or_prefix, [r[0][:8] for r in rows])
        return str(rows[0][0])

    def count(self, agent_id: str, *, include_removed: bool = True) -> int:
        """How many records the agent has. Read-only."""
        sql = "SELECT COUNT(*) FROM records WHERE agent_id = ?"
        if not include_removed:
            sql += " AND status = 'active'"
        return int(self.conn.execute(sql, (agent_id,)).fetchone()[0])

    def page(
        self,
        agent_id: str,
        *,
        kind: str | None = None,
        scope_kind: str | None = None,
        status: str | None = "active",
        text: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[builtins.list[Record], int]:
        """One page of the agent's records, newest first, and how many match in all.

        For the operator's paged views (Garden in the browser): filters run in SQL, the
        page is found in the ``records_page`` index, and only its records (with their
        sources) are built, so page 200 of 10k records costs what page 1 does.

        Args:
            kind: ``stable``/``current``; scope_kind: ``agent``/``workspace``.
            status: ``active``/``removed``, or None for both.
            text: words that must all start a word of the text or evidence (full-text
                index, case-insensitive, stemmed), or an id prefix; without any word
                characters, a plain substring of the text or evidence.
            limit: page size (1 to 500); offset: records to skip.

        Returns:
            (records of this page, total matching records).

        Raises:
            UsageError: an unknown kind, scope or status, or a limit out of range.
        """
        where = ["agent_id = ?"]
        params: list[Any] = [agent_id]
        if status is not None:
            if status not in {"active", "removed"}:
                raise UsageError(f"unknown status {status!r}", hint="use active or removed")
            where.append("status = ?")
            params.append(status)
        if kind:
            _check_kind(kind)
            where.append("kind = ?")
            params.append(kind)
        if scope_kind:
            if scope_kind not in {"agent", "workspace"}:
                raise UsageError(f"unknown scope {scope_kind!r}", hint="use agent or workspace")
            where.append("scope_kind = ?")
            params.append(scope_kind)
        if text and text.strip():
            clause, values = _text_filter(text.strip(), self.db.fulltext)
            where.append(clause)
            params.extend(values)
        if not 1 <= limit <= 500:
            raise UsageError(f"page size {limit} is out of range", hint="use 1 to 500")
        clause = " AND ".join(where)
        total = int(self.conn.execute(
            f"SELECT COUNT(*) FROM records WHERE {clause}", params
        ).fetchone()[0])
        order = "ORDER BY updated_at DESC, id DESC"
        rows = self.conn.execute(
            f"SELECT * FROM records WHERE rowid IN (SELECT rowid FROM records WHERE {clause}"
            f" {order} LIMIT ? OFFSET ?) {order}",
            [*params, limit, max(0, offset)],
        ).fetchall()
        return [self._record(r) for r in rows], total

    # --- checking --------------------------------------------------------------------

    def verify(self) -> builtins.list[str]:
        """Check the stored history against the current state. Read-only.

        Every record must equal its latest revision (the one ``current_revision_id`` names,
        with the highest ``seq``): text, kind, scope, evidence, sources, status and removal
        reason; every vector must name its record's current revision; and the full-text
        index must hold exactly the records' rows, each with its own text and evidence. A
        few set-based queries, not one per record (`wardian.memory.verify`). Spec
        "Storage" (every change writes a revision).

        Returns:
            One line per inconsistency, naming the record id (empty: all consistent).
        """
        from wardian.memory.verify import problems

        return problems(self.db)

    # --- writing ---------------------------------------------------------------------

    @property
    def _for_update(self) -> str:
        """What ends a read of rows this transaction changes next (`Backend.for_update`)."""
        return self.db.backend.for_update

    def lock_in_transaction(self, record_ids: Iterable[str]) -> None:
        """Hold the rows of `record_ids` until the open transaction ends, so what the
        caller re-verifies (digest, revisions) cannot change before it writes.

        PostgreSQL: ``SELECT … FOR UPDATE`` on those rows (in id order: two appliers never
        deadlock). SQLite: nothing to do, the open ``BEGIN IMMEDIATE`` holds the file.
        """
        self.db.backend.lock_rows(self.conn, "records", record_ids)

    def write_revision_in_transaction(
        self, record_id: str, *, actor: str, reason: str | None, now: str
    ) -> str:
        """Snapshot the record's current row into a new revision and point the record at it.

        Must run inside an open transaction. Returns the new revision id. On PostgreSQL the
        row is locked first (``FOR UPDATE``), so the revision numbers of one record follow
        its writers' commits.
        """
        row = self.conn.execute("SELECT * FROM records WHERE id = ?" + self._for_update,
                                (record_id,)).fetchone()
        record = self._record(row)
        revision_id = new_id()
        seq = int(
            self.conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM revisions WHERE record_id = ?",
                (record_id,),
            ).fetchone()[0]
        )
        self.conn.execute(
            "INSERT INTO revisions (revision_id, record_id, seq, snapshot_json, actor, reason,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (revision_id, record_id, seq, json.dumps(_snapshot(record), ensure_ascii=False),
             actor, reason, now),
        )
        self.conn.execute(
            "UPDATE records SET current_revision_id = ?, updated_at = ? WHERE id = ?",
            (revision_id, now, record_id),
        )
        return revision_id

    def _set_sources_in_transaction(self, record_id: str, sources: Sequence[Source]) -> None:
        self.conn.execute("DELETE FROM record_sources WHERE record_id = ?", (record_id,))
        self.conn.executemany(
            "INSERT INTO record_sources (record_id, position, source_type, locator, is_primary)"
            " VALUES (?, ?, ?, ?, ?)",
            [(record_id, i, s.source_type, s.locator, int(s.primary))
             for i, s in enumerate(sources)],
        )

    def insert_in_transaction(
        self,
        agent_id: str,
        *,
        text: str,
        evidence: str,
        kind: Kind,
        scope: Scope,
        sources: Sequence[Source],
        actor: str,
        reason: str | None,
        now: str,
        record_id: str | None = None,
        secret_action: str = "this save",
        reason_checked: bool = False,
    ) -> str:
        """Insert a new active record and its first revision; caps and secrets are checked
        first (`wardian.memory.secret_scan`: nothing secret-shaped is ever stored).

        Must run inside an open transaction. Returns the new record id.

        Args:
            secret_action: names the refused write in a `SecretDetected` message.
            reason_checked: the caller scanned the free text in `reason` itself and the
                rest is Wardian's own (run keys, record ids, whose UUIDs the token shapes
                can match), so the reason is not scanned again.

        Raises:
            ValidationError: a cap is exceeded or evidence is empty.
            SecretDetected: text, evidence, a source locator or the reason holds a secret
                (exit 2).
        """
        _check_kind(kind)
        normalised = normalise_sources((), sources)
        check_caps(text=text, evidence=evidence, sources=normalised)
        _check_secrets(text=text, evidence=evidence, sources=normalised, action=secret_action,
                       reason=None if reason_checked else reason)
        rid = record_id or new_id()
        self.conn.execute(
            "INSERT INTO records (id, agent_id, kind, scope_kind, scope_path, text, evidence,"
            " status, created_at, updated_at, current_revision_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, '')",
            (rid, agent_id, kind, scope.kind, scope.path or "", text, evidence, now, now),
        )
        self._set_sources_in_transaction(rid, normalised)
        revision = self.write_revision_in_transaction(rid, actor=actor, reason=reason, now=now)
        self.index.store_vector_in_transaction(rid, text, revision)
        return rid

    def update_in_transaction(
        self,
        record_id: str,
        *,
        text: Any = UNSET,
        evidence: Any = UNSET,
        kind: Any = UNSET,
        scope: Any = UNSET,
        add_sources: Sequence[Source] = (),
        status: Literal["active", "removed"] | None = None,
        removed_reason: str | None = None,
        actor: str,
        reason: str | None,
        now: str,
        secret_action: str = "this update",
        reason_checked: bool = False,
    ) -> str:
        """Change the given fields of a record, then write a revision.

        Must run inside an open transaction; `record_id` must be a full id; on PostgreSQL
        the record's row is locked before it is read (``FOR UPDATE``). Returns the
        new revision id. The given text, evidence and added source locators are scanned
        for secrets (fields not given are not: a flagged record can still be retired or
        re-kinded), and so are `reason` and `removed_reason` unless `reason_checked` (see
        `insert_in_transaction`); a flagged record whose text and evidence are clean
        afterwards is no longer flagged.

        Raises:
            ValidationError: a cap is exceeded.
            SecretDetected: a given field or the reason holds a secret (exit 2).
        """
        row = self.conn.execute("SELECT * FROM records WHERE id = ?" + self._for_update,
                                (record_id,)).fetchone()
        current = self._record(row)
        new_text = current.text if text is UNSET else text
        new_evidence = current.evidence if evidence is UNSET else evidence
        new_kind = current.kind if kind is UNSET else kind
        new_scope: Scope = current.scope if scope is UNSET else scope
        _check_kind(new_kind)
        sources = normalise_sources(current.sources, add_sources)
        check_caps(text=new_text, evidence=new_evidence, sources=sources)
        _check_secrets(text=text, evidence=evidence, sources=add_sources, action=secret_action,
                       reason=None if reason_checked else
                       " ".join(r for r in (reason, removed_reason) if r) or None)
        flagged = current.flagged
        if flagged and (text is not UNSET or evidence is not UNSET):
            from wardian.memory.secret_scan import scan_fields

            if not scan_fields({"text": new_text, "evidence": new_evidence}):
                flagged = None  # revised clean: back in recall and the startup context
        self.conn.execute(
            "UPDATE records SET text = ?, evidence = ?, kind = ?, scope_kind = ?, scope_path = ?,"
            " status = ?, removed_reason = ?, flagged = ? WHERE id = ?",
            (
                new_text, new_evidence, new_kind, new_scope.kind, new_scope.path or "",
                status or current.status,
                removed_reason if status == "removed" else current.removed_reason,
                flagged, record_id,
            ),
        )
        if add_sources:
            self._set_sources_in_transaction(record_id, sources)
        revision = self.write_revision_in_transaction(
            record_id, actor=actor, reason=reason, now=now)
        self.index.carry_vector_in_transaction(record_id, new_text, revision,
                                               text_changed=new_text != current.text)
        return revision

    def _active_in_transaction(
        self, record_id: str, agent_id: str | None, *, removed: str, hint: str
    ) -> str:
        """Resolve `record_id` for `agent_id` and require it active; returns the full id.
        On PostgreSQL the record's row is locked until the transaction ends (read after any
        writer of it before us committed).

        Raises:
            NotFoundError / AmbiguousIdError: see `resolve`.
            UsageError: the record is removed (message: ``memory <id8> <removed>``).
        """
        full = self.resolve(record_id, agent_id=agent_id)
        status = self.conn.execute("SELECT status FROM records WHERE id = ?" + self._for_update,
                                   (full,)).fetchone()
        if status[0] != "active":
            raise UsageError(f"memory {full[:8]} {removed}", hint=hint)
        return full

    def save(
        self,
        agent_id: str,
        text: str,
        *,
        evidence: str,
        kind: Kind = "stable",
        scope: Scope,
        sources: Sequence[Source] = (),
        actor: str,
        reason: str | None = None,
    ) -> Record:
        """Create a record for `agent_id` with its first revision (atomic).

        Raises:
            ValidationError: empty evidence, or text/evidence/sources over the caps.
        """
        with atomic(self.conn, locks=()):  # a new id: nothing another writer changes
            rid = self.insert_in_transaction(
                agent_id, text=text, evidence=evidence, kind=kind, scope=scope,
                sources=sources, actor=actor, reason=reason, now=utc_now_iso(),
            )
        return self.get(rid)

    def save_once(
        self,
        agent_id: str,
        text: str,
        *,
        evidence: str,
        kind: Kind = "stable",
        scope: Scope,
        sources: Sequence[Source] = (),
        actor: str,
        reason: str | None = None,
    ) -> SaveOutcome:
        """An idempotent direct save (atomic): the same text, kind and scope as an active
        record of the agent returns that record instead of a second copy.

        When the evidence or the sources given differ from the record's, they are added
        to it as a new revision (the evidence replaces the old one, which stays in
        history; new sources are appended); otherwise nothing is written.

        Returns:
            `SaveOutcome` with the record and ``outcome``: ``saved`` (a new record),
            ``unchanged`` (already saved, nothing written) or ``evidence_added``.

        Raises:
            ValidationError: empty evidence, or text/evidence/sources over the caps.
            SecretDetected: text, evidence or a source holds a secret (exit 2).
        """
        _check_kind(kind)
        check_caps(text=text, evidence=evidence, sources=normalise_sources((), sources))
        # Two saves of one text wait for each other (the key); the record found stays as
        # read until the commit (its row lock: a concurrent remove or update waits).
        with atomic(self.conn, locks=[_save_key(agent_id, kind, scope, text)]):
            row = self.conn.execute(
                "SELECT id FROM records WHERE agent_id = ? AND status = 'active' AND kind = ?"
                " AND scope_kind = ? AND scope_path = ? AND text = ? ORDER BY created_at"
                " LIMIT 1" + self._for_update,
                (agent_id, kind, scope.kind, scope.path or "", text),
            ).fetchone()
            now = utc_now_iso()
            if row is None:
                rid = self.insert_in_transaction(
                    agent_id, text=text, evidence=evidence, kind=kind, scope=scope,
                    sources=sources, actor=actor, reason=reason, now=now,
                    secret_action="memory save",
                )
                return SaveOutcome(self.get(rid), "saved")
            current = self.get(row["id"])
            known = {(s.source_type, s.locator) for s in current.sources}
            additions = [s for s in normalise_sources((), sources)
                         if (s.source_type, s.locator) not in known]
            if evidence == current.evidence and not additions:
                return SaveOutcome(current, "unchanged")
            self.update_in_transaction(
                current.id, evidence=UNSET if evidence == current.evidence else evidence,
                add_sources=additions, actor=actor,
                reason=reason or "saved again with new evidence", now=now,
                secret_action="memory save",
            )
        return SaveOutcome(self.get(current.id), "evidence_added")

    def update(
        self,
        agent_id: str | None,
        record_id: str,
        *,
        text: Any = UNSET,
        evidence: Any = UNSET,
        kind: Any = UNSET,
        scope: Any = UNSET,
        add_sources: Sequence[Source] = (),
        actor: str,
        reason: str | None = None,
    ) -> Record:
        """Update an active record of `agent_id` (None = any agent) and revision it (atomic).

        Raises:
            NotFoundError / AmbiguousIdError: see `resolve`.
            UsageError: the record is removed, or nothing to change was given.
            ValidationError: caps.
        """
        if all(v is UNSET for v in (text, evidence, kind, scope)) and not add_sources:
            raise UsageError(
                "nothing to update", hint="pass --text, --kind, --scope, --evidence or --source"
            )
        with atomic(self.conn, locks=()):  # the record's row lock (see the module docstring)
            full = self._active_in_transaction(
                record_id, agent_id, removed="is removed and cannot be updated",
                hint="save a new memory instead",
            )
            self.update_in_transaction(
                full, text=text, evidence=evidence, kind=kind, scope=scope,
                add_sources=add_sources, actor=actor, reason=reason, now=utc_now_iso(),
                secret_action="memory update",
            )
        return self.get(full)

    def remove(
        self, agent_id: str | None, record_id: str, *, actor: str, reason: str | None = None
    ) -> Record:
        """Mark a record removed, keeping it and its history (atomic).

        Raises:
            NotFoundError / AmbiguousIdError: see `resolve`.
            UsageError: it is already removed.
            SecretDetected: the reason holds a secret (exit 2).
        """
        with atomic(self.conn, locks=()):  # the record's row lock (see the module docstring)
            full = self._active_in_transaction(
                record_id, agent_id, removed="is already removed",
                hint="`memory show` and `memory history` still show it",
            )
            self.update_in_transaction(
                full, status="removed", removed_reason=reason, actor=actor, reason=reason,
                now=utc_now_iso(), secret_action="memory remove",
            )
        return self.get(full)

    def existing_record_ids(self, ids: Sequence[str]) -> builtins.list[str]:
        """Which of `ids` are record ids in this store, in `ids`' order. Read-only."""
        return self._existing("records", "id", ids)

    def existing_revision_ids(self, ids: Sequence[str]) -> builtins.list[str]:
        """Which of `ids` are revision ids in this store, in `ids`' order. Read-only."""
        return self._existing("revisions", "revision_id", ids)

    def _existing(self, table: str, column: str, ids: Sequence[str]) -> builtins.list[str]:
        found: builtins.list[str] = []
        for start in range(0, len(ids), 500):
            chunk = builtins.list(ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            found += [row[0] for row in self.conn.execute(
                f"SELECT {column} FROM {table} WHERE {column} IN ({marks})", chunk)]
        return found

    def restore_in_transaction(self, owner_id: str, record: Mapping[str, Any],
                               sources: Sequence[Source], *, flagged: str | None) -> None:
        """In the caller's transaction: write an exported record (`wardian.memory.portable`
        document shape: its ids, times, status and revisions kept as they are) for
        `owner_id`, with `sources` (normalised) and `flagged` (the detector that set it
        aside, or None). The caller has checked caps, secrets and id clashes."""
        scope = record["scope"]
        self.conn.execute(
            "INSERT INTO records (id, agent_id, kind, scope_kind, scope_path, text,"
            " evidence, status, created_at, updated_at, current_revision_id,"
            " removed_reason, flagged) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record["id"], owner_id, record["kind"], scope["kind"],
             scope.get("path") or "" if scope["kind"] == "workspace" else "",
             record["text"], record["evidence"], record["status"], record["created_at"],
             record["updated_at"], record["current_revision_id"],
             record.get("removed_reason"), flagged),
        )
        self.conn.executemany(
            "INSERT INTO record_sources (record_id, position, source_type, locator,"
            " is_primary) VALUES (?, ?, ?, ?, ?)",
            [(record["id"], n, s.source_type, s.locator, int(s.primary))
             for n, s in enumerate(sources)],
        )
        self.conn.executemany(
            "INSERT INTO revisions (revision_id, record_id, seq, snapshot_json, actor,"
            " reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(v["revision_id"], record["id"], v["seq"],
              json.dumps(v["snapshot"], ensure_ascii=False), v["actor"], v.get("reason"),
              v["created_at"]) for v in record["revisions"]],
        )

    def delete_agent_records(self, agent_id: str) -> int:
        """Permanently delete every record of an agent with everything that repeats their
        text (atomic): revisions and sources, ``Memory loaded`` contexts, and the agent's
        maintenance and consolidation receipts and cursor.

        Only `wardian agent remove --delete-records` calls this; the agent id (UUID4) is
        never reused. Capabilities and launches stay for audit (they hold no memory text).
        Returns how many records were deleted.
        """
        with atomic(self.conn):
            count = self.count(agent_id)
            self.conn.execute("DELETE FROM records WHERE agent_id = ?", (agent_id,))
            for table, owner in (("loaded_events", "agent_id"),
                                 ("maintenance_receipts", "owner_id"),
                                 ("consolidation_receipts", "agent_id"),
                                 ("consolidation_cursors", "agent_id")):
                self.conn.execute(f"DELETE FROM {table} WHERE {owner} = ?", (agent_id,))
        return count
