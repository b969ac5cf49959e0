"""Query framing, the nearest's order, matches with nearest, a relative floor: a survey.

Four ideas for recall's ranking (`wardian.memory.ranking`) measured on the recall suites,
none adopted (``docs/decisions/recall-ranking-survey-2.md``). SQLite, semantic score on.
Each suite is built once (`recall_bench._build`) and asked every query from its
workspace with `RecallIndex.recall_considered`; what recall would answer is
`ranking.fuse`, and what it shows below the floor when that is empty, `ranking.nearest`,
exactly as `RecallIndex.recall_with_nearest` does (the "today" lines reproduce
``bench/recall_bench.py``).

* ``framing``: the query's question framing left out of the text that is embedded, by
  wrapping `ranking.semantic_query` (the records' vectors are not touched): "terms"
  embeds only the words holding an informative term (``how do I rotate the keys`` ->
  ``rotate keys``), "lead" drops the leading words that hold none (``rotate the keys``).
  Prints matches Recall@5, matches paraphrase Recall@5, what the agent sees Recall@5
  (matches, or the nearest when nothing fits) and its paraphrase figure, no-answer empty
  and leaks, and, with the floor off, the share of paraphrase answers among the 3 and the
  5 best by fused score (ranking alone, whatever the floor's constants).
* ``order``: for the answerable queries the floor leaves empty, the share of their
  answers among the 3 nearest shown, with the nearest ordered by each rule of
  `ORDERS` instead of the fused score.
* ``together``: what the agent sees Recall@5 (and paraphrase) if the nearest were shown
  under the matches too: "always" adds the 3 nearest to every top five, "fill" adds
  nearest only up to five lines in all. The no-answer figure is the matches' and does
  not change.
* ``gap``: for the queries the floor leaves empty, how well a relative signal of the
  best candidate (its fused score minus the mean of the next five, or divided by it)
  or an absolute one (fused score, cosine, z, margin) separates those whose best
  candidate is an answer from the no-answer ones and from those whose best is wrong
  (AUC: 1.0 perfectly, 0.5 not at all): what a relative floor admitting the best of
  an empty query would have to tell apart.

Run: ``PYTHONPATH=$PWD/src .venv/bin/python bench/recall_survey_query.py [--shown N]
[SUITE ...]`` (default: main holdout fresh unseen blind novel eighth unseen2; a minute).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_bench

DEFAULT = ("main", "holdout", "fresh", "unseen", "blind", "novel", "eighth", "unseen2")
SHOWN = 3
"""How many nearest records are shown below the floor in these measurements: the count
recall showed when the ideas were measured (``ranking.NEAREST`` is five since); ``--shown
N`` measures at another."""


def _framed(mode: str, original: Callable[[str, str | None], str]
            ) -> Callable[[str, str | None], str]:
    """`semantic_query` with the question framing left out first (module: framing)."""
    from wardian.memory.ranking import query_terms

    def informative(word: str) -> bool:
        return bool(query_terms(word))

    def wrapped(query: str, workspace: str | None) -> str:
        words = query.split()
        if mode == "terms":
            kept = [w for w in words if informative(w)]
        else:
            at = next((i for i, w in enumerate(words) if informative(w)), len(words))
            kept = words[at:]
        return original(" ".join(kept) if kept else query, workspace)

    return wrapped


ORDERS: dict[str, Callable[[Any, dict[int, int], dict[int, int]], Any]] = {
    "fused (today)": lambda c, cov, cos: -c.score,
    "cosine": lambda c, cov, cos: -c.cosine,
    "coverage": lambda c, cov, cos: (-c.coverage, -c.lexical),
    "0.3 cov + 0.7 cos": lambda c, cov, cos: -(0.3 * c.coverage + 0.7 * c.cosine),
    "0.7 cov + 0.3 cos": lambda c, cov, cos: -(0.7 * c.coverage + 0.3 * c.cosine),
    "RRF k=60": lambda c, cov, cos: -(1 / (60 + cov[c.rowid]) + 1 / (60 + cos[c.rowid])),
    "RRF k=10": lambda c, cov, cos: -(1 / (10 + cov[c.rowid]) + 1 / (10 + cos[c.rowid])),
    "cosine x (1 + coverage)": lambda c, cov, cos: -(c.cosine * (1 + c.coverage)),
    "1 - (1-cov)(1-cos)": lambda c, cov, cos: -(1 - (1 - c.coverage)
                                               * (1 - max(c.cosine, 0.0))),
}
"""``order``'s rules for the nearest below the floor; `cov` and `cos` give each
candidate's rank (0 = first) by coverage and by cosine, for reciprocal rank fusion."""


class _Suite:
    """One suite built in SQLite: its store, keys by rowid and scopes by key."""

    def __init__(self, name: str) -> None:
        import importlib

        self.name = name
        self.suite = importlib.import_module(recall_bench.SUITES[name])
        tmp = tempfile.mkdtemp(prefix="wardian-survey-")
        os.environ["WARDIAN_HOME"] = tmp
        os.environ.pop("WARDIAN_DATABASE_URL", None)
        from wardian.memory.db import MemoryDB
        from wardian.memory.store import MemoryStore

        self.store = MemoryStore(MemoryDB.open(Path(tmp) / "memory.db"))
        ids = recall_bench._build(self.store, self.suite)
        key_of = {v: k for k, v in ids.items()}
        self.key = {int(r[0]): key_of[r[1]] for r in self.store.conn.execute(
            "SELECT rowid, id FROM records")}
        self.scope = {key: scope for key, scope, _ in self.suite.RECORDS}

    def considered(self) -> list[tuple[str, str, tuple[str, ...], Any]]:
        """(kind, workspace key, expected keys, `Considered`) for every query."""
        return [(kind, ws, tuple(expected), self.store.index.recall_considered(
            recall_bench.AGENT, query, workspace=self.suite.WORKSPACES[ws]))
            for kind, ws, query, expected in self.suite.QUERIES]


def _answer(seen: Any) -> tuple[list[Any], list[Any]]:
    """(matches, nearest below the floor) as `RecallIndex.recall_with_nearest` gives."""
    from wardian.memory.ranking import fuse, nearest

    matches = fuse(seen.candidates, semantic=seen.semantic, limit=10,
                   all_known=seen.all_known, margin=seen.margin)
    return matches, ([] if matches else nearest(seen.candidates, semantic=seen.semantic,
                                                count=SHOWN))


def _share(expected: tuple[str, ...], keys: list[str]) -> float:
    return len(set(expected) & set(keys)) / len(expected)


def _figures(built: _Suite) -> dict[str, float]:
    """The bench's figures and the floor-off ranking figures of one pass (``framing``)."""
    from wardian.memory.ranking import _best_first

    sums: dict[str, float] = defaultdict(float)
    for kind, ws, expected, seen in built.considered():
        matches, near = _answer(seen)
        keys = [built.key[c.rowid] for c in matches]
        shown = keys[:5] if keys else [built.key[c.rowid] for c in near]
        sums["leaks"] += sum(k in built.suite.REMOVED or built.scope[k] not in ("agent", ws)
                             for k in keys[:5] + shown)
        if not expected:
            sums["unanswerable"] += 1
            sums["empty"] += not keys
            continue
        para = kind == "paraphrase"
        ranked = [built.key[c.rowid] for c in _best_first(list(seen.candidates),
                                                          semantic=True)]
        for label, value in (("matches", _share(expected, keys[:5])),
                             ("sees", _share(expected, shown)),
                             ("top3", _share(expected, ranked[:3])),
                             ("top5", _share(expected, ranked[:5]))):
            sums[label] += value
            sums[label + " para"] += value if para else 0.0
        sums["answerable"] += 1
        sums["paraphrases"] += para
    n, p = sums["answerable"], max(1.0, sums["paraphrases"])
    return {"matches": sums["matches"] / n, "matches para": sums["matches para"] / p,
            "sees": sums["sees"] / n, "sees para": sums["sees para"] / p,
            "no-answer empty": sums["empty"] / max(1.0, sums["unanswerable"]),
            "leaks": sums["leaks"], "para top3": sums["top3 para"] / p,
            "para top5": sums["top5 para"] / p}


def framing(built: _Suite) -> None:
    from wardian.memory import ranking

    original = ranking.semantic_query
    for mode in ("today", "terms", "lead"):
        ranking.semantic_query = original if mode == "today" else _framed(mode, original)
        try:
            f = _figures(built)
        finally:
            ranking.semantic_query = original
        print(f"  framing {mode:<6} matches {f['matches']:.3f} (paraphrase"
              f" {f['matches para']:.3f})  sees {f['sees']:.3f} (paraphrase"
              f" {f['sees para']:.3f})  no-answer empty {f['no-answer empty']:.3f}"
              f"  leaks {f['leaks']:g}  floor off: paraphrase in top 3 {f['para top3']:.2f},"
              f" top 5 {f['para top5']:.2f}")


def order(built: _Suite, queries: list[tuple[str, str, tuple[str, ...], Any]]) -> None:
    found: dict[str, float] = defaultdict(float)
    empty = 0
    for _kind, _ws, expected, seen in queries:
        if not expected or _answer(seen)[0]:
            continue
        empty += 1
        pool = [c for c in seen.candidates if c.held or c.cosine > 0]
        by_cov = {c.rowid: i for i, c in enumerate(
            sorted(pool, key=lambda c: (-c.coverage, -c.lexical)))}
        by_cos = {c.rowid: i for i, c in enumerate(sorted(pool, key=lambda c: -c.cosine))}
        for name, rule in ORDERS.items():
            top = sorted(pool, key=lambda c, rule=rule: rule(c, by_cov, by_cos))[:SHOWN]
            found[name] += _share(expected, [built.key[c.rowid] for c in top])
    print(f"  order: answers among the {SHOWN} nearest of {empty} answerable empty queries:"
          + ";".join(f" {name} {value:g}" for name, value in found.items()))


def together(built: _Suite, queries: list[tuple[str, str, tuple[str, ...], Any]]) -> None:
    from wardian.memory.ranking import nearest

    sums: dict[str, float] = defaultdict(float)
    n = p = 0
    for kind, _ws, expected, seen in queries:
        if not expected:
            continue
        matches, _ = _answer(seen)
        passed = {c.rowid for c in matches}
        below = [built.key[c.rowid] for c in nearest(
            [c for c in seen.candidates if c.rowid not in passed], semantic=seen.semantic,
            count=SHOWN)]
        keys = [built.key[c.rowid] for c in matches][:5]
        views = {"today": keys or below, "always": keys + below,
                 "fill": keys + below[:max(0, min(SHOWN, 5 - len(keys)))]}
        n += 1
        p += kind == "paraphrase"
        for view, shown in views.items():
            sums[view] += _share(expected, shown)
            sums[view + " para"] += _share(expected, shown) if kind == "paraphrase" else 0
    print("  together: what the agent sees Recall@5 (paraphrase):" + ";".join(
        f" {view} {sums[view] / n:.3f} ({sums[view + ' para'] / max(1, p):.2f})"
        for view in ("today", "always", "fill")))


def gap(built: _Suite, queries: list[tuple[str, str, tuple[str, ...], Any]],
        rows: list[tuple[str, dict[str, float]]]) -> None:
    """Append (label, signals) of every empty query to `rows` (printed pooled)."""
    from wardian.memory.ranking import _best_first

    for _kind, _ws, expected, seen in queries:
        if _answer(seen)[0] or not seen.candidates:
            continue
        ranked = _best_first(list(seen.candidates), semantic=True)
        best, after = ranked[0], [c.score for c in ranked[1:6]]
        rest = sum(after) / len(after) if after else 0.0
        label = ("none" if not expected
                 else "answer" if built.key[best.rowid] in expected else "wrong")
        rows.append((label, {"gap": best.score - rest,
                             "ratio": best.score / rest if rest > 0 else 0.0,
                             "fused": best.score, "cosine": best.cosine, "z": best.z,
                             "margin": seen.margin or 0.0}))


def _print_gap(rows: list[tuple[str, dict[str, float]]]) -> None:
    by = {label: [s for lab, s in rows if lab == label] for label in ("answer", "none", "wrong")}
    print(f"gap, pooled: empty queries whose best is an answer {len(by['answer'])},"
          f" no-answer {len(by['none'])}, best is wrong {len(by['wrong'])}; AUC answer"
          " against no-answer / against wrong:")
    for signal in ("gap", "ratio", "fused", "cosine", "z", "margin"):
        answer = [s[signal] for s in by["answer"]]
        none = recall_bench._auc(answer, [s[signal] for s in by["none"]])
        wrong = recall_bench._auc(answer, [s[signal] for s in by["wrong"]])
        print(f"  {signal:<7} {none:.2f} / {wrong:.2f}")


def main(argv: list[str]) -> int:
    global SHOWN
    if "--shown" in argv:
        at = argv.index("--shown")
        SHOWN = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    names = [a for a in argv if not a.startswith("-")] or list(DEFAULT)
    unknown = [n for n in names if n not in recall_bench.SUITES]
    if unknown:
        print(f"unknown suite {unknown[0]!r}; choose from: {', '.join(DEFAULT)}",
              file=sys.stderr)
        return 2
    rows: list[tuple[str, dict[str, float]]] = []
    for name in names:
        built = _Suite(name)
        if not built.store.index.semantic_enabled():
            print("the semantic score is off (wordllama is not installed)", file=sys.stderr)
            return 2
        print(f"{name}:")
        framing(built)
        queries = built.considered()
        order(built, queries)
        together(built, queries)
        gap(built, queries, rows)
    _print_gap(rows)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    raise SystemExit(main(sys.argv[1:]))
