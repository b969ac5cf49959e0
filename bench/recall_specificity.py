"""Does the record hold the specific thing the query asks about? A floor-signal survey.

Measures candidate "specificity" signals for the relevance floor's "anything fits?"
decision (`wardian.memory.ranking.fuse`): whether the record that clears the floor holds
the query's *distinctive* terms (its rarest by idf in the store, or its name-like terms:
with a digit, a compound, or capitalised inside the sentence), lexically or through a
close word neighbour (wordllama's static word vectors), and whether it holds a
*different* value in the slot of such a term (a record word, not in the query, close to
the query's unheld distinctive term: "cattle" against "horses", "KRF-E9" against
"KRF-E5").

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

Run: ``PYTHONPATH=$PWD/src .venv/bin/python bench/recall_specificity.py [SUITE ...]``
(default: main holdout fresh unseen blind novel eighth unseen2).
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_bench  # noqa: E402

DEFAULT = ("main", "holdout", "fresh", "unseen", "blind", "novel", "eighth", "unseen2")
TUNING = ("main", "holdout", "fresh", "unseen", "blind", "novel")
_NAME_WORD = re.compile(r"\w*\d\w*|\w+(?:[-./]\w+)+")


class Query:
    """One query with what the floor saw, and what the rules need."""

    def __init__(self, kind: str, expected: tuple[str, ...], text: str) -> None:
        self.kind, self.expected, self.text = kind, expected, text
        self.today: list[str] = []      # keys returned today (top 10)
        self.near: list[str] = []       # keys of the nearest three (whatever `today` is)
        self.passing: list[Any] = []    # candidates clearing the strict floor, margin incl.
        self.idf: dict[str, float] = {}  # every query term's idf (unknown: the rarest + 1)
        self.names: set[str] = set()    # name-like terms of the query
        self.words: dict[int, list[str]] = {}  # informative words of each passing record


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
        for kind, ws, text, expected in suite.QUERIES:
            q = Query(kind, expected, text)
            seen = index.recall_considered(recall_bench.AGENT, text,
                                           workspace=suite.WORKSPACES[ws])
            ranked = fuse(seen.candidates, semantic=seen.semantic, limit=10,
                          all_known=seen.all_known, margin=seen.margin)
            q.today = [rowid_key[c.rowid] for c in ranked]
            q.near = [rowid_key[c.rowid] for c in
                      nearest(seen.candidates, semantic=seen.semantic)]
            pool = seen.candidates
            q.passing = [c for c in pool if c.passes(semantic=seen.semantic,
                                                     all_known=seen.all_known)]
            if seen.semantic and seen.margin is not None and seen.margin >= MARGIN_FLOOR \
                    and pool:
                best = max(pool, key=lambda c: c.cosine)
                if best not in q.passing and best.cosine >= MARGIN_COSINE:
                    q.passing.append(best)
            terms = [t for t in query_terms(text)]
            freq = {t: index._doc_freq(t) for t in terms}
            known = [idf(n, total) for n in freq.values() if n > 0]
            top = max(known, default=1.0) + 1.0
            q.idf = {t: idf(n, total) if n > 0 else top for t, n in freq.items()}
            q.names = name_terms(text) & set(terms) | {
                t for t in terms if _NAME_WORD.fullmatch(t)}
            q.words = {c.rowid: query_terms(text_of[c.rowid]) for c in q.passing}
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
    return bool(known) and q.idf[t] > max(known) + 0.5 or not known and True


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


def score(queries: list[Query], rule: Callable[[Query, Any], bool] | None
          ) -> dict[str, float]:
    """Figures when `rule` vetoes the "anything fits?" decision (None: today)."""
    rec = sees = para_n = para_sees = 0.0
    ans = empty = no = vetoed_ans = vetoed_no = 0
    for q in queries:
        keys = q.today
        if keys and rule is not None and not any(rule(q, c) for c in q.passing):
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
    "names held (all)": rule_names(False),
    "names held (rarest name)": rule_names(True),
    "no unknown rarest name": rule_unknown_name(),
    "no mismatch rarest-1 slot>=0.5": rule_mismatch(0.5, 1),
    "no mismatch rarest-1 slot>=0.6": rule_mismatch(0.6, 1),
    "no mismatch rarest-2 slot>=0.6": rule_mismatch(0.6, 2),
}


def main(argv: list[str]) -> int:
    names = argv or list(DEFAULT)
    data = {n: gather(n) for n in names}
    for label, rule in RULES.items():
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
        if pooled:
            f = score(pooled, rule)
            print(f"  {'tuning':<8} matches {f['recall']:.3f}  sees {f['sees']:.3f}"
                  f" (para {f['para sees']:.3f})  no-answer empty {f['empty']:.3f}"
                  f"  vetoed {f['vetoed answerable']} answerable /"
                  f" {f['vetoed no-answer']} no-answer")
    _ = math
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
