"""PostgreSQL stems and cuts words as SQLite's FTS5 ``porter unicode61`` does (``memory``
migration 5, `wardian.memory.fts_porter_pg`), so recall finds the same records on both.

Each test compares with a real SQLite FTS5 table and a real PostgreSQL database, on
made-up words: one per way the two Porter stemmers differed (Snowball's ``porter``
dictionary before), every word of one to three letters, seeded random words, and a
database whose ctype is UTF-8 (PostgreSQL's parser split words there)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fts5_words import fts5_words

from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

# Made-up words, one kind of difference each (Snowball's stem before, in the comment).
KINDS = {
    "under three bytes": ["qa", "os", "iy", "zs", "Os"],  # q, o, ii, z
    "FTS5's length rules": ["eed", "ies", "sses"],  # eed, i, ss
    "-logi (FTS5's own rule)": ["zorbology", "frandologies", "glimlogi", "Plurnologist"],
    "-bli (FTS5's own rule)": ["quantibly", "snorbli", "travably", "glemblies"],
    "undoubling after -ed/-ing": ["zekking", "plovved", "quaxxing", "hajjed", "smacced",
                                  "fryyed", "tu11ing", "ZEKKINGS"],
    "digits (the parser left them unstemmed)": ["sha256sums", "x9ers", "k8sation"],
    "bytes, not characters": ["taøing", "gøred", "blåstring", "ßtrings", "щеткиing"],
    "over 64 bytes": ["zorb" * 16 + "ings", "quan" * 17 + "s"],  # Snowball: to 1,000
    "a cut character": ["ta\u1041ing", "ta\u1041ed", "ro\u0fffing"],
}
WORDS = [w for words in KINDS.values() for w in words]


@pytest.fixture
def pg(pg_url: str) -> Iterator[object]:
    """A connection to a migrated database, the ``memory`` schema on its search_path."""
    import psycopg

    from wardian.memory.db import MemoryDB

    MemoryDB.open_at(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET search_path = memory")
        yield conn


def _pg_words(conn: object, texts: list[str], expression: str = "fts_vector(x)"
              ) -> list[list[str]]:
    rows = conn.execute(  # type: ignore[attr-defined]
        f"SELECT array(SELECT lexeme FROM unnest({expression}) ORDER BY 1) FROM"
        " unnest(%s::text[]) WITH ORDINALITY u(x, i) ORDER BY i", (texts,)).fetchall()
    return [list(r[0]) for r in rows]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_of_word_that_differed_stems_as_fts5(pg: object, kind: str) -> None:
    words = KINDS[kind]
    assert dict(zip(words, _pg_words(pg, words), strict=True)) == dict(
        zip(words, fts5_words(words), strict=True))


def test_the_kinds_did_differ_before(pg: object) -> None:
    """The words above are real cases: PostgreSQL's own parser and Snowball dictionary
    (what migrations 2-4 indexed with) give another stem for each kind."""
    old = "to_tsvector('wardian_fts', fts_text(x))"
    expected = dict(zip(WORDS, fts5_words(WORDS), strict=True))
    before = dict(zip(WORDS, _pg_words(pg, WORDS, old), strict=True))
    differed = {kind for kind, words in KINDS.items()
                if any(before[w] != expected[w] for w in words)}
    assert differed == set(KINDS)


def test_a_cut_character_keeps_its_words_together_and_apart(pg: object) -> None:
    """Where FTS5 cuts a character's last byte (not UTF-8), the forms that SQLite
    indexes as one token are one lexeme here, and the bare word another."""
    stems = _pg_words(pg, ["ta\u1041ing", "ta\u1041ed", "ta\u1041"])
    assert stems[0] == stems[1] == ["ta\ufffde181"]
    assert stems[2] == ["ta\u1041"]


def test_every_short_word_and_random_words_stem_as_fts5(pg: object) -> None:
    """All 18,278 words of one to three letters, and 3,000 seeded random words with
    Porter's suffixes, digits and non-ASCII letters."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [a + b + c for a in letters for b in ("", *letters) for c in ("", *letters)
             if b or not c]
    rng = random.Random(19)
    suffixes = ["", "s", "es", "ies", "ed", "ing", "ings", "ly", "bly", "ably", "logy",
                "logies", "ation", "ational", "ization", "iveness", "ful", "ness", "ement",
                "ous", "ive", "ize", "able", "ible", "ance", "ence", "er", "ism", "ity"]
    for _ in range(3000):
        stem = "".join(rng.choice("bcdfghjklmnpqrstvwxyz09æø") + rng.choice("aeiouy")
                       + rng.choice(("", "", "ck", "ll", "kk", "vv", "rr", "x", "y"))
                       for _ in range(rng.randint(1, 3)))
        words.append(stem + rng.choice(suffixes))
    got = _pg_words(pg, words)
    expected = fts5_words(words)
    differ = [(w, g, e) for w, g, e in zip(words, got, expected, strict=True) if g != e]
    assert differ == []


def test_texts_mixing_kinds_index_the_same_words(pg: object) -> None:
    """Whole texts, where a word of one kind sits among plain ones (the whole-text
    shortcut to the Snowball dictionary must not take them)."""
    rng = random.Random(18)
    plain = ["deploys", "running", "tables", "payments", "quietly", "configured"]
    texts = [" ".join([*rng.sample(plain, 3), w, *rng.sample(plain, 2)]) for w in WORDS]
    texts += [" ".join(plain), "Zorbology OF THE Payments", "12m² µs ª² →x"]
    assert _pg_words(pg, texts) == fts5_words(texts)


RECORDS = [
    "The zorbology team reviews every glemblies change before it ships.",
    "Quantibly, the heron service is zekking its caches at night.",
    "Plovved builds go to the sha256sums bucket, not the taøing one.",
    "Ask os and qa before touching the blåstring parser.",
    "Something else entirely about the build queue.",
]
QUERIES = [
    ("zorbologies", 0), ("glembly", 0), ("quantible", 1), ("zekked", 1), ("plovving", 2),
    ("sha256sum", 2), ("taøed", 2), ("os qa", 3), ("blåstrings", 3),
]


@pytest.mark.parametrize("query, expected", QUERIES)
def test_another_form_of_each_kind_recalls_the_same_record_on_both_backends(
        backend: str, query: str, expected: int) -> None:
    store = MemoryStore()
    ids = [store.save("agent-1", text, evidence="made up for this test", scope=Scope("agent"),
                      actor="test").id for text in RECORDS]
    assert [r.id for r in store.index.recall("agent-1", query)][:1] == [ids[expected]]


def test_the_stem_upgrade_indexes_existing_records_again(
        pg_url: str, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pg_memory import records_at_migration

    # a database as migration 4 left it, with records written then
    assert records_at_migration(
        pg_url, 4, [("r-logy", "The zorbology lab moved upstairs."),
                    ("r-kk", "Nightly jobs keep zekking the caches.")],
        "SELECT fts @@ 'zorbolog'::tsquery FROM records WHERE id = 'r-logy'") is False
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    store = MemoryStore()
    assert [r.id for r in store.index.recall("agent-1", "zorbological lab")][:1] == ["r-logy"]
    assert [r.id for r in store.index.recall("agent-1", "zekked caches")][:1] == ["r-kk"]
    from wardian.memory import fulltext_pg

    assert fulltext_pg.index_problems(store.conn) == []


@pytest.fixture
def utf8_url(pg_cluster: object) -> Iterator[str]:
    """A database whose ctype is UTF-8 (``C.utf8``); skips where the server lacks it."""
    import uuid

    import psycopg
    from tests.pg_cluster import Cluster

    from wardian._db import close_databases

    assert isinstance(pg_cluster, Cluster)
    name = f"u_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        try:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 LC_CTYPE 'C.utf8'"
                         " LC_COLLATE 'C.utf8'".encode())
        except psycopg.Error as exc:
            pytest.skip(f"no C.utf8 locale on this server: {exc}")
    url = pg_cluster.url(name)
    yield url
    close_databases(url)
    pg_cluster.drop_database(url)


def test_under_a_utf8_ctype_every_code_point_cuts_and_folds_as_unicode61(
        utf8_url: str) -> None:
    """PostgreSQL's parser follows the ctype: under UTF-8 it split ``a²b``, and words
    holding characters newer than Unicode 6.1; the index words no longer come from it."""
    import psycopg

    from wardian.memory.db import MemoryDB

    points = [c for c in range(1, 0x10000) if not 0xD800 <= c <= 0xDFFF]
    texts = [f"a{chr(c)}b" for c in points]
    MemoryDB.open_at(utf8_url)
    with psycopg.connect(utf8_url, autocommit=True) as conn:
        conn.execute("SET search_path = memory")
        got = _pg_words(conn, texts)
        before = _pg_words(conn, texts, "to_tsvector('wardian_fts', fts_text(x))")
    expected = fts5_words(texts)
    assert [f"U+{c:04X}" for c, g, e in zip(points, got, expected, strict=True) if g != e] == []
    assert sum(b != e for b, e in zip(before, expected, strict=True)) > 1000  # it did differ


def test_under_a_utf8_ctype_recall_finds_what_sqlite_finds(utf8_url: str,
                                                            tmp_path: Path) -> None:
    from wardian.memory.db import MemoryDB

    texts = ["The slab measures 12m² and costs 40€ per square metre.",
             "Latency stays under 5µs with the ꞵeta cache (U+A7B5).",
             "Something else entirely about the build queue."]
    stores = [MemoryStore(db=MemoryDB.open_at(tmp_path / "memory.db")),
              MemoryStore(db=MemoryDB.open_at(utf8_url))]
    answers = []
    for store in stores:
        ids = [store.save("agent-1", t, evidence="made up", scope=Scope("agent"),
                          actor="test").id for t in texts]
        answers.append([[ids.index(r.id) for r in store.index.recall("agent-1", q)]
                        for q in ("12m²", "5µs latency", "ꞵeta cache", "m² slab")])
    assert answers[1] == answers[0]
    assert [a[:1] for a in answers[0]] == [[0], [1], [1], [0]]
