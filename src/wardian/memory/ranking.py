"""Query ranking without SQL: query terms, BM25 weights, the relevance floor, fusion.

`RecallIndex.recall` asks SQLite's FTS5 for BM25 scores and (when the optional embedding
model is installed) `wardian.memory.embedding` for cosine similarities; this module turns
them into one ranked list that may be empty.

* **Terms.** A query is lower-cased, split into words (``\\w+``) and stripped of English
  stop words and question words (`STOP_WORDS`), so "which port does the api use" asks
  about ``port`` and ``api`` only. A query of nothing but stop words asks nothing.
  A compound name, words joined by ``-``, ``.`` or ``/`` with no space between
  (``billing-api``, ``conf/app.ini``), is one more term beside its words (`is_compound`):
  it matches as a phrase, so it is as rare as the one thing it names however common its
  words are, and a record holding the whole name covers more of the question than one
  holding some of its words (in a large store every word of such names recurs in
  thousands of records, and only the words together tell the records apart). A compound
  no record holds is left out rather than counted unknown: its words already say what is
  unknown about it.
* **Coverage.** `coverage`: the idf-weighted share of the query's terms a record
  contains (1.0: all of them; 0.3: only its commoner words), from which terms each
  record holds and each term's document frequency (the same weights on both sides of
  the share, so a record holding every term covers exactly 1.0 however common its
  words are, and any backend that can say "does row R contain term T" computes it). A
  term that is in *no* record weighs as much as the query's average known term: a word
  nothing contains makes every record cover less of the question. BM25 orders records
  of equal score (`Candidate.lexical`).
* **Floor.** A record is returned only when it covers enough of the query
  (`LEXICAL_FLOOR`), or is semantically close and stands out from the other records in
  scope (`SEMANTIC_FLOOR`, `SEMANTIC_Z`), or has some of both (``FUSED_*``), or — when
  every informative word of the query occurs somewhere in the store — its evidence by
  meaning, cosine plus `KNOWN_Z` times its standing-out, reaches `KNOWN_FLOOR`
  (`Candidate.evidence`), or — whatever its other scores — it is the record nearest the
  query by meaning and stands clearly apart from the next nearest ones in scope
  (`MARGIN_FLOOR` above the mean cosine of the `MARGIN_NEIGHBOURS` after it:
  `Considered.margin`, and itself at least `MARGIN_COSINE` near; static embeddings give
  a question about a project a similar cosine to many of its records, so one record far
  ahead of the rest is about what the question asks, even in other words: "can a
  traveller get their money back" and a record on refundable tickets); that is how
  "nothing fits" comes back empty. A question about
  something never stored usually names it with a word the store has never seen (on the
  suites, whether a query has such a word separates unanswerable from answerable queries
  about as well as any single cosine cut-off, and differently), so a question in the
  store's own words may be answered on weaker evidence by meaning. A larger store knows
  more words, so this rule only ever widens what passes as the store grows. Once one
  record has cleared the floor, others follow it that clear a lower one (``RELAXED_*``)
  or hold most of what the records clearing it leave uncovered (`covers_rest`: "tests
  and linting", answered by one record about each), or are among the `FOLLOW_RANK` best
  by fused score and stand out from the scope (`FOLLOW_Z`), for questions with several
  answers: the second answer of "how do I run tests and linting" or "what test tools do we
  use" shares as few words with the question as a paraphrase's only answer does.
  How the constants were chosen, and what they cost on which suite, is in
  ``docs/decisions/recall-floors.md``; ``bench/recall_bench.py`` prints the figures.
* **Nearest, below the floor.** When nothing clears the floor, `nearest` names the few
  best candidates anyway, for `memory recall` to show *as* below it ("nothing fits; the
  nearest records may not answer it"). The floor must refuse near misses, so it also
  refuses paraphrases a static embedding ranks well but cannot vouch for. The agent
  reading the result is a language model that can tell which of three lines answers its
  question; the floor's "nothing fits" stays what the result says, and the records list
  stays empty. There is no second floor for the nearest.
* **The workspace's name.** A question asked in a workspace often names it ("what test
  tools does lumen use", in ``/src/lumen``); its cosines are computed without that word
  (`semantic_query`), or every record naming the project would look as near as the
  answer.

Spec: "Save and inspect memory" (recall); DESIGN.md "Storage" → Recall.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = [
    "FOLLOW_RANK",
    "FOLLOW_Z",
    "FUSED_COSINE",
    "FUSED_COVERAGE",
    "FUSED_Z",
    "KNOWN_FLOOR",
    "KNOWN_Z",
    "LEXICAL_FLOOR",
    "MARGIN_COSINE",
    "MARGIN_FLOOR",
    "MARGIN_NEIGHBOURS",
    "NEAREST",
    "RELAXED_COSINE",
    "RELAXED_COVERAGE",
    "RELAXED_Z",
    "SEMANTIC_FLOOR",
    "SEMANTIC_WEIGHT",
    "SEMANTIC_Z",
    "STOP_WORDS",
    "Candidate",
    "Considered",
    "coverage",
    "covers_rest",
    "fuse",
    "idf",
    "is_compound",
    "nearest",
    "query_terms",
    "semantic_query",
]

_WORD = re.compile(r"\w+", re.UNICODE)
_COMPOUND = re.compile(r"\w+(?:[-./]\w+)+", re.UNICODE)

_STOP_TEXT = """
a about above after again against all also am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn doing
don down during each either else ever every few for from further get gets got had hadn has
hasn have haven having he her here hers herself him himself his how i if in into is isn it
its itself just let lets like may me might mine more most much must mustn my myself need
needs no nor not now of off on once one only or other ought our ours ourselves out over own
per please same shall shan she should shouldn so some such than that the their theirs them
themselves then there these they this those though through to too under until up upon us
very via was wasn we were weren what whats when where whether which while who whom whose
why will with within without won would wouldn yes yet you your yours yourself yourselves
s t d ll m re ve
again anything something nothing everything thing things way ways kind
tell show know remember recall say said told wardian memory memories record records
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Words that carry no topic: English function words, question words and the words a
question about memory itself uses ("what did we say about …"). Never matched."""

LEXICAL_FLOOR = 0.5
"""The idf-weighted share of the query's terms a record must exceed (see module)."""
SEMANTIC_FLOOR = 0.4
"""Minimum cosine similarity for a record found by meaning alone; it must also stand out
from the records in scope by `SEMANTIC_Z` standard deviations (static embeddings give
every record of a project some similarity to any question about it)."""
SEMANTIC_Z = 3.0
"""How far above the scope's mean cosine (in standard deviations) a record found by
meaning alone must be."""
FUSED_COVERAGE, FUSED_COSINE, FUSED_Z = 0.4, 0.3, 2.5
"""A record with some of both — this coverage, cosine and standing-out — also passes."""
KNOWN_Z = 0.4
"""Weight of the standing-out (z, in standard deviations) in `Candidate.evidence`."""
KNOWN_FLOOR = 1.5
"""The evidence (`Candidate.evidence`) that passes a record when no word of the query is
unknown to the store: e.g. cosine 0.3 and z 3.0 (0.3 + 1.2) passes."""
MARGIN_FLOOR = 0.16
"""How far (in cosine) the record nearest a query by meaning must stand above the mean of
its `MARGIN_NEIGHBOURS` next nearest in scope to pass on that alone (module: Floor)."""
MARGIN_COSINE = 0.25
"""The cosine the nearest record itself must reach to pass on its margin: where every
record of the scope is far from the question, one leading the rest is noise ahead of
noise. Set at `RELAXED_COSINE`."""
MARGIN_NEIGHBOURS = 5
"""How many next-nearest records the margin is measured against; a scope with no more
records (with vectors) than this has no margin."""
RELAXED_COVERAGE, RELAXED_COSINE, RELAXED_Z = 0.4, 0.25, 1.5
"""Once the best record has cleared the floor (something fits), further records need only
this coverage, or this cosine and standing-out: a question with several answers gets
them, while "does anything fit" is decided by the strict floor alone."""
FOLLOW_RANK, FOLLOW_Z = 5, 1.0
"""Once something fits, a record among the `FOLLOW_RANK` best by fused score also follows
when it stands out from the scope's records by `FOLLOW_Z` standard deviations: the second
and third answers of a question with several are as weakly tied to its words as the
first one that passed on meaning alone (module: Floor)."""
NEAREST = 3
"""How many candidates below the floor `nearest` names when nothing clears it: a few
lines of context, not a second result list."""
SEMANTIC_WEIGHT = 0.5
"""Weight of the cosine similarity in the fused score (the rest is lexical coverage)."""


def query_terms(query: str) -> list[str]:
    """The distinct informative terms of `query`, in order: lower-cased ``\\w+`` words
    that are not `STOP_WORDS`, each compound name (`is_compound`) right after its words
    when two or more of them are informative. Returns [] when the query asks about
    nothing."""
    terms: list[str] = []
    at = 0
    text = query.lower()
    for compound in _COMPOUND.finditer(text):
        terms += _WORD.findall(text, at, compound.start())
        words = _WORD.findall(compound.group())
        terms += words
        if sum(w not in STOP_WORDS for w in words) >= 2:
            terms.append(compound.group())
        at = compound.end()
    terms += _WORD.findall(text, at)
    return list(dict.fromkeys(t for t in terms if t not in STOP_WORDS))


def is_compound(term: str) -> bool:
    """Whether `term` (of `query_terms`) is a compound name, several words joined by
    ``-``, ``.`` or ``/`` (``billing-api``): matched as a phrase of its words, and left
    out of the query, not counted unknown, when no record holds it (module: Terms)."""
    return _WORD.fullmatch(term) is None


def semantic_query(query: str, workspace: str | None) -> str:
    """The text of `query` that is embedded for its cosines: without the words naming the
    workspace it is asked in (the last part of its path, e.g. ``heron`` for
    ``/src/heron``: "how do I run heron's tests"), unless nothing else is left. Static
    embeddings weigh a project's name as much as any other word, so every record that
    names the project would look alike to a question naming it, while within its own
    workspace the name tells nothing apart."""
    if not workspace:
        return query
    name = set(query_terms(re.split(r"[\\/]", workspace.rstrip("/\\"))[-1]))
    if not name:
        return query
    kept = [w for w in query.split() if name.isdisjoint(_WORD.findall(w.lower()))]
    return " ".join(kept) if query_terms(" ".join(kept)) else query


def idf(doc_freq: int, total: int) -> float:
    """FTS5's BM25 idf, ``log((N - n + 0.5) / (n + 0.5))`` clamped at 1e-6, for a term in
    `doc_freq` (>= 1) of `total` records."""
    n = max(1, doc_freq)
    return max(1e-6, math.log((max(total, n) - n + 0.5) / (n + 0.5)))


def coverage(held: Iterable[float], weights: Iterable[float], *, unknown: int = 0) -> float:
    """The idf-weighted share of a query a record contains (module: Coverage).

    Args:
        held: the idf weights of the query's terms the record contains.
        weights: the idf weights of all the query's terms some record contains.
        unknown: how many of the query's terms no record contains; each weighs as much
            as the average of `weights`.

    Returns:
        0.0 .. 1.0 (0.0 when `weights` is empty).
    """
    every = list(weights)
    if not every:
        return 0.0
    whole = sum(every) * (len(every) + max(0, unknown)) / len(every)
    return min(1.0, sum(held) / whole) if whole > 0 else 0.0


class Candidate:
    """One record considered for a query (mutable: recall fills the scores in as it goes).

    A plain slotted class, not a dataclass: `memory recall` is a hot path and the
    dataclass machinery (``inspect``, compiling methods at import) costs it a noticeable share of
    its CPU budget.

    Attributes:
        rowid: the record's SQLite rowid.
        coverage: idf-weighted share of the query's terms it contains (0..1).
        cosine: cosine similarity to the query (0 when unknown).
        z: how many standard deviations `cosine` is above the mean of the scope's records.
        updated_at: ISO time, newer first among equals.
        lexical: its BM25 score where one was computed (0 otherwise): breaks ties.
        held: the query's terms it contains, with their idf weights.
    """

    __slots__ = ("cosine", "coverage", "held", "lexical", "rowid", "updated_at", "z")

    def __init__(self, rowid: int, coverage: float = 0.0, cosine: float = 0.0,
                 updated_at: str = "", z: float = 0.0, lexical: float = 0.0,
                 held: dict[str, float] | None = None) -> None:
        self.rowid = rowid
        self.coverage = coverage
        self.cosine = cosine
        self.updated_at = updated_at
        self.z = z
        self.lexical = lexical
        self.held: dict[str, float] = {} if held is None else held

    def __repr__(self) -> str:
        return (f"Candidate(rowid={self.rowid}, coverage={self.coverage:.3f}, "
                f"cosine={self.cosine:.3f}, z={self.z:.2f}, lexical={self.lexical:.3f})")

    @property
    def score(self) -> float:
        """The fused score the final order uses."""
        return (1 - SEMANTIC_WEIGHT) * min(self.coverage, 1.0) + SEMANTIC_WEIGHT * self.cosine

    @property
    def evidence(self) -> float:
        """Its evidence by meaning: ``cosine + KNOWN_Z * z`` (module: Floor)."""
        return self.cosine + KNOWN_Z * self.z

    def passes_relaxed(self, *, semantic: bool) -> bool:
        """Whether the record may follow one that passed (`RELAXED_COVERAGE` …)."""
        if self.coverage >= RELAXED_COVERAGE:
            return True
        return semantic and self.cosine >= RELAXED_COSINE and self.z >= RELAXED_Z

    def passes(self, *, semantic: bool, all_known: bool = False) -> bool:
        """Whether the record clears the relevance floor (module: Floor). Without
        semantic scores only the lexical floor applies. `all_known`: every informative
        word of the query occurs in some record of the store."""
        # More than half: a record holding only one of two words (the other one in no
        # record) does not answer the question by its words alone.
        if self.coverage > LEXICAL_FLOOR:
            return True
        if not semantic:
            return False
        if self.cosine >= SEMANTIC_FLOOR and self.z >= SEMANTIC_Z:
            return True
        if all_known and self.evidence >= KNOWN_FLOOR:
            return True
        return (self.coverage >= FUSED_COVERAGE and self.cosine >= FUSED_COSINE
                and self.z >= FUSED_Z)


class Considered:
    """What recall weighs for one query before the floor (`RecallIndex.recall_considered`).

    A plain slotted class for the same reason as `Candidate`.

    Attributes:
        candidates: the records considered, in no particular order.
        terms: how many informative words the query has (`query_terms`).
        unknown: how many of them no record in the store contains.
        semantic: whether cosines were computed (the embedding model is installed).
        margin: the cosine of the record nearest the query by meaning minus the mean
            cosine of the `MARGIN_NEIGHBOURS` next nearest records in scope; None without
            cosines or when the scope has no more records than that.
    """

    __slots__ = ("candidates", "margin", "semantic", "terms", "unknown")

    def __init__(self, candidates: list[Candidate], *, terms: int, unknown: int,
                 semantic: bool, margin: float | None = None) -> None:
        self.candidates = candidates
        self.terms = terms
        self.unknown = unknown
        self.semantic = semantic
        self.margin = margin

    @property
    def all_known(self) -> bool:
        """Whether every informative word of the query occurs in some record."""
        return self.terms > 0 and self.unknown == 0


def fuse(candidates: Iterable[Candidate], *, semantic: bool, limit: int,
         all_known: bool = False, margin: float | None = None) -> list[Candidate]:
    """The candidates above the floor, best first (fused score, coverage, BM25, newest),
    at most `limit` (>= 1): none unless one clears the strict floor, then also those that
    clear the relaxed one, hold most of what the passing ones leave uncovered
    (`covers_rest`) or, with `semantic`, are among the `FOLLOW_RANK` best by fused score
    and stand out by `FOLLOW_Z` (module: Floor). `all_known` as in `Candidate.passes`; `margin`
    as in `Considered.margin`: from `MARGIN_FLOOR` on, the record nearest by meaning
    passes if its own cosine reaches `MARGIN_COSINE`."""
    pool = list(candidates)
    passed = [c for c in pool if c.passes(semantic=semantic, all_known=all_known)]
    if semantic and margin is not None and margin >= MARGIN_FLOOR and pool:
        nearest = max(pool, key=lambda c: c.cosine)
        if nearest not in passed and nearest.cosine >= MARGIN_COSINE:
            passed.append(nearest)
    if not passed:
        return []
    # A question with several parts ("tests and linting"): a record holding most of what
    # the passing records leave uncovered answers the rest of it.
    answered = {t for c in passed for t in c.held}
    rest = {t: w for c in pool for t, w in c.held.items() if t not in answered}
    kept = [c for c in pool if c in passed or c.passes_relaxed(semantic=semantic)
            or covers_rest(c, rest)]
    if semantic:
        best = sorted(pool, key=lambda c: (c.score, c.coverage, c.lexical), reverse=True)
        kept += [c for c in best[:FOLLOW_RANK] if c.z >= FOLLOW_Z and c not in kept]
    return _best_first(kept, semantic=semantic)[: max(1, limit)]


def _best_first(pool: list[Candidate], *, semantic: bool) -> list[Candidate]:
    """`pool` sorted in place, best first: fused score (coverage without `semantic`),
    coverage, BM25, then newest, and last the higher rowid, so that every backend and
    path gives equal candidates the same order."""
    pool.sort(key=lambda c: (c.updated_at, c.rowid), reverse=True)
    pool.sort(key=lambda c: (c.score if semantic else c.coverage, c.coverage, c.lexical),
              reverse=True)
    return pool


def nearest(candidates: Iterable[Candidate], *, semantic: bool,
            count: int = NEAREST) -> list[Candidate]:
    """The `count` (>= 0) best `candidates` in `fuse`'s order (fused score, coverage,
    BM25, newest; coverage first without `semantic`), floor or not, leaving out those
    with no tie to the query at all (no term held and no positive cosine). For showing
    what came nearest when `fuse` returned nothing (module: Nearest, below the floor);
    the caller decides when that is."""
    pool = [c for c in candidates if c.held or c.cosine > 0]
    return _best_first(pool, semantic=semantic)[: max(0, count)]


def covers_rest(candidate: Candidate, rest: dict[str, float]) -> bool:
    """Whether `candidate` holds more than half (by idf weight) of `rest`: the query's
    terms, with their weights, that no record clearing the floor holds."""
    whole = sum(rest.values())
    return whole > 0 and sum(w for t, w in rest.items() if t in candidate.held) > whole / 2
