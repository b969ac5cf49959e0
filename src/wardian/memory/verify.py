"""`MemoryStore.verify`: the stored history against the current state, set-based.

Every check is a handful of queries over whole tables, never one query per record: at
100k records the per-record version (two FTS5 phrase matches each, every one walking the
posting lists of common words) never finished, and on PostgreSQL every query is a round
trip. What is checked, each problem named by record id:

* records against revisions: every record has a revision; its ``current_revision_id``
  is its latest (highest ``seq``); that revision's snapshot equals the record's text,
  kind, scope, evidence, sources (in order), status and removal reason (compared in SQL,
  field by field, on the snapshot's JSON);
* vectors: every ``record_vectors`` row belongs to a record and names its current
  revision (a save or update re-embeds, or re-points the vector when the text is
  unchanged; a stale one means a write bypassed the store), and has the embedding
  model's size;
* the full-text index: it holds exactly the records' rows, each with the words of its
  own text and evidence as stored (the backend's ``index_problems``:
  `wardian.memory.fulltext_sqlite` checks FTS5's index; on PostgreSQL the ``tsvector``
  is a generated column the server keeps, `wardian.memory.fulltext_pg`).

The SQL reading the snapshots' JSON is the backend's (`wardian._backend.Backend.json_text`
and its neighbours).

Spec "Storage" (every change writes a revision); CLI.md ``doctor`` (``memory-history``),
``db migrate`` (verifies both sides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wardian._backend import Backend, Connection
    from wardian.memory.db import MemoryDB

__all__ = ["problems"]

_SNAPSHOT_KEYS = 7
"""text, kind, scope, evidence, sources, status, removed_reason (`store._snapshot`)."""


def problems(db: MemoryDB) -> list[str]:
    """Every inconsistency of the memory database `db`, one line each naming the record
    (or index row); [] when all is consistent. Read-only (on SQLite the full-text check's
    comparison index lives in the connection's ``temp`` schema and is dropped after)."""
    return (_revision_problems(db.conn, db.backend) + _vector_problems(db.conn)
            + db.fulltext.index_problems(db.conn))


def _revision_problems(conn: Connection, sql: Backend) -> list[str]:
    same = sql.null_safe_eq

    def field(path: str) -> str:
        return sql.json_text("h.s", path)

    def keys(path: str) -> str:
        return sql.json_key_count("h.s", path)

    def element(key: str) -> str:
        return sql.json_text("j.value", key)

    snapshot = sql.json("snapshot_json")
    elements, index = sql.json_elements("h.s", "sources", "j")
    length = sql.json_array_length("h.s", "sources")
    primary = sql.json_bool_is("j.value", "primary", "s.is_primary <> 0")
    # The snapshot equals `store._snapshot` of the record, field by field.
    fields = " AND ".join([
        f"{keys('')} = {_SNAPSHOT_KEYS}",
        *(f"{field(name)} {same} r.{name}" for name in ("text", "kind", "evidence", "status")),
        sql.json_has("h.s", "removed_reason"),
        f"{field('removed_reason')} {same} r.removed_reason",
        f"{field('scope.kind')} {same} r.scope_kind",
        f"(CASE WHEN r.scope_kind = 'agent' THEN {keys('scope')} = 1 ELSE {keys('scope')} = 2"
        f" AND {field('scope.path')} {same} r.scope_path END)",
    ])
    # The snapshot as `json.dumps` wrote it for a record without sources: for a record
    # written through the store the text is equal, and only the others are parsed.
    quote = sql.json_quote
    written = " || ".join([
        "'{\"text\": '", quote("r.text"), "', \"kind\": '", quote("r.kind"),
        "', \"scope\": '", "(CASE WHEN r.scope_kind = 'agent' THEN '{\"kind\": \"agent\"}'"
        " ELSE '{\"kind\": \"workspace\", \"path\": ' || " + quote("r.scope_path")
        + " || '}' END)", "', \"evidence\": '", quote("r.evidence"),
        "', \"sources\": [], \"status\": '", quote("r.status"),
        "', \"removed_reason\": '", f"COALESCE({quote('r.removed_reason')}, 'null')", "'}'"])
    # Sources, in order: the snapshot's list against the record_sources rows.
    ranked = ("SELECT record_id, source_type, locator, is_primary, ROW_NUMBER() OVER"
              " (PARTITION BY record_id ORDER BY position) - 1 AS i FROM record_sources")
    sources = (f"{length} = COALESCE(n.c, 0) AND NOT EXISTS (SELECT 1 FROM {elements}"
               " WHERE NOT EXISTS (SELECT 1 FROM src s WHERE s.record_id = h.record_id"
               f" AND s.i = {index} AND s.source_type {same} {element('source_type')}"
               f" AND s.locator {same} {element('locator')} AND {primary}))")
    # Each record against the revision it names (h), which must be its latest.
    rows = conn.execute(
        f"WITH src AS ({ranked}), n AS (SELECT record_id, COUNT(*) AS c FROM"
        " record_sources GROUP BY record_id)"
        f" SELECT r.id, r.current_revision_id FROM records r LEFT JOIN (SELECT revision_id,"
        f" record_id, seq, snapshot_json AS raw, {snapshot} AS s FROM revisions v) h"
        " ON h.revision_id = r.current_revision_id AND h.record_id = r.id"
        " LEFT JOIN n ON n.record_id = r.id"
        " WHERE h.revision_id IS NULL OR EXISTS (SELECT 1 FROM revisions w"
        " WHERE w.record_id = r.id AND w.seq > h.seq)"
        f" OR (CASE WHEN n.c IS NULL AND h.raw = {written} THEN 0"
        f" WHEN ({fields}) AND ({sources}) THEN 0 ELSE 1 END) = 1").fetchall()
    out: dict[str, str] = {}
    for record_id, current in rows:
        head = conn.execute("SELECT revision_id FROM revisions WHERE record_id = ?"
                            " ORDER BY seq DESC LIMIT 1", (record_id,)).fetchone()
        latest = None if head is None else head[0]
        if latest is None:
            out[str(record_id)] = f"record {record_id}: has no revision"
        elif latest != current:
            out[str(record_id)] = (f"record {record_id}: current revision {current} is not"
                                   f" its latest ({latest})")
        else:
            out[str(record_id)] = (f"record {record_id}: differs from its latest revision"
                                   f" {latest}")
    return [out[k] for k in sorted(out)]


def _vector_problems(conn: Connection) -> list[str]:
    from wardian.memory.embedding import DIM, MODEL

    out = []
    for record_id, vector_revision, current, size, model in conn.execute(
            "SELECT v.record_id, v.revision_id, r.current_revision_id, length(v.vector),"
            " v.model FROM record_vectors v LEFT JOIN records r ON r.id = v.record_id"
            " WHERE r.id IS NULL OR v.revision_id <> r.current_revision_id"
            " OR (v.model = ? AND length(v.vector) <> ?) ORDER BY v.record_id",
            (MODEL, 2 * DIM)):
        if current is None:
            out.append(f"vector of record {record_id}: has no record")
        elif vector_revision != current:
            out.append(f"record {record_id}: its vector is of revision {vector_revision},"
                       f" not the current {current}")
        else:
            out.append(f"record {record_id}: its {model} vector holds {size} bytes,"
                       f" not {2 * DIM}")
    return out
