"""Full-text recall on PostgreSQL (issue 18): what FTS5 does for `MemoryStore` on SQLite.

The ``memory`` schema (`wardian.memory.schema_pg`) keeps each record's ``tsvector`` and
token count; this module holds the queries, and the totals BM25 needs (counted again only
after a write moved ``memory_version``). Scores are FTS5's
``bm25()`` (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6) summed
over the query's words, computed by the schema's ``bm25_term`` for the records that match,
so `wardian.memory.ranking` fuses the same numbers on both backends. One difference: a
word's document frequency ``n`` is the count `MemoryStore` already took, which stops at
``RECALL_EXACT_POSTINGS + 1``; such common words weigh a little more than FTS5 gives them.

Every function takes the store's connection (a `wardian._pg.PgConnection`) and the scope
condition `MemoryStore._scope_sql` wrote, over ``records r``.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["doc_freq", "index_problems", "match_rows", "newest_holding", "prefix_filter",
           "rows_holding", "term_scores"]

_QUERY = "phraseto_tsquery('wardian_fts', ?)"


def doc_freq(conn: sqlite3.Connection, term: str, cap: int) -> int:
    """How many records contain `term` (as a phrase), counting at most `cap`."""
    row = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM records WHERE fts @@ {_QUERY} LIMIT ?) m",
        (term, cap)).fetchone()
    return int(row[0])


_totals: dict[str, tuple[int, int, float]] = {}
"""database URL -> (memory version, rows, average tokens per row) last counted."""


def _stats(conn: sqlite3.Connection) -> tuple[int, float]:
    """(N, average tokens per record) for BM25, recounted only after a write."""
    version = int(conn.execute("SELECT changes FROM memory_version").fetchone()[0])
    key = str(getattr(conn, "url", ""))
    cached = _totals.get(key)
    if cached is not None and cached[0] == version:
        return cached[1], cached[2]
    row = conn.execute("SELECT COUNT(*), COALESCE(SUM(doclen), 0) FROM records").fetchone()
    rows, tokens = int(row[0]), int(row[1])
    _totals[key] = (version, rows, tokens / rows if rows else 1.0)
    return rows, (tokens / rows if rows else 1.0)


def _idf(n: int, total: int) -> float:
    value = math.log((total - n + 0.5) / (n + 0.5)) if total else 0.0
    return value if value > 0 else 1e-6


def _score(conn: sqlite3.Connection, terms: Sequence[str], freq: Mapping[str, int]
           ) -> tuple[str, list[Any]]:
    """The SQL sum of the BM25 terms of `terms` for ``records r``, with its parameters."""
    total, avgdl = _stats(conn)
    lexemes = {str(r[0]): list(r[1] or []) for r in conn.execute(
        "SELECT t, tsvector_to_array(to_tsvector('wardian_fts', t)) FROM unnest(?::text[]) t",
        (list(terms),))}
    parts: list[str] = []
    params: list[Any] = []
    for term in terms:
        parts.append("bm25_term(r.fts, r.doclen, ?::text[], ?, ?)")
        params += [lexemes.get(term, []), _idf(freq[term], total), max(avgdl, 1e-9)]
    return "(" + " + ".join(parts or ["0.0"]) + ")", params


def match_rows(
    conn: sqlite3.Connection, *, rare: Sequence[str], grouped: Sequence[str],
    freq: Mapping[str, int], where: str, params: Sequence[Any], depth: int,
    window: int | None,
) -> list[Any]:
    """Rows ``(rid, score, updated_at)`` of the best `depth` records matching any word of
    `rare` or all words of `grouped`, best first (newer first on a tie). With `window`,
    only the newest `window` matches are ranked (every word is common)."""
    tsquery = " || ".join([_QUERY] * len(rare)
                          + (["(" + " && ".join([_QUERY] * len(grouped)) + ")"]
                             if grouped else []))
    words = [*rare, *grouped]
    score, score_params = _score(conn, words, freq)
    match = f"r.fts @@ ({tsquery})"
    if window is None:
        return conn.execute(
            f"SELECT r.rowid AS rid, {score} AS score, r.updated_at FROM records r"
            f" WHERE {match}{where} ORDER BY score DESC, r.updated_at DESC LIMIT ?",
            [*score_params, *words, *params, depth]).fetchall()
    return conn.execute(
        f"SELECT w.rid, w.score, w.updated_at FROM (SELECT r.rowid AS rid, {score} AS score,"
        f" r.updated_at FROM records r WHERE {match}{where} ORDER BY r.rowid DESC LIMIT ?) w"
        " ORDER BY w.score DESC, w.updated_at DESC LIMIT ?",
        [*score_params, *words, *params, window, depth]).fetchall()


def term_scores(conn: sqlite3.Connection, term: str, freq: Mapping[str, int],
                rowids: Sequence[int]) -> list[Any]:
    """Rows ``(rowid, score)``: the BM25 term of `term` for those of `rowids` holding it."""
    score, params = _score(conn, [term], freq)
    return conn.execute(
        f"SELECT r.rowid, {score} FROM records r WHERE r.fts @@ {_QUERY}"
        " AND r.rowid = ANY(?::bigint[])", [*params, term, list(rowids)]).fetchall()


def newest_holding(conn: sqlite3.Connection, terms: Sequence[str], *, where: str,
                   params: Sequence[Any], depth: int) -> list[Any]:
    """Rows ``(rid, updated_at)``: the newest `depth` records in scope holding every one
    of `terms` (no BM25: these are the query's commonest words)."""
    tsquery = " && ".join([_QUERY] * len(terms))
    return conn.execute(
        f"SELECT r.rowid AS rid, r.updated_at FROM records r WHERE r.fts @@ ({tsquery})"
        f"{where} ORDER BY r.rowid DESC LIMIT ?", [*terms, *params, depth]).fetchall()


def rows_holding(conn: sqlite3.Connection, term: str, *, among: Sequence[str] = ()
                 ) -> set[int]:
    """The rowids of the records holding `term` and, given `among`, any one of `among`."""
    sql = f"SELECT r.rowid FROM records r WHERE r.fts @@ {_QUERY}"
    if among:
        sql += " AND r.fts @@ (" + " || ".join([_QUERY] * len(among)) + ")"
    return {int(r[0]) for r in conn.execute(sql, [term, *among])}


def prefix_filter(words: Sequence[str]) -> tuple[str, list[Any]]:
    """SQL condition on ``records`` (and parameters) for records holding every one of
    `words` (each ``\\w+``) as a word prefix: Garden's text filter."""
    query = " & ".join(f"'{w}':*" for w in words)
    return "fts @@ to_tsquery('wardian_fts', ?)", [query]


def index_problems(conn: sqlite3.Connection) -> list[str]:
    """What `MemoryStore.verify` reports about the full-text index: records whose indexed
    words differ from their text and evidence."""
    return [
        f"record {row[0]}: its text or evidence is not in the full-text index as stored"
        for row in conn.execute(
            "SELECT id FROM records WHERE fts IS DISTINCT FROM (to_tsvector('wardian_fts',"
            " text) || to_tsvector('wardian_fts', evidence)) ORDER BY id")]
