"""`RecallIndex`: recall over ``memory.db`` — lexical (FTS5/BM25 on SQLite, native
full-text on PostgreSQL) fused with the semantic vectors, their caches and backfill.

It reads the records `MemoryStore` writes (never writing records, revisions or sources)
and owns ``record_vectors``: the vector of a record's current text, written in the
store's transaction (`store_vector_in_transaction`) or by `backfill_vectors`. It works
on the database object it is given (`MemoryDB`: the store's own connection).

Spec: "Save and inspect memory" (recall); DESIGN.md "Storage" (recall).
"""

from __future__ import annotations

import builtins
import math
import os
import sqlite3
import sys
import weakref
from collections.abc import Container, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian._backend import Connection, Errors, backend_of
from wardian._db import atomic
from wardian.memory.models import Record
from wardian.memory.store import UNSET, _Unset, record_from_row

if TYPE_CHECKING:
    from typing import Any

    from wardian.memory.bm25_warm import TermStats
    from wardian.memory.db import MemoryDB
    from wardian.memory.embedding import Embedder
    from wardian.memory.ranking import Candidate, Considered

__all__ = ["RECALL_EXACT_POSTINGS", "RecallIndex", "Recalled"]

RECALL_EXACT_POSTINGS = 1_000
"""How many matches of the query's rarest words `recall` ranks exactly; commoner words
count only where they meet (see `recall`). FTS5 spends about 1 µs per posting it
merges and scores, so this bounds the lexical half of a query to a few milliseconds."""
_RARE_WIDE = 8
"""BM25 ranks the best `_RARE_WIDE` x depth matches of the rare words before the scope
filter (see `RecallIndex._rank_rare`)."""
_KEPT_RECORDS = 2_000
"""At most this many recalled records are kept for the next queries (`TermStats.records`)."""
_PREFILTER_DIMS = 64
"""Along how many of the set's principal directions the semantic search scans every row
(float32); the best rows by them (the shortlist) are rescored with the whole vectors."""
_SHORTLIST_MIN = 300
_SHORTLIST_EVERY = 160
"""The shortlist holds one row in `_SHORTLIST_EVERY` of the set (at least
`_SHORTLIST_MIN`, and 10 x the depth asked for)."""
_COV_ROWS = 8_192
"""Past this many vectors the scores' spread is estimated from an evenly spaced sample."""
_PREFILTER_Z = 2.0
"""Vector search keeps the head scores this many deviations above their mean."""
_NUMPY_FROM = 1_500
"""From this many vectors on, a scope's vector set is built with NumPy and kept on disk
(`wardian.memory.vector_file`) with its codes (`wardian.memory.vector_codes`): a later
process searches them with NumPy when it has NumPy loaded, and without it otherwise.
Fewer are scanned in pure Python (NumPy's import costs more than that scan)."""



class _Matrix(NamedTuple):
    """A scope's vectors for NumPy search: all (n x 256 float16, as stored); each one's
    centred coordinates (float32, ``head``) along the set's first `_PREFILTER_DIMS`
    principal directions; those directions (``basis``, dims x dims, one per row, most
    variance first) with the variance along each; and the column means (mean and spread
    of any query's scores; the variance from a sample past `_COV_ROWS` rows). `full`
    becomes float32 (the same values) once the set serves a second query: converting the
    few hundred rows a query rescores from float16 cost more than the rest of the search,
    and a one-query process (``wardian memory recall``) would not get that back."""

    full: Any
    head: Any
    basis: Any
    variance: Any
    means: Any


def _principal_head(np: Any, full: Any, means: Any, cov: Any) -> tuple[Any, Any, Any]:
    """(head, basis, variance) of a set's vectors `full` (n x dims) with column `means` and
    covariance `cov`: the directions along which the vectors vary (``basis``, dims x dims
    float32, one per row, most variance first), the variance along each, and every
    vector's centred coordinates along the first `_PREFILTER_DIMS` (``head``, n x k,
    float32). A query's scores by ``head`` are its full scores less their mean, as near
    as k of the dims dimensions can come (the best k-dimensional approximation of the
    scores over the set), so the rows they rank first hold the set's nearest."""
    k = min(_PREFILTER_DIMS, full.shape[1])
    values, vectors = np.linalg.eigh(cov.astype(np.float64))
    order = np.argsort(values)[::-1]
    basis = np.ascontiguousarray(vectors[:, order].T, dtype=np.float32)
    variance = np.maximum(values[order], 0.0).astype(np.float32)
    proj = np.ascontiguousarray(basis[:k].T)
    head = np.empty((full.shape[0], k), dtype=np.float32)
    for start in range(0, full.shape[0], _COV_ROWS):  # a block at a time: bounded memory
        block = full[start:start + _COV_ROWS].astype(np.float32) - means
        head[start:start + _COV_ROWS] = block @ proj
    return head, basis, variance


def _phrase(token: str) -> str:
    """`token` as an FTS5 string (a phrase), so FTS syntax in a query is inert."""
    return '"' + token.replace('"', '""') + '"'



class Recalled(NamedTuple):
    """What `RecallIndex.recall_with_nearest` found: ``records``, the matches best first
    ([] when nothing fits), and ``nearest``, records below the relevance floor that came
    nearest (only when ``records`` is empty; they may not answer the query)."""

    records: builtins.list[Record]
    nearest: builtins.list[Record]



class RecallIndex:
    """Recall over the records of `db` (the store's `MemoryDB`), with the caches that keep
    it fast across queries (vector sets, warm word statistics, recalled records): valid
    until anything writes to the file. Read-only but for ``record_vectors``.

    Args:
        db: the open database; the index uses its connection and never opens another
            (but a private in-memory FTS5 table for `_terms_held`).
    """

    def __init__(self, db: MemoryDB) -> None:
        self.db = db
        self.path = db.path
        self.conn: Connection = db.conn
        self._held_db: Connection | None = None
        self._embedder: Embedder | _Unset | None = UNSET
        # (version, entry, name of the file the entry was read from or None)
        self._vectors: dict[tuple[str, str | None], tuple[Any, tuple[Any, ...], str | None]] = {}
        self._vectors_query: dict[tuple[str, str | None], int] = {}
        self._queries = 0  # recall queries so far (a vector set's second query converts it)
        self._terms: TermStats | None = None

    def recall(
        self, agent_id: str, query: str, *, limit: int = 10, workspace: str | None = None
    ) -> builtins.list[Record]:
        """Active records that fit `query`, best first; [] when nothing fits. Read-only.

        Lexically, a record scores the idf-weighted share of the query's informative
        words (`wardian.memory.ranking.query_terms`: stop words dropped) it contains,
        with FTS5 BM25 breaking ties, fused with the semantic score when the embedding
        model is installed, under a relevance floor (`wardian.memory.ranking`). Latency
        stays bounded at any store size (bench/memory_bench.py at 100k records): the
        rarest words, up to `RECALL_EXACT_POSTINGS` matches in all, are matched exactly;
        words commoner than that only count for records that contain all of them (the
        newest such records) or that the rarer words found.

        Args:
            query: free text; words are matched case-insensitively (FTS syntax is inert).
            limit: maximum number of records (>= 1).
            workspace: when given, only agent-scoped records and records of this workspace.
        """
        return self.recall_with_nearest(agent_id, query, limit=limit, workspace=workspace,
                                        nearest=0).records

    def recall_with_nearest(
        self, agent_id: str, query: str, *, limit: int = 10, workspace: str | None = None,
        nearest: int | None = None,
    ) -> Recalled:
        """`recall`, and when it finds nothing, the records that came nearest below the
        relevance floor (`wardian.memory.ranking.nearest`), for the caller to show as such,
        never as matches. Read-only. Spec: "Save and inspect memory" (recall).

        Args:
            agent_id, query, limit, workspace: as in `recall`.
            nearest: how many nearest records at most (>= 0); None:
                `wardian.memory.ranking.NEAREST`.

        Returns:
            `Recalled`: ``records`` exactly as `recall` returns them; ``nearest`` empty
            whenever ``records`` is not, or when the query has no informative word.
        """
        from wardian.memory.ranking import NEAREST, fuse
        from wardian.memory.ranking import nearest as below_floor

        count = NEAREST if nearest is None else nearest
        seen = self.recall_considered(agent_id, query, limit=limit, workspace=workspace)
        ranked = fuse(seen.candidates, semantic=seen.semantic, limit=limit,
                      all_known=seen.all_known, margin=seen.margin)
        near = ([] if ranked or count <= 0 else
                below_floor(seen.candidates, semantic=seen.semantic, count=count))
        # `_terms` is this call's (`_warm` brought it to the current version) whenever the
        # warm path is in use; the records it returned stay valid with it.
        kept = self._terms.records if self._terms is not None else None
        return Recalled(self._records_by_rowid(agent_id, [c.rowid for c in ranked], kept),
                        self._records_by_rowid(agent_id, [c.rowid for c in near], kept))

    def recall_considered(
        self, agent_id: str, query: str, *, limit: int = 10, workspace: str | None = None
    ) -> Considered:
        """What `recall` weighs before its relevance floor: every candidate record with
        its coverage, BM25, cosine and standing-out, and how many of the query's words
        the store has never seen (`wardian.memory.ranking.Considered`). Read-only; for
        `recall` itself and for explaining its choice (``bench/recall_bench.py
        --features``). Arguments as in `recall`."""
        from wardian.memory.ranking import Considered, query_terms, semantic_query

        terms = query_terms(query)
        if not terms:
            return Considered([], terms=0, unknown=0, semantic=False)
        self._queries += 1
        depth = max(30, 3 * limit)
        candidates, unknown, weights, deferred = self._lexical_candidates(
            agent_id, terms, workspace=workspace, depth=depth)
        embedder = self.embedder()
        vector = (embedder.embed(semantic_query(query, workspace))
                  if embedder is not None else None)
        margin = None
        lexical = set(candidates)
        if vector is not None:
            margin = self._semantic_candidates(agent_id, workspace, vector, depth, candidates)
        # Every candidate whose held words are not known yet, in one look at them alone.
        postings, every, common = deferred if deferred is not None else ({}, set(), [])
        self._cover(candidates, [rid for rid in candidates
                                 if deferred is not None or rid not in lexical],
                    weights, unknown, postings, holds_all=every, all_of=common)
        return Considered(builtins.list(candidates.values()), terms=len(terms),
                          unknown=unknown, semantic=vector is not None, margin=margin)

    def _cover(self, found: dict[int, Candidate], rowids: Sequence[int],
               weights: dict[str, float], unknown: int,
               postings: Mapping[str, Container[int]], *, holds_all: Container[int] = (),
               all_of: Sequence[str] = ()) -> None:
        """Give the candidates of `rowids` their coverage and held words (`weights`: idf
        of each query word some record holds): coverage is the record's, however it was
        found. Which records hold a word of `postings` is read there (the rare words'
        posting lists, already at hand), and the records of `holds_all` hold every word
        of `all_of`; the other words cost a look at the other records alone, never a
        word's posting list."""
        if not rowids or not weights:
            return
        from wardian.memory.ranking import coverage

        terms = builtins.list(weights)
        looked_up = [t for t in terms if t not in postings]
        known_all = set(all_of)
        unsure = ([rid for rid in rowids if rid not in holds_all]
                  if known_all.issuperset(looked_up) else rowids)
        held: dict[int, set[str]] = {}
        if looked_up and unsure and self.db.dialect == "postgres":
            from wardian.memory import fulltext_pg

            held = fulltext_pg.terms_held(self.conn, unsure, looked_up)
        elif looked_up and unsure:
            held = self._terms_held(unsure, looked_up)
        every = builtins.list(weights.values())
        for rid in rowids:
            holds = [t for t in terms if t in held.get(rid, ())
                     or (t in postings and rid in postings[t])
                     or (t in known_all and rid in holds_all)]
            found[rid].coverage = coverage([weights[t] for t in holds], every, unknown=unknown)
            found[rid].held = {t: weights[t] for t in holds}

    def _terms_held(self, rowids: Sequence[int], terms: Sequence[str]
                    ) -> dict[int, set[str]]:
        """Which of `terms` each record of `rowids` holds, as ``records_fts`` matches them:
        the records are indexed again, alone, in a private in-memory FTS5 table of the same
        tokenizer (asking ``records_fts`` row by row costs a seek per row and word)."""
        if self._held_db is None:
            self._held_db = sqlite3.connect(":memory:")
            # Closed with the index: nothing else holds it, and no caller has to.
            weakref.finalize(self, self._held_db.close)
            # Contentless: only rowids are asked for, and it is emptied in one step
            # (a table with content tokenises every row again to delete it).
            self._held_db.execute(
                "CREATE VIRTUAL TABLE held USING fts5(text, evidence, content='',"
                " tokenize='porter unicode61')")
        side = self._held_db
        marks = ",".join("?" * len(rowids))
        rows = self.conn.execute(
            f"SELECT rowid, text, evidence FROM records WHERE rowid IN ({marks})",
            builtins.list(rowids)).fetchall()
        side.execute("INSERT INTO held (held) VALUES ('delete-all')")
        side.executemany("INSERT INTO held (rowid, text, evidence) VALUES (?, ?, ?)",
                         [tuple(r) for r in rows])
        held: dict[int, set[str]] = {}
        for term in terms:
            for (rid,) in side.execute("SELECT rowid FROM held WHERE held MATCH ?",
                                       (_phrase(term),)):
                held.setdefault(int(rid), set()).add(term)
        return held

    # --- semantic recall ----------------------------------------------------------------

    def embedder(self) -> Embedder | None:
        """The optional embedding model (`wardian.memory.embedding`), loaded on first use;
        None when it is not installed (recall is then lexical only)."""
        if isinstance(self._embedder, _Unset):
            from wardian.memory.embedding import Embedder

            self._embedder = Embedder.load(cache_dir=self.path.parent / "cache")
        return self._embedder

    def semantic_enabled(self) -> bool:
        """Whether recall fuses a semantic score (the embedding model is installed)."""
        return self.embedder() is not None

    def store_vector_in_transaction(self, record_id: str, text: str, revision_id: str) -> None:
        """In the caller's transaction: the record's vector is that of `text` at
        `revision_id` (none without the model)."""
        embedder = self.embedder()
        vector = embedder.embed(text) if embedder is not None else None
        if vector is None:
            self.conn.execute("DELETE FROM record_vectors WHERE record_id = ?", (record_id,))
            return
        from wardian.memory.embedding import MODEL, Embedder

        self.conn.execute(
            "INSERT INTO record_vectors (record_id, revision_id, model, vector)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (record_id) DO UPDATE SET"
            " revision_id = excluded.revision_id, model = excluded.model,"
            " vector = excluded.vector",
            (record_id, revision_id, MODEL, Embedder.pack(vector)),
        )

    def carry_vector_in_transaction(self, record_id: str, text: str, revision_id: str,
                                    *, text_changed: bool) -> None:
        """After an update in the caller's transaction: the record's vector follows its
        new `revision_id` — computed again when its text changed or it has none."""
        if text_changed or not self.conn.execute(
            "SELECT 1 FROM record_vectors WHERE record_id = ?", (record_id,)
        ).fetchone():
            self.store_vector_in_transaction(record_id, text, revision_id)
        else:
            self.conn.execute("UPDATE record_vectors SET revision_id = ? WHERE record_id = ?",
                              (revision_id, record_id))

    def missing_vectors(self) -> int:
        """How many active records have no vector of the current model (saved before the
        model was installed, while it was absent, or by an older model). Read-only; 0
        without the model (there is nothing to give them)."""
        if self.embedder() is None:
            return 0
        from wardian.memory.embedding import MODEL

        return int(self.conn.execute(
            "SELECT COUNT(*) FROM records r LEFT JOIN record_vectors v"
            " ON v.record_id = r.id AND v.model = ? WHERE r.status = 'active'"
            " AND v.record_id IS NULL", (MODEL,)).fetchone()[0])

    def backfill_vectors(self, *, batch: int = 500, at_most: int | None = None) -> int:
        """Give every active record lacking a current-model vector its vector, computed
        from its current text and stored with its current revision (vector
        backfill). Idempotent; each batch of `batch` records is one short transaction,
        so a concurrent save waits at most one batch. Revisions are not touched (the text
        did not change). Returns how many records got a vector (0 without the model).

        Args:
            batch: records per transaction (>= 1).
            at_most: stop after this many (None: all).
        """
        embedder = self.embedder()
        if embedder is None:
            return 0
        from wardian.memory.embedding import MODEL, Embedder

        done, after = 0, -1
        while at_most is None or done < at_most:
            size = max(1, batch) if at_most is None else min(max(1, batch), at_most - done)
            rows = self.conn.execute(
                "SELECT r.rowid, r.id, r.text, r.current_revision_id FROM records r"
                " LEFT JOIN record_vectors v ON v.record_id = r.id AND v.model = ?"
                " WHERE r.status = 'active' AND v.record_id IS NULL AND r.rowid > ?"
                " ORDER BY r.rowid LIMIT ?", (MODEL, after, size)).fetchall()
            if not rows:
                break
            after = int(rows[-1][0])
            packed = []
            for _, rid, text, revision in rows:
                vector = embedder.embed(text)
                if vector is not None:
                    packed.append((rid, revision, MODEL, Embedder.pack(vector), rid, revision))
            with atomic(self.conn):
                # Only while the revision read is still current: a record another process
                # updated meanwhile already got the vector of its new text.
                cursor = self.conn.executemany(
                    "INSERT INTO record_vectors (record_id, revision_id, model, vector)"
                    " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM records WHERE id = ?"
                    " AND current_revision_id = ? AND status = 'active')"
                    " ON CONFLICT (record_id) DO UPDATE SET"
                    " revision_id = excluded.revision_id, model = excluded.model,"
                    " vector = excluded.vector", packed)
            done += max(cursor.rowcount, 0)
        return done

    def _version(self) -> tuple[int, int]:
        """What moves whenever ``memory.db`` may have changed: SQLite's ``data_version``
        (another connection committed; PostgreSQL: `memory_version`) and this shared
        (`MemoryDB`) connection's ``total_changes`` (it wrote, through any store)."""
        return (int(self.conn.execute(
            "SELECT changes FROM memory_version" if self.db.dialect == "postgres"
            else "PRAGMA data_version").fetchone()[0]), self.conn.total_changes)

    def _vector_set(self, agent_id: str, workspace: str | None,
                    version: tuple[int, int] | None = None) -> tuple[Any, Any, Any, Any, Any]:
        """(rowids, {rowid: index}, vectors, updated_at, {rowid: updated_at} of the records
        in scope without a vector) of the agent's active records in scope, by index,
        cached until anything writes to the file (`_version`, read unless given). The
        last item is None on PostgreSQL (not read there)."""
        from wardian.memory import vector_carry, vector_codes, vector_file
        from wardian.memory.embedding import MODEL, Embedder

        version = version or self._version()
        key = (agent_id, workspace)
        cached = self._vectors.get(key)
        if cached is not None and cached[0] == version:
            hit: tuple[Any, Any, Any, Any, Any] = cached[1]
            kept = hit[2]
            later = self._vectors_query.get(key) != self._queries
            if later and isinstance(kept, vector_codes.CodedSet) and cached[2] is not None:
                # A second query: the process is long-running, and NumPy's import (once)
                # costs less than searching the codes again and again.
                again = self._vectors_on_disk(cached[2], vector_file.scope_key(
                    agent_id, workspace, MODEL), plain=False)
                if again is not None:
                    hit = again
                    self._vectors[key] = (version, hit, cached[2])
                    kept = hit[2]
            if isinstance(kept, _Matrix) and kept.full.dtype.itemsize == 2 and later:
                hit = (*hit[:2], kept._replace(full=kept.full.astype("float32")), *hit[3:])
                self._vectors[key] = (version, hit, cached[2])
            return hit
        if any(entry[0] != version for entry in self._vectors.values()):
            self._vectors.clear()  # other scopes' sets are as stale: let them go
        where, params = self._scope_sql(agent_id, workspace)
        unvectored: dict[int, str] | None = None
        disk_name: str | None = None
        disk_scope = ""
        if self.db.dialect == "postgres":
            rows = self.conn.execute(
                "SELECT r.rowid, v.vector, r.updated_at FROM records r"
                " JOIN record_vectors v ON v.record_id = r.id WHERE v.model = ?" + where,
                [MODEL, *params],
            ).fetchall()
        else:
            stamp = self._disk_stamp()
            disk_scope = vector_file.scope_key(agent_id, workspace, MODEL)
            disk_name = None if stamp is None else vector_file.file_name(disk_scope, stamp)
            entry_on_disk = None if disk_name is None else self._vectors_on_disk(
                disk_name, disk_scope, plain="numpy" not in sys.modules)
            if entry_on_disk is not None:
                self._vectors[key] = (version, entry_on_disk, disk_name)
                self._vectors_query[key] = self._queries
                return entry_on_disk
            # Every record in scope, in the same order as the vectors' join: the records
            # without one are what lexical recall's scope needs besides (`bm25_warm`).
            rows, unvectored = [], {}
            for row in self.conn.execute(
                    "SELECT r.rowid, v.vector, r.updated_at FROM records r"
                    " LEFT JOIN record_vectors v ON v.record_id = r.id AND v.model = ?"
                    " WHERE 1" + where + " ORDER BY r.rowid", [MODEL, *params]):
                if row[1] is None:
                    unvectored[int(row[0])] = row[2]
                else:
                    rows.append(row)
        rowids = [int(r[0]) for r in rows]
        stamps = [r[2] for r in rows]
        # A process that has NumPy loaded already (a long-running server, after its
        # first large scope) uses it at any size: a pure-Python scan is slow per row.
        if len(rows) > _NUMPY_FROM or (rows and "numpy" in sys.modules):
            np = vector_file.numpy()  # only for big sets: its import is costly

            # The stored float16 rows as they are: only what a query scans is converted.
            full = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f2").reshape(
                len(rows), -1)
            # The mean of the full scores comes exactly from the column means, their
            # spread from the column covariance — over an evenly spaced sample of
            # `_COV_ROWS` rows in a larger scope (over all 100k rows it cost a fresh
            # process 0.6 s of CPU).
            means = full.mean(axis=0, dtype=np.float32)
            if not np.isfinite(means).all():
                # A vector holding a value that is not a number is no vector: its record
                # stays in scope without one.
                kept = np.isfinite(full).all(axis=1)
                for i in np.flatnonzero(~kept).tolist():
                    if unvectored is not None:
                        unvectored[rowids[i]] = stamps[i]
                rows = [r for r, k in zip(rows, kept.tolist(), strict=True) if k]
                rowids, stamps, full = [int(r[0]) for r in rows], [r[2] for r in rows], full[kept]
                means = full.mean(axis=0, dtype=np.float32)
            if not rows:  # every vector held a value that is not a number
                matrix: Any = []
            else:
                sample = full[::max(1, len(rows) // _COV_ROWS)].astype(np.float32)
                cov = np.cov(sample, rowvar=False, bias=True).astype(np.float32)
                # Kept for later processes (a small set is read faster than mapped), with the
                # codes a process without NumPy searches: carried over from the scope's
                # previous file when few rows changed (`vector_carry`), else fitted anew.
                saving = (unvectored is not None and disk_name is not None
                          and len(rows) > _NUMPY_FROM)
                folder = self._vector_folder()
                ids = np.asarray(rowids, dtype=np.int64)
                prior = (vector_file.previous(folder, disk_name, disk_scope)
                         if saving and disk_name is not None else None)
                carried = (None if prior is None else
                           vector_carry.carry(np, prior, ids, full, means, cov, _PREFILTER_DIMS))
                del prior  # its mapping
                if carried is None:
                    head, basis, variance = _principal_head(np, full, means, cov)
                else:
                    head, basis, variance = carried.head, carried.basis, carried.variance
                matrix = _Matrix(full, head, basis, variance, means)
                if saving and disk_name is not None and unvectored is not None:
                    if carried is None:
                        books, codes = vector_codes.encode(np, full, means, basis)
                        centre, drift = means, 0
                    else:
                        books, codes = carried.books, carried.codes
                        centre, drift = carried.centre, carried.drift
                    vector_file.save(folder, disk_name, disk_scope, vector_file.VectorSet(
                        rowids=ids, stamps=np.asarray(stamps, dtype=np.bytes_), full=full,
                        head=head, basis=basis, variance=variance, means=means, centre=centre,
                        books=books, codes=codes, unvectored=unvectored, drift=drift))
        else:
            matrix = [Embedder.unpack(r[1]) for r in rows]
            kept = [math.isfinite(sum(row)) for row in matrix]
            if not all(kept):  # a vector that is not all numbers is none (as above)
                for r, k in zip(rows, kept, strict=True):
                    if not k and unvectored is not None:
                        unvectored[int(r[0])] = r[2]
                rows = [r for r, k in zip(rows, kept, strict=True) if k]
                matrix = [row for row, k in zip(matrix, kept, strict=True) if k]
                rowids, stamps = [int(r[0]) for r in rows], [r[2] for r in rows]
        if disk_name is not None and len(rows) <= _NUMPY_FROM:
            # No file describes the scope now: an earlier one (when it was larger) goes.
            vector_file.discard(self._vector_folder(), disk_name)
        entry = (rowids, {rid: i for i, rid in enumerate(rowids)}, matrix, stamps, unvectored)
        self._vectors[key] = (version, entry, None)
        self._vectors_query[key] = self._queries
        return entry

    def _vectors_on_disk(self, name: str, scope: str, *, plain: bool
                         ) -> tuple[Any, Any, Any, Any, Any] | None:
        """`_vector_set`'s entry from the file ``name`` of `scope`, or None when there is no
        usable one: searched with the codes (`wardian.memory.vector_codes.CodedSet`,
        without NumPy) when `plain`, and with NumPy otherwise (or when the codes cannot
        be read)."""
        from wardian.memory import vector_codes, vector_file

        folder = self._vector_folder()
        if plain:
            mapped = vector_file.load(folder, name, scope, plain=True)
            if mapped is not None:
                try:
                    coded = vector_codes.CodedSet(
                        n=len(mapped.rowids), dims=len(mapped.means), full=mapped.full,
                        means=mapped.means, variance=mapped.variance, basis=mapped.basis,
                        books=mapped.books, codes=mapped.codes)
                except ValueError:
                    coded = None
                if coded is not None:
                    return (mapped.rowids, vector_file.RowIndex(mapped.rowids), coded,
                            vector_file.Stamps(mapped.stamps), mapped.unvectored)
        loaded = vector_file.load(folder, name, scope)
        if loaded is None:
            return None
        return (loaded.rowids, vector_file.RowIndex(loaded.rowids),
                _Matrix(loaded.full, loaded.head, loaded.basis, loaded.variance, loaded.means),
                vector_file.Stamps(loaded.stamps), loaded.unvectored)

    def _disk_stamp(self) -> tuple[int, int] | None:
        """(inode of the database file, its write counter ``memory_version.changes``):
        what a vector set on disk is valid for (`wardian.memory.vector_file`); None where
        it cannot be read (an in-memory or older database)."""
        unreadable: Errors = (OSError, *backend_of(self.conn).Error)
        try:
            inode = os.stat(self.path).st_ino
            row = self.conn.execute("SELECT changes FROM memory_version").fetchone()
        except unreadable:
            return None
        return None if row is None else (inode, int(row[0]))

    def _vector_folder(self) -> Path:
        """Where the vector sets of this database file are kept on disk."""
        return Path(self.path).parent / "vectors"

    def _scored(self, matrix: Any, vector: builtins.list[float], take: int, depth: int,
                at: dict[int, int]) -> tuple[float, float, builtins.list[int], Any, bool]:
        """(mean and spread of `vector`'s scores over the set `matrix`, the `depth` best
        rows, best first, the score of each of them and of the rows of `at`, whether
        every number the search read was finite). The best are found among a shortlist
        of `take` rows (all rows of a small set)."""
        from wardian.memory.vector_codes import CodedSet

        scores: Any
        best: Any
        if isinstance(matrix, CodedSet):
            # No NumPy: the codes' shortlist, rescored with the whole vectors.
            mean, spread, rotated = matrix.moments(vector)
            pool = matrix.shortlist(rotated, take)
            pooled = set(pool)
            rest = [i for i in at.values() if i not in pooled]
            scores = dict(zip(pool + rest, matrix.cosines(pool + rest, vector), strict=True))
            best = sorted(pool, key=scores.__getitem__, reverse=True)[:depth]
        elif isinstance(matrix, builtins.list):
            import operator

            scores = [sum(map(operator.mul, row, vector)) for row in matrix]
            mean = sum(scores) / len(scores)
            spread = math.sqrt(sum((x - mean) ** 2 for x in scores) / len(scores))
            best = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[:depth]
        else:
            from wardian.memory.vector_file import numpy

            np = numpy()
            query = np.asarray(vector, dtype=np.float32)
            mean = float(matrix.means @ query)
            # The query along every principal direction: the scores' variance is the
            # variance along each weighted by the query's square there.
            rotated = matrix.basis @ query
            spread = math.sqrt(max(float((rotated * rotated) @ matrix.variance), 0.0))
            # Every row scored along the set's leading principal directions (centred: the
            # mean score is 0), then the shortlist rescored with the whole vectors.
            k = matrix.head.shape[1]
            head = rotated[:k]
            rough = matrix.head @ head
            # Selecting the best `take` of 100k scores costs more than scoring them; the
            # head scores' exact mean and spread give a cut that keeps a few thousand,
            # and only those are partitioned (all of them when the cut keeps too few).
            cut = _PREFILTER_Z * math.sqrt(max(float((head * head) @ matrix.variance[:k]),
                                               0.0))
            near = np.flatnonzero(rough > cut)
            if len(near) < take:
                pool = np.argpartition(-rough, take - 1)[:take]
            else:
                pool = near[np.argpartition(-rough[near], take - 1)[:take]]
            pool_scores = matrix.full[pool] @ query
            order = np.argsort(-pool_scores)[:depth]
            best = pool[order].tolist()
            # Only the scores used below: the best's, and the other candidates' in one
            # product (cheaper than a row at a time or a dict of the whole pool).
            lookup = dict(zip(best, pool_scores[order].tolist(), strict=True))
            rest = [i for i in at.values() if i not in lookup]
            if rest:
                lookup.update(zip(rest, (matrix.full[rest] @ query).tolist(), strict=True))
            scores = lookup
        finite = (math.isfinite(mean) and math.isfinite(spread)
                  and all(map(math.isfinite, scores.values() if isinstance(scores, dict)
                              else scores)))
        if isinstance(matrix, _Matrix):
            finite = finite and bool(np.isfinite(rough).all() and np.isfinite(pool_scores).all())
        return mean, spread, best, scores, finite

    def _refuse_file(self, agent_id: str, workspace: str | None) -> bool:
        """Forget the scope's vector set and remove the file it was read from; False when
        it was not read from a file (there is nothing to refuse)."""
        from wardian.memory import vector_file

        cached = self._vectors.get((agent_id, workspace))
        if cached is None or cached[2] is None:
            return False
        del self._vectors[(agent_id, workspace)]
        vector_file.discard(self._vector_folder(), cached[2])
        return True

    def _semantic_candidates(
        self, agent_id: str, workspace: str | None, vector: builtins.list[float], depth: int,
        found: dict[int, Candidate],
    ) -> float | None:
        """Add the `depth` records nearest to `vector` (cosine) to `found`, and set the
        cosine of every candidate already there. Returns how far the nearest record's
        cosine stands above the mean of the next `MARGIN_NEIGHBOURS`
        (`wardian.memory.ranking.Considered.margin`), or None when the scope has too few
        records with vectors to say."""
        from wardian.memory.ranking import MARGIN_NEIGHBOURS, Candidate
        from wardian.memory.vector_file import RowIndex

        for _ in range(2):
            rowids, position, matrix, stamps, _ = self._vector_set(agent_id, workspace)
            if not len(rowids):
                return None
            # Where each candidate found so far is in the set (one search for a mapped set).
            at = (position.many(found) if isinstance(position, RowIndex)
                  else {rid: position[rid] for rid in found if rid in position})
            # The shortlist grows with the set: a fixed number of rows would keep a smaller
            # share of a larger one, and the head's (or the codes') ranking is only close
            # to the full one, so the exact nearest would fall out of it as the set grows.
            take = min(max(depth * 10, _SHORTLIST_MIN, len(rowids) // _SHORTLIST_EVERY),
                       len(rowids))
            mean, spread, best, scores, finite = self._scored(matrix, vector, take, depth, at)
            # A value that is not a number came from a damaged file (a set built from
            # SQLite holds none: `_vector_set`): refuse the file and build the set again.
            if finite or not self._refuse_file(agent_id, workspace):
                break
        if not finite:  # never shown: what is not a number counts as no score
            best = [i for i in best if math.isfinite(scores[i])]
            at = {rid: i for rid, i in at.items() if math.isfinite(scores[i])}
            if not (math.isfinite(mean) and math.isfinite(spread)):
                mean, spread = 0.0, 0.0
        # n scores lie within sqrt(n - 1) deviations of their mean, so in a small scope
        # "standing out" is judged against what is possible there.
        from wardian.memory.ranking import SEMANTIC_Z

        reach = min(1.0, 0.75 * math.sqrt(max(len(position) - 1, 0)) / SEMANTIC_Z)
        spread *= reach
        wanted = {i: rid for rid, i in at.items()}
        for i in best:
            wanted[i] = int(rowids[i])
        for i, rid in wanted.items():
            candidate = found.get(rid)
            if candidate is None:
                found[rid] = candidate = Candidate(rid, updated_at=stamps[i])
            candidate.cosine = float(scores[i])
            candidate.z = (candidate.cosine - mean) / spread if spread > 0 else 0.0
        if len(best) <= MARGIN_NEIGHBOURS:
            return None
        nearest: builtins.list[float] = [float(scores[i]) for i in best[: MARGIN_NEIGHBOURS + 1]]
        return nearest[0] - sum(nearest[1:]) / MARGIN_NEIGHBOURS

    def _scope_sql(self, agent_id: str, workspace: str | None) -> tuple[str, builtins.list[Any]]:
        # Records set aside as holding a secret never come back from recall.
        where = " AND r.agent_id = ? AND r.status = 'active' AND r.flagged IS NULL"
        params: list[Any] = [agent_id]
        if workspace is not None:
            where += " AND (r.scope_kind = 'agent' OR r.scope_path = ?)"
            params.append(workspace)
        return where, params

    def _lexical_candidates(
        self, agent_id: str, terms: Sequence[str], *, workspace: str | None, depth: int
    ) -> tuple[dict[int, Candidate], int, dict[str, float],
               tuple[dict[str, Container[int]], set[int], builtins.list[str]] | None]:
        """Up to about 2 x `depth` records matching `terms`, by rowid, with their coverage
        (`wardian.memory.ranking.coverage`: the idf-weighted share of the query's terms
        each contains) and BM25 where it was computed (the rarest words); and how many of
        `terms` no record in the store (any agent or scope: word statistics, not rows)
        contains; and the idf weight of each of `terms` some record holds; and, when
        coverage is left to the caller (`_cover`, over these and the semantic candidates
        together: with the warm statistics, on whose path those are always gathered), the
        records holding each rare word and name, the candidates known to hold every
        common word, and those words (None: coverage is set).

        Cost is bounded at any store size: BM25, whose idf walks each word's
        whole posting list, ranks only the rarest words (`RECALL_EXACT_POSTINGS` postings
        in all); records holding every commoner word are taken newest first without it,
        and which words each candidate holds is looked up by rowid.
        """
        if self.db.dialect == "postgres":
            from wardian.memory import fulltext_pg

            where, params = self._scope_sql(agent_id, workspace)
            return (*fulltext_pg.lexical_candidates(
                self.conn, terms, where=where, params=params, depth=depth,
                exact_postings=RECALL_EXACT_POSTINGS), None)
        from wardian.memory.ranking import Candidate, coverage, idf, is_compound

        warm = self._warm(agent_id, workspace)
        stats = warm[0] if warm is not None else None
        if stats is None or stats.total is None:
            total = int(self.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM records")
                        .fetchone()[0])
            if stats is not None:
                stats.total = total
        else:
            total = stats.total
        if stats is not None:
            freq = {t: stats.doc_freq(self.conn, t, RECALL_EXACT_POSTINGS + 1,
                                      keep_rows=is_compound(t)) for t in terms}
        else:
            freq = {t: self._doc_freq(t) for t in terms}
        known = sorted((t for t in terms if freq[t]), key=lambda t: freq[t])
        unknown = sum(not freq[t] and not is_compound(t) for t in terms)
        if not known:
            return {}, unknown, {}, None
        weights = {t: idf(freq[t], total) for t in known}
        # A compound name weighs in coverage, but BM25 (whose idf of a phrase walks all
        # its words' postings) ranks single words only: the records holding the name are
        # taken newest first.
        names = [t for t in known if is_compound(t)]
        words = [t for t in known if not is_compound(t)]
        rare: builtins.list[str] = []
        used = 0
        for term in words:
            if used + freq[term] > RECALL_EXACT_POSTINGS:
                break
            rare.append(term)
            used += freq[term]
        common = words[len(rare):]
        where, params = self._scope_sql(agent_id, workspace)
        found: dict[int, Candidate] = {}
        if rare and warm is not None:
            from wardian.memory.bm25_warm import rank_rare

            for rid, score, when in rank_rare(
                    [warm[0].bm25(self.conn, t) for t in rare], warm[1], depth=depth,
                    wide=_RARE_WIDE * depth, used=used):
                found[rid] = Candidate(rid, updated_at=when, lexical=score)
        elif rare:
            for r in self._rank_rare(rare, freq, where, params, depth, used):
                found[int(r["rid"])] = Candidate(int(r["rid"]), updated_at=r["updated_at"],
                                                 lexical=float(r["score"]))
        # One common word beside rarer ones would widen the match to all its records; it
        # only counts for the records the rarer words found. Several common words (or
        # only common ones) find the records holding them all, newest first, without
        # BM25 (whose idf would walk their whole posting lists).
        holding_all: set[int] = set()
        if common and (len(common) >= 2 or not rare):
            for r in self._newest_holding(common, where, params, depth):
                rid = int(r["rid"])
                holding_all.add(rid)
                found.setdefault(rid, Candidate(rid, updated_at=r["updated_at"]))
        held_by: dict[str, Container[int]] = {}
        for name in names:
            if warm is not None and freq[name] <= RECALL_EXACT_POSTINGS:
                # The newest in scope, as the SQL below takes them.
                rows = held_by[name] = warm[0].holding(self.conn, name)
                taken = 0
                for rid in sorted(rows, reverse=True):
                    stamp = warm[1].get(rid)
                    if stamp is not None:
                        found.setdefault(rid, Candidate(rid, updated_at=stamp))
                        taken += 1
                        if taken >= depth:
                            break
                continue
            for r in self._newest_holding([name], where, params, depth):
                found.setdefault(int(r["rid"]), Candidate(int(r["rid"]),
                                                          updated_at=r["updated_at"]))
        if stats is not None:
            return found, unknown, weights, (
                {**{t: stats.bm25(self.conn, t) for t in rare}, **held_by}, holding_all, common)
        if not found:
            return found, unknown, weights, None
        # Which words each candidate holds, from posting lists no longer than the rare
        # words' (a common word's only where it meets them).
        rows_of: dict[str, Container[int]] = {
            t: self._rows_holding(t, among=() if t in rare else rare) if rare else set()
            for t in words}
        for name in names:  # a name's postings are no more than its rarest word's
            rows_of[name] = self._rows_holding(
                name, among=() if freq[name] <= RECALL_EXACT_POSTINGS or not rare else rare)
        every = builtins.list(weights.values())
        for rid, candidate in found.items():
            holds = [t for t in known if rid in rows_of[t]
                     or (rid in holding_all and t in common)]
            candidate.coverage = coverage([weights[t] for t in holds], every, unknown=unknown)
            candidate.held = {t: weights[t] for t in holds}
        return found, unknown, weights, None

    def _warm(self, agent_id: str, workspace: str | None
              ) -> tuple[TermStats, Mapping[int, str]] | None:
        """The store's warm word statistics (`wardian.memory.bm25_warm`) and the scope's
        ``updated_at`` lookup (None: out of scope), or None where lexical recall asks SQL
        every time: on PostgreSQL, and without the embedding model (the scope comes with
        the vector set, which only semantic recall reads)."""
        if self.db.dialect == "postgres" or self.embedder() is None:
            return None
        from wardian.memory.bm25_warm import TermStats

        version = self._version()
        if self._terms is None or self._terms.version != version:
            self._terms = TermStats(version)
        from wardian.memory import vector_file

        rowids, position, _, stamps, unvectored = self._vector_set(agent_id, workspace, version)
        if isinstance(position, vector_file.RowIndex):  # mapped from disk: no dict per row
            scope = self._terms.scope((agent_id, workspace), lambda: vector_file.ScopeStamps(
                position, stamps, unvectored))
        else:
            scope = self._terms.scope((agent_id, workspace), lambda: {
                **dict(zip(rowids, stamps, strict=True)), **unvectored})
        return self._terms, scope

    def _rank_rare(self, rare: Sequence[str], freq: dict[str, int], where: str,
                   params: builtins.list[Any], depth: int, used: int) -> builtins.list[Any]:
        """Rows ``(rid, score, updated_at)``: the `depth` best BM25 matches in scope of any
        of `rare` (`used` postings in all), best first."""
        # Rank inside FTS5 first and read only the best rows of `records` (reading a row
        # per match cost more than BM25 itself); when scope filters out so many that
        # fewer than `depth` are left, rank every match in scope instead. Equal scores
        # (and times) go oldest rowid first, as in `bm25_warm.rank_rare` and on
        # PostgreSQL: which of many tied records make the cut would otherwise differ.
        match, wide = " OR ".join(map(_phrase, rare)), _RARE_WIDE * depth
        rows = self.conn.execute(
            "SELECT r.rowid AS rid, -f.score AS score, r.updated_at FROM (SELECT rowid AS id,"
            " bm25(records_fts) AS score FROM records_fts WHERE records_fts MATCH ?"
            " ORDER BY score, rowid LIMIT ?) f JOIN records r ON r.rowid = f.id WHERE 1"
            + where + " ORDER BY f.score, r.updated_at DESC, r.rowid LIMIT ?",
            [match, wide, *params, depth]).fetchall()
        if len(rows) < depth and used > wide:
            rows = self.conn.execute(
                "SELECT r.rowid AS rid, -bm25(records_fts) AS score, r.updated_at"
                " FROM records_fts JOIN records r ON r.rowid = records_fts.rowid"
                " WHERE records_fts MATCH ?" + where
                + " ORDER BY bm25(records_fts), r.updated_at DESC, r.rowid LIMIT ?",
                [match, *params, depth]).fetchall()
        return rows

    def _newest_holding(self, terms: Sequence[str], where: str, params: builtins.list[Any],
                        depth: int) -> builtins.list[Any]:
        """Rows ``(rid, updated_at)``: the newest `depth` records in scope holding every
        one of `terms`."""
        # FTS5 walks the doclists newest rowid first and stops after `depth`.
        return self.conn.execute(
            "SELECT r.rowid AS rid, r.updated_at FROM records_fts"
            " JOIN records r ON r.rowid = records_fts.rowid WHERE records_fts MATCH ?"
            + where + " ORDER BY records_fts.rowid DESC LIMIT ?",
            [" AND ".join(map(_phrase, terms)), *params, depth]).fetchall()

    def _rows_holding(self, term: str, *, among: Sequence[str] = ()) -> set[int]:
        """The rowids of the records holding `term` (and, given `among`, also any one of
        `among`: a common word is only looked up where rarer words are)."""
        match = _phrase(term)
        if among:
            match += " AND (" + " OR ".join(map(_phrase, among)) + ")"
        return {int(r[0]) for r in self.conn.execute(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ?", (match,))}

    def _records_by_rowid(self, agent_id: str, rowids: Sequence[int],
                          kept: dict[int, Record] | None = None) -> builtins.list[Record]:
        """The records of `rowids` (without sources), in that order; `kept`: records
        already read at the current data version, by rowid, and where new ones go. A row
        read here must still be `agent_id`'s, active and not set aside for a secret:
        another process may have changed it since the candidates were gathered, and what
        recall shows fails closed."""
        if not rowids:
            return []
        found: dict[int, Record] = {} if kept is None else kept
        missing = [i for i in rowids if i not in found]
        if missing and kept is not None and len(kept) + len(missing) > _KEPT_RECORDS:
            kept.clear()
            missing = builtins.list(rowids)
        if missing:
            marks = ",".join("?" * len(missing))
            # Checked here, not in the WHERE clause: with them there SQLite's planner may
            # walk the agent's index instead of looking up the rowids (at 100k records
            # that costs several times more, bench/memory_bench.py).
            for r in self.conn.execute(
                    f"SELECT rowid, * FROM records WHERE rowid IN ({marks})", missing):
                if (r["agent_id"] == agent_id and r["status"] == "active"
                        and r["flagged"] is None):
                    found[int(r["rowid"])] = record_from_row(r)
        return [found[i] for i in rowids if i in found]

    def _doc_freq(self, term: str) -> int:
        """How many records hold `term`, counting at most `RECALL_EXACT_POSTINGS` + 1."""
        row = self.conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ?"
            " LIMIT ?)", (_phrase(term), RECALL_EXACT_POSTINGS + 1),
        ).fetchone()
        return int(row[0])
