"""Does the record hold the specific thing the query asks about? A floor-signal survey.

Measures candidate "specificity" signals for the relevance floor's "anything fits?"
decision (`wardian.memory.ranking.fuse`): whether the record that clears the floor holds
the query's *distinctive* terms (its rarest by idf in the store, or its name-like terms:
with a digit, a compound, or capitalised inside the sentence), lexically or through a
close word neighbour (wordllama's static word vectors), and whether it holds a
*different* value in the slot of such a term (a record word, not in the query, close to
the query's unheld distinctive term: "cattle" against "horses", "KRF-E9" against
"KRF-E5"). "Distinctive" is measured three ways: idf in the agent's own store (with the
terms no record holds counted rarest, or left out: "known"), name shape, and rarity in
general English by wordllama's vocabulary rank (`background_rare`: the BPE vocabulary is
ordered by merge score, roughly frequency, so a word that is one piece ranked late, or
several pieces, is rare in general text). Some rules apply only to candidates that passed
by meaning (the semantic, evidence or margin rules) rather than by coverage.

Each rule is a veto on the decision only: a query is answered exactly as today when at
least one candidate clears today's strict floor (or its margin rule) *and* the rule;
otherwise it comes back empty and the agent is shown the `NEAREST` records below the
floor, as today for an empty answer. So a rule can only turn answers into empty ones:
it raises no-answer empty, and costs matches Recall@5 wherever it vetoes a true answer
(what the agent sees drops only when that answer is not among the nearest three).

Prints, per suite and rule: matches Recall@5, what the agent sees Recall@5 (paraphrase
too), no-answer empty, and how many answerable / no-answer queries the rule vetoed.
SQLite, semantic score on. Deliberately not a suite: the rules are measured, not
adopted (``docs/decisions/recall-floor-specificity.md``).

Run: ``PYTHONPATH=$PWD/src .venv/bin/python bench/recall_specificity.py [--detail RULE]
[SUITE ...]`` (default: main holdout fresh unseen blind novel eighth unseen2; the
"tuning" line pools the first six). ``--detail RULE`` (a key of `RULES`) prints only that
rule, with one line per vetoed query (answerable or not, whether its answer was in the
top five, its store-rarest terms and their document frequencies, how its records passed).
``--grid`` sweeps `rule_combined`'s settings and prints those that keep every suite within
0.01 on both recall figures, then ``--admits``' table. ``--auc`` prints how well each of
`FEATURES` separates the answers today's floor finds from the near misses it lets
through. ``--admits`` alone prints, as changes from today, `admit_rare` (answer an empty
query with its nearest records when the nearest holds the query's rare terms) alone and
with a few vetoes.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_bench

DEFAULT = ("main", "holdout", "fresh", "unseen", "blind", "novel", "eighth", "unseen2")
TUNING = ("main", "holdout", "fresh", "unseen", "blind", "novel")
_NAME_WORD = re.compile(r"\w*\d\w*|\w+(?:[-./]\w+)+")


class Query:
    """One query with what the floor saw, and what the rules need."""

    def __init__(self, kind: str, expected: tuple[str, ...], text: str) -> None:
        self.kind, self.expected, self.text = kind, expected, text
        self.today: list[str] = []      # keys returned today (top 10)
        self.near: list[str] = []       # keys of the nearest three (whatever `today` is)
        self.nearest: list[Any] = []    # their candidates
        self.passing: list[Any] = []    # candidates clearing the strict floor, margin incl.
        self.idf: dict[str, float] = {}  # every query term's idf (unknown: the rarest + 1)
        self.names: set[str] = set()    # name-like terms of the query
        self.words: dict[int, list[str]] = {}  # informative words of each passing record
        self.df: dict[str, int] = {}    # every query term's document frequency (store)
        self.route: dict[int, str] = {}  # how each passing record passed
        self.scope: Any = None          # unit vectors of the records in scope (rows)
        self.row: dict[int, int] = {}   # rowid -> row of `scope`
        self.vector: Any = None         # the query's unit vector (as recall embeds it)
        self.semantic_text = ""         # the text of the query recall embeds


def name_terms(query: str) -> set[str]:
    """The query's name-like terms: with a digit, a compound (``krf-e9``), or a word
    capitalised anywhere but at the start ("Xcode", "Redis"), lower-cased."""
    from wardian.memory.ranking import STOP_WORDS

    found = {m.group().lower() for m in _NAME_WORD.finditer(query)}
    words = query.split()
    for word in words[1:]:
        bare = word.strip("?,.!:;'\"()")
        bare = bare[:-2] if bare.endswith("'s") else bare
        if bare[:1].isupper() and bare.lower() not in STOP_WORDS:
            found.add(bare.lower())
    return {t for t in found if t not in STOP_WORDS}


def gather(name: str) -> list[Query]:
    """Builds suite `name` in a fresh SQLite store and records, for every query, what
    today's floor saw and returned."""
    import importlib

    from wardian.memory.ranking import (
        MARGIN_COSINE,
        MARGIN_FLOOR,
        fuse,
        idf,
        nearest,
        query_terms,
    )

    suite = importlib.import_module(recall_bench.SUITES[name])
    out: list[Query] = []
    with tempfile.TemporaryDirectory(prefix="wardian-spec-") as tmp:
        os.environ["WARDIAN_HOME"] = tmp
        os.environ.pop("WARDIAN_DATABASE_URL", None)
        from wardian.memory.store import MemoryStore

        store = MemoryStore(Path(tmp) / "memory.db")
        ids = recall_bench._build(store, suite)
        key_of = {v: k for k, v in ids.items()}
        rowid_key, text_of = {}, {}
        for rid, rec_id, text in store.conn.execute("SELECT rowid, id, text FROM records"):
            rowid_key[int(rid)] = key_of[rec_id]
            text_of[int(rid)] = text
        total = int(store.conn.execute(
            "SELECT COUNT(*) FROM records WHERE status = 'active'").fetchone()[0])
        index = store.index
        if _EMB[0] is None:
            _EMB[0] = index.embedder()
        import numpy as np

        from wardian.memory.ranking import semantic_query

        key_rowid = {k: r for r, k in rowid_key.items()}
        scopes: dict[str, tuple[Any, dict[int, int]]] = {}
        for ws in suite.WORKSPACES:
            keys = [k for k, sc, _ in suite.RECORDS
                    if sc in ("agent", ws) and k not in suite.REMOVED]
            rows = [key_rowid[k] for k in keys]
            mat = np.array([_EMB[0].embed(text_of[r]) for r in rows], dtype=float)
            scopes[ws] = (mat, {r: i for i, r in enumerate(rows)})
        for kind, ws, text, expected in suite.QUERIES:
            q = Query(kind, expected, text)
            q.scope, q.row = scopes[ws]
            q.semantic_text = semantic_query(text, suite.WORKSPACES[ws])
            q.vector = np.array(_EMB[0].embed(q.semantic_text), dtype=float)
            seen = index.recall_considered(recall_bench.AGENT, text,
                                           workspace=suite.WORKSPACES[ws])
            ranked = fuse(seen.candidates, semantic=seen.semantic, limit=10,
                          all_known=seen.all_known, margin=seen.margin)
            q.today = [rowid_key[c.rowid] for c in ranked]
            q.nearest = nearest(seen.candidates, semantic=seen.semantic)
            q.near = [rowid_key[c.rowid] for c in q.nearest]
            pool = seen.candidates
            q.passing = [c for c in pool if c.passes(semantic=seen.semantic,
                                                     all_known=seen.all_known)]
            if seen.semantic and seen.margin is not None and seen.margin >= MARGIN_FLOOR \
                    and pool:
                best = max(pool, key=lambda c: c.cosine)
                if best not in q.passing and best.cosine >= MARGIN_COSINE:
                    q.passing.append(best)
            terms = query_terms(text)
            freq = {t: index._doc_freq(t) for t in terms}
            known = [idf(n, total) for n in freq.values() if n > 0]
            top = max(known, default=1.0) + 1.0
            q.df = freq
            for c in q.passing:
                q.route[c.rowid] = ("lexical" if c.coverage > 0.5 else "margin"
                                    if not c.passes(semantic=seen.semantic,
                                                    all_known=seen.all_known)
                                    else "semantic")
            q.idf = {t: idf(n, total) if n > 0 else top for t, n in freq.items()}
            q.names = name_terms(text) & set(terms) | {
                t for t in terms if _NAME_WORD.fullmatch(t)}
            q.words = {c.rowid: query_terms(text_of[c.rowid])
                       for c in [*q.passing, *q.nearest]}
            out.append(q)
        store.close()
    return out


_VEC: dict[str, Any] = {}


def _vec(word: str) -> Any:
    if word not in _VEC:
        emb = _EMB[0]
        _VEC[word] = emb.embed(word) if emb is not None else None
    return _VEC[word]


_EMB: list[Any] = [None]


def wcos(a: str, b: str) -> float:
    """Cosine of two words' static vectors (1.0 for the same word)."""
    if a == b:
        return 1.0
    va, vb = _vec(a), _vec(b)
    if va is None or vb is None:
        return 0.0
    return float(sum(x * y for x, y in zip(va, vb, strict=True)))


def _held(c: Any, term: str, words: list[str]) -> bool:
    """Lexically held: FTS said so, or the record's words include it (compounds)."""
    return term in c.held or term in words


def distinctive(q: Query, k: int) -> list[str]:
    """The query's `k` rarest terms by idf (ties kept)."""
    ordered = sorted(q.idf.items(), key=lambda kv: -kv[1])
    if not ordered:
        return []
    cut = ordered[min(k, len(ordered)) - 1][1]
    return [t for t, w in ordered if w >= cut - 1e-9]


def rule_rarest(k: int, soft: float | None) -> Callable[[Query, Any], bool]:
    """The candidate holds each of the query's `k` rarest terms, lexically or (with
    `soft`) through a record word of word cosine >= `soft`."""
    def ok(q: Query, c: Any) -> bool:
        words = q.words[c.rowid]
        for t in distinctive(q, k):
            if _held(c, t, words):
                continue
            if soft is not None and max((wcos(t, w) for w in words), default=0.0) >= soft:
                continue
            return False
        return True
    return ok


def rule_names(unknown_only: bool) -> Callable[[Query, Any], bool]:
    """The candidate holds every name-like term of the query (`unknown_only`: every such
    term the store holds at all; a name nothing holds vetoes every candidate)."""
    def ok(q: Query, c: Any) -> bool:
        words = q.words[c.rowid]
        for t in q.names:
            if t not in q.idf:
                continue
            if unknown_only:
                if q.idf[t] > max((v for u, v in q.idf.items() if u != t), default=0) \
                        and not _held(c, t, words):
                    return False
            elif not _held(c, t, words):
                return False
        return True
    return ok


def rule_unknown_name() -> Callable[[Query, Any], bool]:
    """No name-like term of the query is unknown to the whole store."""
    def ok(q: Query, c: Any) -> bool:
        top = max(q.idf.values(), default=0.0)
        return not any(q.idf.get(t, 0.0) >= top and not _held(c, t, q.words[c.rowid])
                       and _is_unknown(q, t) for t in q.names)
    return ok


def _is_unknown(q: Query, t: str) -> bool:
    known = [v for u, v in q.idf.items() if u != t]
    return (bool(known) and q.idf[t] > max(known) + 0.5) or (not known and True)


def rule_mismatch(slot: float, k: int) -> Callable[[Query, Any], bool]:
    """No specificity mismatch: for none of the query's `k` rarest terms that the record
    does not hold does the record hold another word (not in the query) within word cosine
    `slot` of it: a different value in the same slot."""
    def ok(q: Query, c: Any) -> bool:
        words = q.words[c.rowid]
        asked = set(q.idf)
        for t in distinctive(q, k):
            if _held(c, t, words):
                continue
            if any(w not in asked and wcos(t, w) >= slot for w in words):
                return False
        return True
    return ok


def rule_any_rare(share: float) -> Callable[[Query, Any], bool]:
    """The candidate holds at least `share` of the query's idf weight above the median
    idf of its terms (its distinctive half)."""
    def ok(q: Query, c: Any) -> bool:
        if not q.idf:
            return True
        vals = sorted(q.idf.values())
        mid = vals[len(vals) // 2]
        rare = {t: w for t, w in q.idf.items() if w >= mid}
        whole = sum(rare.values())
        held = sum(w for t, w in rare.items() if _held(c, t, q.words[c.rowid]))
        return whole <= 0 or held / whole >= share
    return ok


def rule_known_rarest(k: int, soft: float | None) -> Callable[[Query, Any], bool]:
    """`rule_rarest`, but only the distinctive terms some record of the store holds
    count: a word nothing holds is the paraphrase's own word as often as a near miss's."""

    def ok(q: Query, c: Any) -> bool:
        top = distinctive_known(q, k)
        words = q.words[c.rowid]
        for t in top:
            if _held(c, t, words):
                continue
            if soft is not None and max((wcos(t, w) for w in words), default=0.0) >= soft:
                continue
            return False
        return True
    return ok


def distinctive_known(q: Query, k: int) -> list[str]:
    """The query's `k` rarest terms among those some record holds (ties kept)."""
    ordered = sorted(((t, w) for t, w in q.idf.items() if q.df.get(t, 0) > 0),
                     key=lambda kv: -kv[1])
    if not ordered:
        return []
    cut = ordered[min(k, len(ordered)) - 1][1]
    return [t for t, w in ordered if w >= cut - 1e-9]


def rule_unknown_rarest() -> Callable[[Query, Any], bool]:
    """No term of the query is unknown to the store (vetoes every candidate of a query
    with a word nothing holds)."""
    def ok(q: Query, c: Any) -> bool:
        return all(n > 0 for n in q.df.values())
    return ok


def only_routes(rule: Callable[[Query, Any], bool], routes: set[str]
                ) -> Callable[[Query, Any], bool]:
    """`rule` applied only to candidates that passed by one of `routes`."""
    def ok(q: Query, c: Any) -> bool:
        return q.route.get(c.rowid) not in routes or rule(q, c)
    return ok


_CHAR_TOKENS = 29871
"""Llama's vocabulary ends with its single characters: ids from here on are one
character each (a word's suffix "s", a digit), not a word piece's frequency rank."""


def background_rare(t: str, cut: int, pieces: bool) -> bool:
    """Whether `t` is rare in general English by wordllama's vocabulary (ordered by BPE
    merge score, roughly frequency): one piece ranked beyond `cut`, or (`pieces`) a word
    of two or more word pieces; a name-like term always is."""
    if _NAME_WORD.fullmatch(t):
        return True
    emb = _EMB[0]
    ids = [i for i in emb.tokenise(t) if i < _CHAR_TOKENS] if emb is not None else []
    if not ids:
        return True
    if len(ids) == 1:
        return bool(ids[0] >= cut)
    return pieces


def rule_background(cut: int, pieces: bool, soft: float | None, known_only: bool
                    ) -> Callable[[Query, Any], bool]:
    """The candidate holds every background-rare term of the query (`background_rare`),
    lexically or (with `soft`) through a record word of word cosine >= `soft`;
    `known_only`: only such terms some record of the store holds count."""
    def ok(q: Query, c: Any) -> bool:
        words = q.words[c.rowid]
        for t in q.idf:
            if known_only and q.df.get(t, 0) == 0:
                continue
            if not (t in q.names or background_rare(t, cut, pieces)):
                continue
            if _held(c, t, words):
                continue
            if soft is not None and max((wcos(t, w) for w in words), default=0.0) >= soft:
                continue
            return False
        return True
    return ok


def _standing(values: Any, row: int) -> float:
    """How many standard deviations `values[row]` is above the mean of `values`."""
    sd = float(values.std())
    return (float(values[row]) - float(values.mean())) / sd if sd > 0 else 0.0


def rule_term_points(cut: int, pieces: bool, z: float) -> Callable[[Query, Any], bool]:
    """Every background-rare term of the query the candidate does not hold points at it
    by meaning: the candidate's cosine with the term alone stands `z` deviations above
    the scope's records' ("RAM" at the record on worker memory)."""
    def ok(q: Query, c: Any) -> bool:
        import numpy as np

        words = q.words[c.rowid]
        for t in q.idf:
            if not (t in q.names or background_rare(t, cut, pieces)) or _held(c, t, words):
                continue
            v = _vec(t)
            if v is None or c.rowid not in q.row:
                return False
            if _standing(q.scope @ np.array(v, dtype=float), q.row[c.rowid]) < z:
                return False
        return True
    return ok


def rule_combined(cut: int, pieces: bool, z: float | None, unknown_only: bool
                  ) -> Callable[[Query, Any], bool]:
    """`rule_term_points` (or, with `z` None, lexical holding alone) over the
    background-rare terms; `unknown_only`: only such terms no record of the store holds."""
    def ok(q: Query, c: Any) -> bool:
        import numpy as np

        words = q.words[c.rowid]
        for t in q.idf:
            if unknown_only and q.df.get(t, 0) > 0:
                continue
            if not (t in q.names or background_rare(t, cut, pieces)) or _held(c, t, words):
                continue
            if z is None:
                return False
            v = _vec(t)
            if v is None or c.rowid not in q.row:
                return False
            if _standing(q.scope @ np.array(v, dtype=float), q.row[c.rowid]) < z:
                return False
        return True
    return ok


def grid(data: dict[str, list[Query]]) -> None:
    """Every combination of `rule_combined`'s settings (all routes or meaning only),
    kept when no suite loses more than 0.01 of matches Recall@5 or what the agent sees;
    printed best no-answer gain (pooled tuning suites) first."""
    base = {n: score(qs, None) for n, qs in data.items()}
    found = []
    for cut in (12000, 16000, 20000, 25000, 28000):
        for pieces in (False, True):
            for z in (None, 0.5, 1.0, 1.5, 2.0, 3.0):
                for unknown_only in (False, True):
                    for meaning in (False, True):
                        rule = rule_combined(cut, pieces, z, unknown_only)
                        if meaning:
                            rule = only_routes(rule, {"semantic", "margin"})
                        figs = {n: score(qs, rule) for n, qs in data.items()}
                        worst = min(min(figs[n]["recall"] - base[n]["recall"],
                                        figs[n]["sees"] - base[n]["sees"]) for n in data)
                        pooled = [q for n in TUNING if n in data for q in data[n]]
                        gain = score(pooled, rule)["empty"] - score(pooled, None)["empty"]
                        found.append((gain, worst, cut, pieces, z, unknown_only, meaning,
                                      figs))
    found.sort(key=lambda f: -f[0])
    for gain, worst, cut, pieces, z, unknown_only, meaning, figs in found:
        if worst < -0.0101:
            continue
        print(f"  cut {cut} pieces {pieces} z {z} unknown-only {unknown_only} meaning-only"
              f" {meaning}: tuning no-answer +{gain:.3f}, worst drop {-worst:.3f};"
              + "".join(f" {n} {figs[n]['empty'] - base[n]['empty']:+.3f}" for n in data))
    print(f"  ({len(found)} settings; those dropping any suite by more than 0.01 left out)")


def admits(data: dict[str, list[Query]]) -> None:
    """`admit_rare` settings, alone and with the best vetoes: the matches they add may
    pay for what a veto takes."""
    base = {n: score(qs, None) for n, qs in data.items()}
    vetoes: dict[str, Callable[[Query, Any], bool] | None] = {
        "no veto": None,
        "English-rare 25000 held or neighbour 0.5": rule_background(25000, False, 0.5, False),
        "English-rare 20000 held or neighbour 0.5": rule_background(20000, False, 0.5, False),
        "English-rare 12000/pieces held or neighbour 0.5": rule_background(12000, True, 0.5,
                                                                          False),
        "names held": rule_names(False),
    }
    for cut in (12000, 20000):
        for pieces in (False, True):
            for cosine in (0.0, 0.2, 0.3):
                admit = admit_rare(cut, pieces, cosine)
                for label, veto in vetoes.items():
                    figs = {n: score(qs, veto, admit) for n, qs in data.items()}
                    print(f"  admit cut {cut} pieces {pieces} cosine {cosine}, {label}:"
                          + "".join(f" {n} {figs[n]['recall'] - base[n]['recall']:+.3f}"
                                    f"/{figs[n]['sees'] - base[n]['sees']:+.3f}"
                                    f"/{figs[n]['empty'] - base[n]['empty']:+.3f}"
                                    for n in data))


def _share(q: Query, c: Any, terms: list[str], soft: float | None) -> float:
    """The idf-weighted share of `terms` that `c` holds (or, with `soft`, has a record
    word within that word cosine of); 1.0 when `terms` is empty."""
    whole = sum(q.idf[t] for t in terms)
    if whole <= 0:
        return 1.0
    words = q.words[c.rowid]
    got = sum(q.idf[t] for t in terms if _held(c, t, words) or (
        soft is not None and max((wcos(t, w) for w in words), default=0.0) >= soft))
    return got / whole


def _points(q: Query, c: Any, terms: list[str]) -> float:
    """The least standing-out (z) of `c` by the cosine with any unheld one of `terms`
    alone; 10.0 when it holds them all."""
    import numpy as np

    worst = 10.0
    for t in terms:
        if _held(c, t, q.words[c.rowid]):
            continue
        v = _vec(t)
        if v is None or c.rowid not in q.row:
            return -10.0
        worst = min(worst, _standing(q.scope @ np.array(v, dtype=float), q.row[c.rowid]))
    return worst


FEATURES: dict[str, Callable[[Query, Any], float]] = {
    "store-rarest held": lambda q, c: _share(q, c, distinctive(q, 1), None),
    "store-rare half held": lambda q, c: _share(
        q, c, [t for t, w in q.idf.items() if w >= sorted(q.idf.values())[len(q.idf) // 2]],
        None),
    "English-rare 12000/pieces held or neighbour": lambda q, c: _share(
        q, c, [t for t in q.idf if t in q.names or background_rare(t, 12000, True)], 0.5),
    "English-rare 20000 held or neighbour": lambda q, c: _share(
        q, c, [t for t in q.idf if t in q.names or background_rare(t, 20000, False)], 0.5),
    "English-rare 20000 points at (z)": lambda q, c: _points(
        q, c, [t for t in q.idf if t in q.names or background_rare(t, 20000, False)]),
    "names held": lambda q, c: _share(q, c, sorted(q.names & set(q.idf)), None),
}
"""Query-level specificity features, each the best over the candidates clearing today's
floor (`auc`)."""


def auc(data: dict[str, list[Query]]) -> None:
    """How well each of `FEATURES` separates, among the queries today's floor answers,
    those whose answer is in the top five from the no-answer ones (AUC: 1.0 perfectly,
    0.5 not at all): the near misses the floor lets through against the answers it
    finds."""
    from recall_bench import _auc

    groups: dict[str, list[Query]] = {
        "tuning": [q for n in TUNING if n in data for q in data[n]]}
    groups.update({n: data[n] for n in ("eighth", "unseen2") if n in data})
    for label, feature in FEATURES.items():
        line = []
        for group, qs in groups.items():
            hit = [max(feature(q, c) for c in q.passing) for q in qs
                   if q.today and q.passing and set(q.expected) & set(q.today[:5])]
            miss = [max(feature(q, c) for c in q.passing) for q in qs
                    if q.today and q.passing and not q.expected]
            line.append(f"{group} {_auc(hit, miss):.2f} ({len(hit)}:{len(miss)})")
        print(f"  {label:<44} " + "  ".join(line))


def rule_term_matters(cut: int, pieces: bool, z: float) -> Callable[[Query, Any], bool]:
    """Every background-rare term of the query the candidate does not hold matters for
    it: leaving the term out of the query lowers the candidate's cosine by `z` standard
    deviations of the scope's changes more than it lowers the scope's on average."""
    def ok(q: Query, c: Any) -> bool:
        import numpy as np

        words = q.words[c.rowid]
        for t in q.idf:
            if not (t in q.names or background_rare(t, cut, pieces)) or _held(c, t, words):
                continue
            rest = " ".join(w for w in q.semantic_text.split()
                            if t not in query_words(w))
            emb = _EMB[0]
            v = emb.embed(rest) if rest else None
            if c.rowid not in q.row:
                return False
            if v is None:
                continue
            drop = q.scope @ q.vector - q.scope @ np.array(v, dtype=float)
            if _standing(drop, q.row[c.rowid]) < z:
                return False
        return True
    return ok


def query_words(word: str) -> list[str]:
    """The lower-cased informative pieces of one whitespace-separated word."""
    from wardian.memory.ranking import query_terms

    return [*query_terms(word), word.lower().strip("?,.!:;'\"()")]


def detail(queries: list[Query], rule: Callable[[Query, Any], bool]) -> None:
    """One line per query `rule` vetoes."""
    for q in queries:
        if q.today and not any(rule(q, c) for c in q.passing):
            rare = distinctive(q, 1)
            hit = bool(set(q.expected) & set(q.today[:5]))
            print(f"    {'ANS' if q.expected else 'no '} {'hit' if hit else '   '}"
                  f" {q.kind:<10} {q.text!r} rarest {rare} df"
                  f" {[q.df[t] for t in rare]} routes {sorted(set(q.route.values()))}")


def admit_rare(cut: int, pieces: bool, cosine: float) -> Callable[[Query], bool]:
    """For a query today's floor leaves empty: its nearest record holds every one of the
    query's background-rare terms (at least one) and is at least `cosine` near."""
    def ok(q: Query) -> bool:
        if not q.nearest:
            return False
        c = q.nearest[0]
        rare = [t for t in q.idf if t in q.names or background_rare(t, cut, pieces)]
        return (bool(rare) and c.cosine >= cosine
                and all(_held(c, t, q.words[c.rowid]) for t in rare))
    return ok


def score(queries: list[Query], rule: Callable[[Query, Any], bool] | None,
          admit: Callable[[Query], bool] | None = None) -> dict[str, float]:
    """Figures when `rule` vetoes the "anything fits?" decision (None: today) and
    `admit` answers a query left empty with its nearest records."""
    rec = sees = para_n = para_sees = 0.0
    ans = empty = no = vetoed_ans = vetoed_no = 0
    for q in queries:
        keys = q.today
        if not keys and admit is not None and admit(q):
            keys = q.near
        elif keys and rule is not None and not any(rule(q, c) for c in q.passing):
            keys = []
            if q.expected:
                vetoed_ans += 1
            else:
                vetoed_no += 1
        if not q.expected:
            no += 1
            empty += not keys
            continue
        ans += 1
        share = len(set(q.expected) & set(keys[:5])) / len(q.expected)
        seen = share if keys else len(set(q.expected) & set(q.near)) / len(q.expected)
        rec += share
        sees += seen
        if q.kind == "paraphrase":
            para_n += 1
            para_sees += seen
    return {"recall": rec / ans, "sees": sees / ans, "para sees": para_sees / max(1, para_n),
            "empty": empty / max(1, no), "vetoed answerable": vetoed_ans,
            "vetoed no-answer": vetoed_no}


RULES: dict[str, Callable[[Query, Any], bool] | None] = {
    "today": None,
    "rarest-1 held": rule_rarest(1, None),
    "rarest-1 held or neighbour>=0.5": rule_rarest(1, 0.5),
    "rarest-1 held or neighbour>=0.35": rule_rarest(1, 0.35),
    "rarest-2 held or neighbour>=0.5": rule_rarest(2, 0.5),
    "rare half >= 0.5": rule_any_rare(0.5),
    "known rarest-1 held": rule_known_rarest(1, None),
    "known rarest-1 held or neighbour>=0.5": rule_known_rarest(1, 0.5),
    "known rarest-1 held, semantic routes only": only_routes(rule_known_rarest(1, None),
                                                             {"semantic", "margin"}),
    "rarest-1 held, semantic routes only": only_routes(rule_rarest(1, None),
                                                       {"semantic", "margin"}),
    "rarest-1 held, margin route only": only_routes(rule_rarest(1, None), {"margin"}),
    "no unknown word": rule_unknown_rarest(),
    **{f"bg-rare cut {cut} pieces {pieces} soft {soft} known {known}":
       rule_background(cut, pieces, soft, known)
       for cut in (12000, 20000) for pieces in (False, True) for soft in (None, 0.5)
       for known in (False, True)},
    "bg-rare cut 20000 soft 0.5, semantic routes only": only_routes(
        rule_background(20000, False, 0.5, False), {"semantic", "margin"}),
    "bg-rare cut 12000 pieces soft 0.5, semantic routes only": only_routes(
        rule_background(12000, True, 0.5, False), {"semantic", "margin"}),
    "bg-rare cut 25000 soft 0.5": rule_background(25000, False, 0.5, False),
    "bg-rare cut 20000 soft 0.35": rule_background(20000, False, 0.35, False),
    **{f"term points cut {cut} pieces {pieces} z {z}": rule_term_points(cut, pieces, z)
       for cut in (12000, 20000) for pieces in (False, True) for z in (1.0, 2.0)},
    **{f"term matters cut {cut} pieces {pieces} z {z}": rule_term_matters(cut, pieces, z)
       for cut in (12000, 20000) for pieces in (False, True) for z in (0.5, 1.0, 2.0)},
    "names held (all)": rule_names(False),
    "names held (rarest name)": rule_names(True),
    "no unknown rarest name": rule_unknown_name(),
    "no mismatch rarest-1 slot>=0.5": rule_mismatch(0.5, 1),
    "no mismatch rarest-1 slot>=0.6": rule_mismatch(0.6, 1),
    "no mismatch rarest-2 slot>=0.6": rule_mismatch(0.6, 2),
}


def main(argv: list[str]) -> int:
    show = argv[argv.index("--detail") + 1] if "--detail" in argv else None
    if show:
        at = argv.index("--detail")
        argv = argv[:at] + argv[at + 2:]
    sweep, only_admits, separation = "--grid" in argv, "--admits" in argv, "--auc" in argv
    argv = [a for a in argv if a not in ("--grid", "--admits", "--auc")]
    names = argv or list(DEFAULT)
    data = {n: gather(n) for n in names}
    if separation:
        print("AUC, answered queries: answer in the top five against no-answer (n hit:n no):")
        auc(data)
        return 0
    if only_admits:
        print("admitting empty queries whose nearest holds every rare term, with a veto"
              " (matches / agent sees / no-answer empty, change from today):")
        admits(data)
        return 0
    if sweep:
        print("grid of rule_combined (no-answer empty gain per suite):")
        grid(data)
        print("admitting empty queries whose nearest holds every rare term, with a veto:")
        admits(data)
        return 0
    for label, rule in RULES.items():
        if show and label != show:
            continue
        print(f"{label}")
        pooled: list[Query] = []
        for n in names:
            f = score(data[n], rule)
            if n in TUNING:
                pooled += data[n]
            print(f"  {n:<8} matches {f['recall']:.3f}  sees {f['sees']:.3f}"
                  f" (para {f['para sees']:.3f})  no-answer empty {f['empty']:.3f}"
                  f"  vetoed {f['vetoed answerable']} answerable /"
                  f" {f['vetoed no-answer']} no-answer")
            if show and rule is not None:
                detail(data[n], rule)
        if pooled:
            f = score(pooled, rule)
            print(f"  {'tuning':<8} matches {f['recall']:.3f}  sees {f['sees']:.3f}"
                  f" (para {f['para sees']:.3f})  no-answer empty {f['empty']:.3f}"
                  f"  vetoed {f['vetoed answerable']} answerable /"
                  f" {f['vetoed no-answer']} no-answer")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
