"""Recall's word statistics kept warm between queries of one long-running process.

`RecallIndex.recall` on SQLite asks FTS5, per query, for each word's document frequency,
the BM25 ranking of the rarest words' matches and which records hold each word. Until
something writes to ``memory.db`` the answers to those questions do not change, and a
long-running process (the MCP server; bench/mcp_bench.py) asks them again and again for the words
its agent uses. `TermStats` keeps them
per store until the file's data version moves (any commit, by this connection or another
process), and `rank_rare` answers the BM25 question from them with exactly what the SQL
returned before:

* FTS5's ``bm25()`` of a match of ``"a" OR "b"`` is the sum, in the query's phrase order,
  of each phrase's own term (a phrase a row lacks adds exactly 0.0), and each term is
  what ``bm25()`` gives for that phrase alone (the same idf, average length and row
  length). `rank_rare` adds the cached per-word values in that order, so every score is
  the same double the SQL computed.
* The SQL ranked the best ``wide`` matches (BM25, then rowid: FTS5 yields rowids in
  ascending order and SQLite keeps ties of an ``ORDER BY … LIMIT`` in the order they
  came), kept those in scope and ordered them by BM25 then newest; with too few left it
  ranked every match in scope. `rank_rare` does the same steps in the same order.

Spec: "Save and inspect memory" (recall); DESIGN.md "Storage" → Recall.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from wardian._backend import Connection

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_POSTINGS", "TermStats", "rank_rare"]

MAX_POSTINGS = 250_000
"""At most this many (rowid, BM25) pairs are kept (~25 MB); the words cached first are
dropped first beyond it."""


def _phrase(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


class TermStats:
    """One store's word statistics at one data version (a plain slotted class: recall is
    a hot path). Build a new one when `version` no longer matches.

    Attributes:
        version: the data version the statistics are true for (`MemoryStore._version`).
        total: ``MAX(rowid)`` of ``records`` (BM25's record count), or None until read.
        records: records recall returned, by rowid (immutable `Record` tuples, a bounded
            number: `RecallIndex._records_by_rowid`): the same few answer many queries.
    """

    __slots__ = ("_bm25", "_freq", "_holding", "_postings", "_scopes", "records", "total",
                 "version")

    def __init__(self, version: Any) -> None:
        self.version = version
        self.total: int | None = None
        self._freq: dict[str, int] = {}
        self._bm25: dict[str, dict[int, float]] = {}
        self._holding: dict[str, frozenset[int]] = {}
        self._postings = 0
        self._scopes: dict[Any, Mapping[int, str]] = {}
        self.records: dict[int, Any] = {}

    def scope(self, key: Any, build: Callable[[], Mapping[int, str]]) -> Mapping[int, str]:
        """``{rowid: updated_at}`` of the records in the scope named `key` (e.g. agent
        and workspace), from `build` the first time."""
        found = self._scopes.get(key)
        if found is None:
            found = self._scopes[key] = build()
        return found

    def doc_freq(self, conn: Connection, term: str, cap: int, *,
                 keep_rows: bool = False) -> int:
        """How many records hold `term`, counting at most `cap` (FTS5 phrase match).
        `keep_rows`: read the rowids while counting and, when they are fewer than `cap`,
        keep them for `holding` (one walk of the posting list instead of two)."""
        found = self._freq.get(term)
        if found is None and keep_rows:
            rows = frozenset(int(r[0]) for r in conn.execute(
                "SELECT rowid FROM records_fts WHERE records_fts MATCH ? LIMIT ?",
                (_phrase(term), cap)))
            found = self._freq[term] = len(rows)
            if found < cap:
                self._keep(term, rows)
        elif found is None:
            found = self._freq[term] = int(conn.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ?"
                " LIMIT ?)", (_phrase(term), cap)).fetchone()[0])
        return found

    def bm25(self, conn: Connection, term: str) -> dict[int, float]:
        """``{rowid: bm25()}`` of every record holding `term` (FTS5's value: negative,
        lower is better). For the rare words only: it reads the whole posting list."""
        found = self._bm25.get(term)
        if found is None:
            found = dict(conn.execute(
                "SELECT rowid, bm25(records_fts) FROM records_fts WHERE records_fts MATCH ?",
                (_phrase(term),)))
            self._postings += len(found)
            while self._postings > MAX_POSTINGS and self._bm25:
                self._postings -= len(self._bm25.pop(next(iter(self._bm25))))
            self._bm25[term] = found
        return found


    def holding(self, conn: Connection, term: str) -> frozenset[int]:
        """The rowids of every record holding `term` (a phrase match: for a compound name,
        whose BM25 is not asked). Reads the whole posting list: for rare terms only."""
        found = self._holding.get(term)
        if found is None:
            found = frozenset(int(r[0]) for r in conn.execute(
                "SELECT rowid FROM records_fts WHERE records_fts MATCH ?", (_phrase(term),)))
            self._keep(term, found)
        return found

    def _keep(self, term: str, rows: frozenset[int]) -> None:
        self._postings += len(rows)
        while self._postings > MAX_POSTINGS and self._holding:
            self._postings -= len(self._holding.pop(next(iter(self._holding))))
        self._holding[term] = rows


def rank_rare(per_term: Sequence[dict[int, float]], scope: Mapping[int, str], *,
              depth: int, wide: int, used: int) -> list[tuple[int, float, str]]:
    """``(rowid, score, updated_at)`` of the `depth` best BM25 matches in scope of any of
    the rare words, best first: what ``RecallIndex._rank_rare``'s SQL returns (module).

    Args:
        per_term: `TermStats.bm25` of each rare word, in the query's phrase order.
        scope: ``{rowid: updated_at}`` of the records in scope (`TermStats.scope`).
        depth: how many to return. wide: how many best matches are looked at first.
        used: the words' postings in all (with more than `wide`, too few in scope among
            the first `wide` means ranking every match in scope).
    """
    scores: dict[int, float] = {}
    for index, values in enumerate(per_term):
        if index == 0:
            scores = dict(values)
            continue
        for rid, value in values.items():
            scores[rid] = scores.get(rid, 0.0) + value
    # (BM25, rowid) pairs are distinct, so a plain sort gives the SQL's order.
    best = sorted(zip(scores.values(), scores.keys(), strict=True))[:wide]
    stamp = scope.get
    rows = [(rid, value, when) for value, rid in best if (when := stamp(rid)) is not None]
    if len(rows) < depth and used > wide:
        rows = [(rid, scores[rid], when) for rid in sorted(scores)
                if (when := stamp(rid)) is not None]
    rows.sort(key=lambda row: row[2], reverse=True)  # stable: ties keep their order
    rows.sort(key=lambda row: row[1])
    return [(rid, -value, when) for rid, value, when in rows[:depth]]
