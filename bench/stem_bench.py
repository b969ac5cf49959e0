"""Stem bench (issues 18/19): do SQLite and PostgreSQL cut and stem words alike?

Recall must find the same records on both backends, so each word must become the same
index words on both: SQLite's FTS5 ``porter unicode61`` tokenizer, and the PostgreSQL
``memory`` schema. Starts a throwaway PostgreSQL cluster (`tests.pg_cluster`) and
compares, for the schema as migration 4 left it ("before": the Snowball ``porter``
dictionary behind PostgreSQL's parser) and as the newest migration leaves it ("after":
`wardian.memory.fts_porter_pg`):

* ``words`` — ``--words`` made-up words (default 20,000, seeded: syllables and Porter's
  suffixes), every word of one to three letters, dictionary words
  (``/usr/share/dict/words`` when installed, else the words of our own recall suites),
  and the same made-up words with digits and non-ASCII letters: how many become other
  index words than on SQLite, by kind, with examples.
* ``code points`` — every code point from U+0001 to U+FFFF (``--all-planes``: to
  U+10FFFF) between two letters, in a database with ctype ``C`` and one with a UTF-8
  ctype (``C.utf8``): how many are cut or folded otherwise than unicode61 does.
* the made-up words twelve to a text: the same words on both, and the time to index
  them, after / before.

Usage: python bench/stem_bench.py [--words N] [--seed N] [--all-planes] [--show N]
Exit 1 when "after" differs anywhere; 2 without PostgreSQL binaries.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src"), str(ROOT / "bench")]

SUFFIXES = (
    "", "", "", "s", "es", "ies", "sses", "ed", "eed", "ing", "ings", "ly", "y", "ational",
    "tional", "enci", "anci", "izer", "bli", "bly", "ably", "ibly", "alli", "ally", "entli",
    "ently", "eli", "ely", "ousli", "ously", "ization", "ation", "ations", "ator", "alism",
    "iveness", "fulness", "ousness", "aliti", "ality", "iviti", "ivity", "biliti", "bility",
    "logi", "logy", "logies", "icate", "ative", "alize", "iciti", "icity", "ical", "ful",
    "ness", "al", "ance", "ence", "er", "ers", "ic", "able", "ible", "ant", "ement", "ment",
    "ent", "ion", "sion", "tion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll",
    "ated", "ating", "bled", "bling", "ized", "izing", "ying", "yed",
)
"""Porter's suffixes (and FTS5's own), so that every rule of every step is exercised."""


def made_up(rng: random.Random, letters: str = "bcdfghjklmnpqrstvwxyz") -> str:
    """One made-up word: one to four syllables, sometimes a doubled last letter, a suffix."""
    word = ""
    for _ in range(rng.choice((1, 1, 2, 2, 2, 3, 3, 4))):
        if rng.random() < 0.7:
            word += rng.choice(letters)
        if rng.random() < 0.3:
            word += rng.choice(letters)
        word += rng.choice("aeiouy")
        if rng.random() < 0.5:
            word += rng.choice(letters)
    if rng.random() < 0.15:
        word += word[-1]
    return word + rng.choice(SUFFIXES)


def word_sets(count: int, seed: int) -> dict[str, list[str]]:
    """The bench's words by set (each sorted, distinct)."""
    rng = random.Random(seed)
    sets = {"made-up": {made_up(rng) for _ in range(count)}}
    letters = "abcdefghijklmnopqrstuvwxyz"
    sets["1-3 letters"] = {a + b + c for a in letters for b in ("", *letters)
                           for c in ("", *letters) if b or not c}
    dictionary = Path("/usr/share/dict/words")
    if dictionary.exists():
        sets["dictionary"] = {w for w in dictionary.read_text(errors="replace").split()
                              if w.isalpha()}
    else:  # our own fictional suites' words
        text = " ".join((ROOT / "bench" / name).read_text()
                        for name in os.listdir(ROOT / "bench") if name.startswith("recall_suite"))
        sets["suite words"] = set(re.findall(r"[A-Za-z]+", text))
    sets["digits"] = {made_up(rng, "bcdfghjklmnpqrstvwxyz0123456789") for _ in range(count // 4)}
    sets["non-ASCII"] = {made_up(rng, "bcdfghklmnprstvwxzøßæœðþłğşčřžщжшλπ")
                         for _ in range(count // 4)}
    return {name: sorted(words) for name, words in sets.items()}


def _database(cluster: Any, name: str, ctype: str | None, migrations: int | None) -> str:
    import psycopg

    from wardian._db import migrate_component
    from wardian._pg import PgConnection
    from wardian.memory.schema_pg import POSTGRES_MIGRATIONS

    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        extra = (f" TEMPLATE template0 LC_CTYPE '{ctype}' LC_COLLATE '{ctype}'"
                 if ctype else "")
        conn.execute(f'CREATE DATABASE "{name}"{extra}'.encode())
    url = str(cluster.url(name))
    target = PgConnection(url, "memory")
    try:
        migrate_component(target, "memory",  # type: ignore[arg-type]
                          POSTGRES_MIGRATIONS[:migrations] if migrations else
                          POSTGRES_MIGRATIONS)
    finally:
        target.close()
    return url


BEFORE = "array(SELECT lexeme FROM unnest(to_tsvector('wardian_fts', fts_text(x))) ORDER BY 1)"
AFTER = "array(SELECT lexeme FROM unnest(fts_vector(x)) ORDER BY 1)"


def pg_words(url: str, expression: str, texts: list[str]) -> tuple[list[list[str]], float]:
    """Each of `texts` as the schema at `url` indexes it (sorted), and the seconds it took."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path = memory")
        started = time.perf_counter()
        rows = conn.execute(f"SELECT {expression} FROM unnest(%s::text[]) WITH ORDINALITY"
                            " u(x, i) ORDER BY i", (texts,)).fetchall()
        return [sorted(r[0]) for r in rows], time.perf_counter() - started


def kind(word: str) -> str:
    """Which of the known differences a word falls in (for the report)."""
    w = word.lower()
    if len(w.encode()) < 3:
        return "under 3 bytes"
    if len(w.encode()) > 64:
        return "over 64 bytes"
    if re.search(r"[^a-z0-9]", w):
        return "non-ASCII"
    if w in ("eed", "ies", "sses"):
        return "eed/ies/sses"
    if re.search(r"log[iy]", w):
        return "-logi"
    if re.search(r"bl[iy]", w):
        return "-bli"
    if re.search(r"([0-9b-df-hj-np-tv-z])\1(ed|ing)s?$", w):
        return "undoubling"
    if re.search(r"[0-9]", w):
        return "digits"
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--all-planes", action="store_true")
    parser.add_argument("--show", type=int, default=3, help="examples per kind")
    args = parser.parse_args()
    from tests.fts5_words import fts5_words
    from tests.pg_cluster import Cluster, find_bin

    bindir = find_bin()
    if bindir is None:
        print("stem_bench: no PostgreSQL binaries (install the postgresql package)",
              file=sys.stderr)
        return 2
    cluster = Cluster.start(bindir)
    failed = False
    try:
        urls = {(state, ctype): _database(cluster, f"stem_{state}_{i}", ctype,
                                          4 if state == "before" else None)
                for i, ctype in enumerate((None, "C.utf8"))
                for state in ("before", "after")}
        print(f"{'words':<14} {'count':>7} {'before':>8} {'after':>7}   kinds before")
        for name, words in word_sets(args.words, args.seed).items():
            expected = fts5_words(words)
            differ = {}
            for state, expression in (("before", BEFORE), ("after", AFTER)):
                got, _ = pg_words(urls[(state, None)], expression, words)
                differ[state] = [(w, g, e) for w, g, e in zip(words, got, expected,
                                                              strict=True) if g != e]
            kinds = Counter(kind(w) for w, _, _ in differ["before"])
            print(f"{name:<14} {len(words):>7} {len(differ['before']):>8}"
                  f" {len(differ['after']):>7}   "
                  + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
            for state in ("before", "after"):
                shown: Counter[str] = Counter()
                for w, g, e in differ[state]:
                    if shown[kind(w)] < args.show:
                        shown[kind(w)] += 1
                        print(f"    {state}: {w!r}: PostgreSQL {g}, SQLite {e}")
            failed |= bool(differ["after"])
        last = 0x10FFFF if args.all_planes else 0xFFFF
        points = [c for c in range(1, last + 1) if not 0xD800 <= c <= 0xDFFF]
        texts = [f"a{chr(c)}b" for c in points]
        expected = fts5_words(texts)
        print(f"\ncode points U+0001..U+{last:04X} ({len(points)}) cut or folded otherwise"
              " than unicode61 (each as a<c>b):")
        for ctype in (None, "C.utf8"):
            counts = {}
            for state, expression in (("before", BEFORE), ("after", AFTER)):
                got, _ = pg_words(urls[(state, ctype)], expression, texts)
                bad = [c for c, g, e in zip(points, got, expected, strict=True) if g != e]
                counts[state] = len(bad)
                if state == "after":
                    failed |= bool(bad)
                for c in bad[:args.show]:
                    print(f"    {state} ({ctype or 'C'}): U+{c:04X}")
            print(f"  ctype {ctype or 'C':<7} before {counts['before']:>6}"
                  f"  after {counts['after']:>6}")
        # Speed, on texts as records hold them: the made-up words, twelve to a text.
        made = word_sets(args.words, args.seed)["made-up"]
        random.Random(args.seed).shuffle(made)
        texts = [" ".join(made[i:i + 12]) for i in range(0, len(made), 12)]
        expected = fts5_words(texts)
        took = {}
        for state, expression in (("before", BEFORE), ("after", AFTER)):
            got, took[state] = pg_words(urls[(state, None)], expression, texts)
            if state == "after" and got != expected:
                failed = True
                print("  after: texts of several words differ from SQLite")
        print(f"\nindexing {len(texts)} texts of 12 made-up words: before"
              f" {took['before'] * 1e6 / len(texts):.0f} us, after"
              f" {took['after'] * 1e6 / len(texts):.0f} us per text"
              f" ({took['after'] / took['before']:.1f}x)")
    finally:
        from wardian._pg import close_pools

        close_pools()
        cluster.stop()
    print(f"load average when done: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("FAIL: PostgreSQL still differs" if failed else "OK: the same index words")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
