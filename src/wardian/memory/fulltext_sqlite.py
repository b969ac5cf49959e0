"""Full-text on SQLite: what FTS5 does for `wardian.memory.store.MemoryStore`.

The ``memory.db`` table ``records_fts`` (FTS5, external content ``records``, kept by
triggers; `wardian.memory.schema`) indexes each record's text and evidence. This module
writes the statements on it that differ from PostgreSQL's (`wardian.memory.fulltext_pg`
offers the same functions): Garden's text filter (`prefix_filter`) and the index check
of ``wardian doctor`` (`index_problems`). `wardian.memory.db.MemoryDB.fulltext` picks the
module of the open database.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import Sequence
from typing import Any

from wardian._backend import Connection

__all__ = ["index_problems", "prefix_filter"]


def prefix_filter(words: Sequence[str]) -> tuple[str, list[Any]]:
    """SQL condition on ``records`` (and parameters) for records holding every one of
    `words` (each ``\\w+``), each as the prefix of a word (``deploy`` finds
    ``deployment``): Garden's text filter. Each word is quoted, so FTS5 operators in the
    input are plain words."""
    match = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
    return "rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)", [match]


def index_problems(conn: Connection) -> list[str]:
    """Every way the FTS5 index ``records_fts`` differs from the records, one line each
    naming the record (or index row); [] when it holds exactly the records' rows, each
    with the words of its own text and evidence as stored. FTS5's own ``integrity-check``
    (with ``rank = 1`` it compares the index with the ``records`` content) when the
    connection may write; otherwise, or to name the records when that check fails, a
    fresh index of the records in the connection's ``temp`` schema compared term by term
    with the stored one (`_fts_differences`). Read-only: the comparison index is dropped
    after."""
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


def _integrity_check_passes(conn: Connection) -> bool | None:
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


def _fts_differences(conn: Connection) -> set[tuple[int, str]]:
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


def _postings(conn: Connection, table: str, term: str) -> set[tuple[int, Any, int]]:
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
