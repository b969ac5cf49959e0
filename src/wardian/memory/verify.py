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
  own text and evidence as stored. On SQLite, FTS5's own ``integrity-check`` (with
  ``rank = 1`` it compares the index with the ``records`` content) when the connection
  may write, and otherwise, or to name the records when that check fails, a fresh index
  of the records in the connection's ``temp`` schema compared term by term with the
  stored one (`_fts_differences`); on PostgreSQL the ``tsvector`` is a generated column,
  which the server keeps equal to its text and evidence: nothing to check.

Spec "Storage" (every change writes a revision); CLI.md ``doctor`` (``memory-history``),
``db migrate`` (verifies both sides).
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from typing import Any

__all__ = ["problems"]

_SNAPSHOT_KEYS = 7
"""text, kind, scope, evidence, sources, status, removed_reason (`store._snapshot`)."""


def problems(conn: sqlite3.Connection, dialect: str) -> list[str]:
    """Every inconsistency of the memory database `conn` (SQLite, or a
    `wardian._pg.PgConnection` when `dialect` is ``"postgres"``), one line each naming
    the record (or index row); [] when all is consistent. Read-only: on SQLite the
    comparison index lives in the connection's ``temp`` schema and is dropped after."""
    found = _revision_problems(conn, dialect) + _vector_problems(conn)
    if dialect == "postgres":
        return found
    return found + _fts_problems(conn)


def _revision_problems(conn: sqlite3.Connection, dialect: str) -> list[str]:
    pg = dialect == "postgres"
    same = "IS NOT DISTINCT FROM" if pg else "IS"
    if pg:
        snapshot = "snapshot_json::jsonb"

        def field(path: str) -> str:
            return "h.s #>> '{" + path.replace(".", ",") + "}'"

        def present(path: str) -> str:
            return "(h.s #> '{" + path.replace(".", ",") + "}') IS NOT NULL"

        def keys(path: str) -> str:
            at = "h.s" if not path else "h.s #> '{" + path + "}'"
            return (f"(CASE jsonb_typeof({at}) WHEN 'object' THEN (SELECT count(*)"
                    f" FROM jsonb_object_keys({at})) END)")

        elements = ("jsonb_array_elements(CASE jsonb_typeof(h.s -> 'sources') WHEN 'array'"
                    " THEN h.s -> 'sources' ELSE '[]' END) WITH ORDINALITY AS j(value, n)")
        index = "j.n - 1"
        element = "j.value ->> '{}'"
        primary = "(j.value -> 'primary') = to_jsonb(s.is_primary <> 0)"
        length = ("CASE jsonb_typeof(h.s -> 'sources') WHEN 'array'"
                  " THEN jsonb_array_length(h.s -> 'sources') END")
    else:
        snapshot = "snapshot_json"

        def field(path: str) -> str:
            return f"json_extract(h.s, '$.{path}')"

        def present(path: str) -> str:
            return f"json_type(h.s, '$.{path}') IS NOT NULL"

        def keys(path: str) -> str:
            at = "'$" + ("." + path if path else "") + "'"
            return (f"(CASE json_type(h.s, {at}) WHEN 'object' THEN (SELECT count(*)"
                    f" FROM json_each(h.s, {at})) END)")

        elements = "json_each(h.s, '$.sources') AS j"
        index = "j.key"
        element = "json_extract(j.value, '$.{}')"
        primary = ("json_type(j.value, '$.primary') IN ('true', 'false')"
                   " AND json_extract(j.value, '$.primary') = (s.is_primary <> 0)")
        length = ("CASE json_type(h.s, '$.sources') WHEN 'array'"
                  " THEN json_array_length(h.s, '$.sources') END")
    # The snapshot equals `store._snapshot` of the record, field by field.
    fields = " AND ".join([
        f"{keys('')} = {_SNAPSHOT_KEYS}",
        *(f"{field(name)} {same} r.{name}" for name in ("text", "kind", "evidence", "status")),
        present("removed_reason"), f"{field('removed_reason')} {same} r.removed_reason",
        f"{field('scope.kind')} {same} r.scope_kind",
        f"(CASE WHEN r.scope_kind = 'agent' THEN {keys('scope')} = 1 ELSE {keys('scope')} = 2"
        f" AND {field('scope.path')} {same} r.scope_path END)",
    ])
    # The snapshot as `json.dumps` wrote it for a record without sources: for a record
    # written through the store the text is equal, and only the others are parsed.
    quoting = "to_json({}::text)::text" if pg else "json_quote({})"

    def quote(column: str) -> str:
        return quoting.format(column)

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
               f" AND s.i = {index} AND s.source_type {same} {element.format('source_type')}"
               f" AND s.locator {same} {element.format('locator')} AND {primary}))")
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


def _vector_problems(conn: sqlite3.Connection) -> list[str]:
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


def _fts_problems(conn: sqlite3.Connection) -> list[str]:
    rows = {int(r[0]): str(r[1]) for r in conn.execute("SELECT rowid, id FROM records")}
    indexed = {int(r[0]) for r in conn.execute("SELECT id FROM records_fts_docsize")}
    out = [f"record {rows[rid]}: missing from the full-text index"
           for rid in sorted(set(rows) - indexed, key=rows.__getitem__)]
    out += [f"full-text index row {rid} has no record" for rid in sorted(indexed - set(rows))]
    verdict = _integrity_check_passes(conn) if not out else None
    if verdict:
        return out
    both = set(rows) & indexed
    named = [f"record {rows[rid]}: its {column} is not in the full-text index as stored"
             for rid, column in sorted(_fts_differences(conn),
                                       key=lambda d: (rows.get(d[0], ""), d[1]))
             if rid in both]
    if verdict is False and not named:
        # The integrity check failed on something the comparison cannot place.
        named.append("the full-text index does not match the records (FTS5 integrity-check);"
                     " rebuild it: INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
    return out + named


def _integrity_check_passes(conn: sqlite3.Connection) -> bool | None:
    """FTS5's ``integrity-check`` with ``rank = 1`` (index against the ``records``
    content): True / False, None when the connection may not run it (read-only: the
    command is an INSERT; or another process holds the write lock past the timeout)."""
    try:
        conn.execute("INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.OperationalError:  # readonly, locked: the comparison index decides
        return None
    except sqlite3.DatabaseError:  # SQLITE_CORRUPT_VTAB: the index and content differ
        return False
    return True


_TOKENIZE = re.compile(r"tokenize\s*=\s*'[^']*'", re.IGNORECASE)


def _fts_differences(conn: sqlite3.Connection) -> set[tuple[int, str]]:
    """(rowid, column) of every record whose stored index entries differ from a fresh
    index of its text and evidence (same tokenizer, in ``temp``): the per-term totals
    of both indexes are compared, and only the terms that differ are read posting by
    posting. A difference that leaves every term's totals and every record's length
    equal (words swapped between records, or reordered inside one) is not named here;
    `_integrity_check_passes` still sees it where the connection may write."""
    sql = str(conn.execute("SELECT sql FROM sqlite_master WHERE name = 'records_fts'")
              .fetchone()[0])
    tokenize = _TOKENIZE.search(sql)
    name = f"wardian_verify_{uuid.uuid4().hex[:8]}"
    columns = ["text", "evidence"]
    try:
        conn.execute(f"CREATE VIRTUAL TABLE temp.{name} USING fts5(text, evidence"
                     f"{', ' + tokenize.group(0) if tokenize else ''})")
        conn.execute(f"INSERT INTO temp.{name} (rowid, text, evidence)"
                     " SELECT rowid, text, evidence FROM main.records")
        conn.execute(f"CREATE VIRTUAL TABLE temp.{name}_col USING fts5vocab(temp, {name}, col)")
        conn.execute(f"CREATE VIRTUAL TABLE temp.{name}_ins"
                     f" USING fts5vocab(temp, {name}, instance)")
        conn.execute(f"CREATE VIRTUAL TABLE temp.{name}_scol"
                     " USING fts5vocab(main, records_fts, col)")
        conn.execute(f"CREATE VIRTUAL TABLE temp.{name}_sins"
                     " USING fts5vocab(main, records_fts, instance)")
        terms = [str(r[0]) for r in conn.execute(
            f"SELECT term FROM (SELECT term, col, doc, cnt FROM temp.{name}_col EXCEPT"
            f" SELECT term, col, doc, cnt FROM temp.{name}_scol UNION SELECT * FROM"
            f" (SELECT term, col, doc, cnt FROM temp.{name}_scol EXCEPT"
            f" SELECT term, col, doc, cnt FROM temp.{name}_col))")]
        found: set[tuple[int, str]] = set()
        for term in set(terms):
            fresh = _postings(conn, f"temp.{name}_ins", term)
            stored = _postings(conn, f"temp.{name}_sins", term)
            found.update((doc, str(col)) for doc, col, _ in fresh ^ stored)
        # Lengths per record and column (the docsize blobs), for what the totals miss.
        for rid, ours, theirs in conn.execute(
                f"SELECT d.id, d.sz, t.sz FROM main.records_fts_docsize d"
                f" JOIN temp.{name}_docsize t ON t.id = d.id WHERE d.sz <> t.sz"):
            a, b = _sizes(bytes(ours)), _sizes(bytes(theirs))
            found.update((int(rid), column) for i, column in enumerate(columns)
                         if a[i:i + 1] != b[i:i + 1])
        return found
    finally:
        for suffix in ("_sins", "_scol", "_ins", "_col", ""):
            conn.execute(f"DROP TABLE IF EXISTS temp.{name}{suffix}")


def _postings(conn: sqlite3.Connection, table: str, term: str) -> set[tuple[int, Any, int]]:
    return {(int(r[0]), r[1], int(r[2])) for r in conn.execute(
        f"SELECT doc, col, offset FROM {table} WHERE term = ?", (term,))}


def _sizes(blob: bytes) -> list[int]:
    """The column sizes in an FTS5 docsize blob (one varint each)."""
    out, value = [], 0
    for byte in blob:  # SQLite's varints: big-endian groups of 7 bits
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = 0
    return out
