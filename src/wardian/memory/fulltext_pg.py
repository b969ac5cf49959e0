"""Full-text recall on PostgreSQL: what FTS5 does for `MemoryStore` on SQLite.

The ``memory`` schema (`wardian.memory.schema_pg`) keeps each record's ``tsvector`` (GIN
indexed) and token count; this module holds the queries, and the totals BM25 needs
(counted again only after a write moved ``memory_version``). Scores are FTS5's ``bm25()``
(k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6) summed over the
query's rarest words, computed in SQL for the records that match them (at most
``RECALL_EXACT_POSTINGS``), so `wardian.memory.ranking` fuses the same numbers on both
backends. Lexical recall is two round trips (`lexical_candidates`); the vectors of the
semantic half are `MemoryStore`'s per-process cache on both backends.

Every function takes the store's connection (a `wardian._pg.PgConnection`) and the scope
condition `MemoryStore._scope_sql` wrote, over ``records r``.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from typing import Any

__all__ = ["index_problems", "lexical_candidates", "prefix_filter", "terms_held"]

_QUERY = "fts_query(?)"
"""A query word as the schema's trigger indexes words (`wardian.memory.schema_pg`)."""


_totals: dict[str, tuple[int, int, float]] = {}
"""database URL -> (memory version, rows, average tokens per row) last counted."""


def _stats(conn: sqlite3.Connection, version: int) -> tuple[int, float]:
    """(N, average tokens per record) for BM25, recounted only after a write moved
    ``memory_version`` (read by the caller: `version`)."""
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


def prefix_filter(words: Sequence[str]) -> tuple[str, list[Any]]:
    """SQL condition on ``records`` (and parameters) for records holding every one of
    `words` (each ``\\w+``) as a word prefix: Garden's text filter. Each word is cut,
    folded and stemmed as the index's words are (``fts_query``: ``ÄRG`` is ``arg``), as
    FTS5 reads a query with its own tokenizer."""
    # A word with no index word in it (``___``) is left out, as FTS5 drops an empty phrase.
    return ("fts @@ (SELECT string_agg('(' || q::text || ')', ' & ')::tsquery FROM"
            " (SELECT fts_query(w, true) AS q FROM unnest(?::text[]) w) x"
            " WHERE numnode(q) > 0)"), [list(words)]


def lexical_candidates(
    conn: sqlite3.Connection, terms: Sequence[str], *, where: str, params: Sequence[Any],
    depth: int, exact_postings: int,
) -> tuple[dict[int, Any], int, dict[str, float]]:
    """`RecallIndex._lexical_candidates` on PostgreSQL, in two round trips whatever the
    query (the SQLite version's dozen small queries each cost one here).

    1. Per term: its document frequency (counted up to `exact_postings` + 1), its
       lexemes; the store's largest rowid and ``memory_version`` (the BM25 totals are
       recounted only when it moved).
    2. The `depth` best BM25 matches in scope of the rarest terms (`exact_postings`
       postings in all; the GIN index finds them, each one's term frequencies come from
       its ``tsvector`` filtered to the query's lexemes, not from unnesting it once per
       term), the newest `depth` records in scope holding every commoner term when there
       are two or more of them (or only those), the newest `depth` holding each compound
       name (`wardian.memory.ranking.is_compound`), and for each of these candidates
       which of the query's terms it holds.

    Returns what `RecallIndex._lexical_candidates` returns: the candidates by rowid, how
    many of `terms` no record contains and the idf weight of each term some record holds.
    Same selection and scores as SQLite (FTS5 ``bm25()``: `_score`).
    """
    from wardian.memory.ranking import Candidate, coverage, idf, is_compound

    cap = exact_postings + 1
    head = conn.execute(
        "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM records),"
        " (SELECT changes FROM memory_version), array(SELECT (SELECT COUNT(*) FROM"
        " (SELECT 1 FROM records WHERE fts @@ fts_query(u.t)"
        " LIMIT ?) m)"
        " FROM unnest(?::text[]) WITH ORDINALITY u(t, i) ORDER BY u.i),"
        " array(SELECT array_to_string(tsvector_to_array(fts_vector(u.t)),"
        " ' ') FROM unnest(?::text[]) WITH ORDINALITY u(t, i) ORDER BY u.i)",
        (cap, list(terms), list(terms))).fetchone()
    total = int(head[0])
    freq = {t: int(n) for t, n in zip(terms, head[2], strict=True)}
    lexemes = {t: [x for x in str(lx).split(" ") if x] for t, lx in zip(terms, head[3],
                                                                          strict=True)}
    known = sorted((t for t in terms if freq[t]), key=lambda t: freq[t])
    unknown = sum(not freq[t] and not is_compound(t) for t in terms)
    if not known:
        return {}, unknown, {}
    weights = {t: idf(freq[t], total) for t in known}
    # As on SQLite: a compound name weighs in coverage; BM25 ranks single words only and
    # the records holding the name are taken newest first.
    names = [t for t in known if is_compound(t)]
    words = [t for t in known if not is_compound(t)]
    rare: list[str] = []
    used = 0
    for term in words:
        if used + freq[term] > exact_postings:
            break
        rare.append(term)
        used += freq[term]
    common = words[len(rare):]
    parts: list[str] = []
    args: list[Any] = []
    if rare:
        rows, avgdl = _stats(conn, int(head[1]))
        lex, term_of, idfs, width = [], [], [], []
        for i, term in enumerate(rare):
            for lexeme in lexemes[term]:
                lex.append(lexeme)
                term_of.append(i)
                idfs.append(_idf(freq[term], rows))
                width.append(len(lexemes[term]))
        # Per matching record: the BM25 term of each rare word (tf of a several-lexeme
        # word: the mean of its lexemes'), summed; its tsvector cut to the query's
        # lexemes first (setweight + ts_filter, in C) so only those few are unnested.
        score = ("(SELECT COALESCE(sum(t.idf * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75"
                 " * r.doclen / ?))), 0.0) FROM (SELECT q.term, max(q.idf) AS idf,"
                 " sum(cardinality(u.positions))::float8 / max(q.width) AS tf"
                 " FROM unnest(ts_filter(setweight(r.fts, 'A', ?::text[]), '{a}')) u"
                 " JOIN unnest(?::text[], ?::int[], ?::float8[], ?::int[])"
                 " q(lexeme, term, idf, width) ON q.lexeme = u.lexeme GROUP BY q.term) t)")
        parts.append(
            f"(SELECT r.rowid AS rid, {score} AS score, r.updated_at, 0 AS every, r.fts"
            f" FROM records r WHERE r.fts @@ ({' || '.join([_QUERY] * len(rare))}){where}"
            " ORDER BY score DESC, r.updated_at DESC, r.rowid LIMIT ?)")
        args += [max(avgdl, 1e-9), lex, lex, term_of, idfs, width, *rare, *params, depth]
    if common and (len(common) >= 2 or not rare):
        parts.append(
            "(SELECT r.rowid AS rid, NULL::float8 AS score, r.updated_at, 1 AS every, r.fts"
            f" FROM records r WHERE r.fts @@ ({' && '.join([_QUERY] * len(common))}){where}"
            " ORDER BY r.rowid DESC LIMIT ?)")
        args += [*common, *params, depth]
    for name in names:
        parts.append(
            "(SELECT r.rowid AS rid, NULL::float8 AS score, r.updated_at, 2 AS every, r.fts"
            f" FROM records r WHERE r.fts @@ {_QUERY}{where} ORDER BY r.rowid DESC LIMIT ?)")
        args += [name, *params, depth]
    holds = ", ".join([f"c.fts @@ {_QUERY}"] * len(known))
    found: dict[int, Any] = {}
    every_common: set[int] = set()
    held_by: dict[int, list[bool]] = {}
    # In SQLite's order (fusion breaks full ties by it): the BM25 ranking, then the
    # newest records holding every common word.
    for rid, bm25, updated_at, every, *held in conn.execute(
            f"SELECT c.rid, c.score, c.updated_at, c.every, {holds}"
            f" FROM ({' UNION ALL '.join(parts)}) c ORDER BY c.every, c.score DESC,"
            " CASE WHEN c.every = 0 THEN c.updated_at END DESC,"
            " CASE WHEN c.every = 0 THEN c.rid END, c.rid DESC",
            [*known, *args]):
        rid = int(rid)
        if every == 1:
            every_common.add(rid)
        if rid not in found:
            found[rid] = Candidate(rid, updated_at=updated_at,
                                   lexical=float(bm25) if bm25 is not None else 0.0)
        held_by[rid] = [bool(h) for h in held]
    every_weight = list(weights.values())
    for rid, candidate in found.items():
        holds_terms = [t for t, h in zip(known, held_by[rid], strict=True)
                       if h or (rid in every_common and t in common)]
        candidate.coverage = coverage([weights[t] for t in holds_terms], every_weight,
                                      unknown=unknown)
        candidate.held = {t: weights[t] for t in holds_terms}
    return found, unknown, weights


def terms_held(conn: sqlite3.Connection, rowids: Sequence[int], terms: Sequence[str]
               ) -> dict[int, set[str]]:
    """`RecallIndex._terms_held` on PostgreSQL: which of `terms` each record of `rowids`
    holds (its ``tsvector`` against each word, as `lexical_candidates` asks)."""
    holds = ", ".join([f"r.fts @@ {_QUERY}"] * len(terms))
    held: dict[int, set[str]] = {}
    for rid, *flags in conn.execute(
            f"SELECT r.rowid, {holds} FROM records r WHERE r.rowid = ANY(?::bigint[])",
            [*terms, [int(r) for r in rowids]]):
        held[int(rid)] = {t for t, h in zip(terms, flags, strict=True) if h}
    return held


def index_problems(conn: sqlite3.Connection) -> list[str]:
    """What `MemoryStore.verify` reports about the full-text index: records whose indexed
    words differ from their text and evidence."""
    return [
        f"record {row[0]}: its text or evidence is not in the full-text index as stored"
        for row in conn.execute(
            "SELECT id FROM records WHERE fts IS DISTINCT FROM (fts_vector(text)"
            " || fts_vector(evidence)) ORDER BY id")]
