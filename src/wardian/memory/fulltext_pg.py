"""Full-text recall on PostgreSQL with its own text search: what FTS5 does on SQLite.

The ``memory`` schema (`wardian.memory.schema_pg`) keeps each record's ``tsvector`` as a
generated column over text and evidence (GIN indexed), built with the configuration
``wardian_english``: PostgreSQL's default parser and the Snowball English stemmer, no
stop words (recall drops its own, `wardian.memory.ranking.STOP_WORDS`), on the text with
punctuation turned into spaces (`document_sql`), so ``heron.payments.v2`` and
``pnpm-workspace.yaml`` are words as they are to FTS5. Each query term
(`wardian.memory.ranking.query_terms`) is a phrase (``phraseto_tsquery``), as FTS5 reads
a quoted string; FTS syntax in a query is therefore inert. Where this differs from
SQLite (Porter2 stems, case and diacritics of non-ASCII letters) is recorded in
``docs/decisions/postgres-fulltext.md``.

Scores: the rarest words (at most ``RECALL_EXACT_POSTINGS`` matches in all) are ranked
in SQL by the sum over them of idf x ``ts_rank`` (length-normalised); the score only
breaks ties between records of equal coverage (`wardian.memory.ranking.Candidate`), so
its scale need not be BM25's. Lexical recall is two round trips (`lexical_candidates`).

Every function takes the store's connection (a `wardian._pg.PgConnection`) and the scope
condition `RecallIndex._scope_sql` wrote, over ``records r``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from wardian._backend import Connection

__all__ = ["CONFIG", "PUNCTUATION", "document_sql", "index_problems", "lexical_candidates",
           "prefix_filter", "terms_held"]

CONFIG = "wardian_english"
"""The text search configuration of the ``memory`` schema (migration 7)."""

PUNCTUATION = ("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
               "\u00a0\u00ab\u00b7\u00bb\u2010\u2011\u2012\u2013\u2014\u2015\u2018\u2019"
               "\u201c\u201d\u2022\u2026\u2190\u2192\u2194\u21d2")
"""Characters that separate words before PostgreSQL's parser reads a text: ASCII
punctuation, and the dashes, quotes, bullets and arrows that notes are written with
(the parser would keep ``a.b`` and ``a/b.c`` whole as host and file names, and, under a
``C`` ctype, any non-ASCII character inside a word)."""


def _spaced(expression: str) -> str:
    """SQL: `expression` (text) with every `PUNCTUATION` character a space."""
    source = PUNCTUATION.replace("'", "''")
    return f"translate({expression}, '{source}', '{' ' * len(PUNCTUATION)}')"


def document_sql(expression: str) -> str:
    """SQL: the ``tsvector`` of the text `expression`, as records are indexed."""
    return f"to_tsvector('{CONFIG}'::regconfig, {_spaced(expression)})"


_PHRASE = f"phraseto_tsquery('{CONFIG}'::regconfig, {_spaced('u.t')})"
"""SQL: the phrase query of a term ``u.t``, cut as `document_sql` cuts the records."""

_PART = re.compile(r"[^\W_]+")


def prefix_filter(words: Sequence[str]) -> tuple[str, list[Any]]:
    """SQL condition on ``records`` (and parameters) for records holding every one of
    `words` (each ``\\w+``): Garden's text filter. Each word's letter-and-digit parts
    must all be there (stemmed as the index is), the last as a prefix (``deploy`` finds
    ``deployment``), as FTS5 reads ``"word"*``. A word with no part (``___``) is left out;
    with none left, every record passes."""
    terms: list[str] = []
    for word in words:
        parts = _PART.findall(word)
        terms += [f"'{p}'" for p in parts[:-1]] + [f"'{p}':*" for p in parts[-1:]]
    if not terms:
        return "TRUE", []
    return f"fts @@ to_tsquery('{CONFIG}'::regconfig, ?)", [" & ".join(terms)]


def index_problems(conn: Connection) -> list[str]:
    """How the full-text index differs from the records: never, [] (each record's
    ``tsvector`` is a generated column, which the server keeps equal to its text and
    evidence). `wardian.memory.fulltext_sqlite.index_problems` checks FTS5's."""
    return []


def lexical_candidates(
    conn: Connection, terms: Sequence[str], *, where: str, params: Sequence[Any],
    depth: int, exact_postings: int,
) -> tuple[dict[int, Any], int, dict[str, float]]:
    """`RecallIndex._lexical_candidates` on PostgreSQL, in two round trips.

    1. Per term: its phrase query and its document frequency (counted up to
       `exact_postings` + 1); the store's largest rowid (idf's N, as on SQLite).
    2. The `depth` best matches in scope of the rarest terms (`exact_postings` postings
       in all; the GIN index finds them) by idf-weighted ``ts_rank``, the newest `depth`
       records in scope holding every commoner term when there are two or more of them
       (or only those), the newest `depth` holding each compound name
       (`wardian.memory.ranking.is_compound`), and for each of these candidates which of
       the query's terms it holds.

    Returns what `RecallIndex._lexical_candidates` returns: the candidates by rowid, how
    many of `terms` no record contains and the idf weight of each term some record holds.
    The same selection as on SQLite; only the tie-breaking score differs in scale.
    """
    from wardian.memory.ranking import Candidate, coverage, idf, is_compound

    cap = exact_postings + 1
    head = conn.execute(
        "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM records),"
        f" array(SELECT {_PHRASE}::text FROM unnest(?::text[]) WITH ORDINALITY u(t, i)"
        " ORDER BY u.i),"
        " array(SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM records"
        f" WHERE fts @@ {_PHRASE} LIMIT ?) m)"
        " FROM unnest(?::text[]) WITH ORDINALITY u(t, i) ORDER BY u.i)",
        (list(terms), cap, list(terms))).fetchone()
    total = int(head[0])
    query = dict(zip(terms, (str(q) for q in head[1]), strict=True))
    freq = {t: int(n) for t, n in zip(terms, head[2], strict=True)}
    known = sorted((t for t in terms if freq[t]), key=lambda t: freq[t])
    unknown = sum(not freq[t] and not is_compound(t) for t in terms)
    if not known:
        return {}, unknown, {}
    weights = {t: idf(freq[t], total) for t in known}
    # As on SQLite: a compound name weighs in coverage; the rare words rank and the
    # records holding the name are taken newest first.
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
        score = " + ".join(["? * ts_rank(r.fts, ?::tsquery, 1)"] * len(rare))
        parts.append(
            f"(SELECT r.rowid AS rid, ({score})::float8 AS score, r.updated_at, 0 AS every,"
            f" r.fts FROM records r WHERE r.fts @@ (?::tsquery){where}"
            " ORDER BY score DESC, r.updated_at DESC, r.rowid LIMIT ?)")
        args += [x for t in rare for x in (weights[t], query[t])]
        args += [" | ".join(f"({query[t]})" for t in rare), *params, depth]
    if common and (len(common) >= 2 or not rare):
        parts.append(
            "(SELECT r.rowid AS rid, NULL::float8 AS score, r.updated_at, 1 AS every, r.fts"
            f" FROM records r WHERE r.fts @@ (?::tsquery){where}"
            " ORDER BY r.rowid DESC LIMIT ?)")
        args += [" & ".join(f"({query[t]})" for t in common), *params, depth]
    for name in names:
        parts.append(
            "(SELECT r.rowid AS rid, NULL::float8 AS score, r.updated_at, 2 AS every, r.fts"
            f" FROM records r WHERE r.fts @@ (?::tsquery){where}"
            " ORDER BY r.rowid DESC LIMIT ?)")
        args += [query[name], *params, depth]
    holds = ", ".join(["c.fts @@ (?::tsquery)"] * len(known))
    found: dict[int, Any] = {}
    every_common: set[int] = set()
    held_by: dict[int, list[bool]] = {}
    # In SQLite's order (fusion breaks full ties by it): the ranking of the rare words,
    # then the newest records holding every common word.
    for rid, score, updated_at, every, *held in conn.execute(
            f"SELECT c.rid, c.score, c.updated_at, c.every, {holds}"
            f" FROM ({' UNION ALL '.join(parts)}) c ORDER BY c.every, c.score DESC,"
            " CASE WHEN c.every = 0 THEN c.updated_at END DESC,"
            " CASE WHEN c.every = 0 THEN c.rid END, c.rid DESC",
            [*(query[t] for t in known), *args]):
        rid = int(rid)
        if every == 1:
            every_common.add(rid)
        if rid not in found:
            found[rid] = Candidate(rid, updated_at=updated_at,
                                   lexical=float(score) if score is not None else 0.0)
        held_by[rid] = [bool(h) for h in held]
    every_weight = list(weights.values())
    for rid, candidate in found.items():
        holds_terms = [t for t, h in zip(known, held_by[rid], strict=True)
                       if h or (rid in every_common and t in common)]
        candidate.coverage = coverage([weights[t] for t in holds_terms], every_weight,
                                      unknown=unknown)
        candidate.held = {t: weights[t] for t in holds_terms}
    return found, unknown, weights


def terms_held(conn: Connection, rowids: Sequence[int], terms: Sequence[str]
               ) -> dict[int, set[str]]:
    """`RecallIndex._terms_held` on PostgreSQL: which of `terms` each record of `rowids`
    holds (its ``tsvector`` against each term's phrase, as `lexical_candidates` asks)."""
    held: dict[int, set[str]] = {}
    for rid, flags in conn.execute(
            f"SELECT r.rowid, array(SELECT r.fts @@ {_PHRASE} FROM unnest(?::text[])"
            " WITH ORDINALITY u(t, i) ORDER BY u.i) FROM records r"
            " WHERE r.rowid = ANY(?::bigint[])",
            [list(terms), [int(r) for r in rowids]]):
        held[int(rid)] = {t for t, h in zip(terms, flags, strict=True) if h}
    return held
