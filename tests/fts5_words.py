"""What SQLite's FTS5 ``porter unicode61`` tokenizer makes of texts: the reference the
PostgreSQL ``memory`` schema is compared with (tests/memory/test_stem_pg.py,
bench/stem_bench.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


def as_text(token: bytes) -> str:
    """An FTS5 token as PostgreSQL can hold it: where FTS5 cut a character's last byte
    (not UTF-8), the cut character as U+FFFD and the hex of its bytes kept
    (`wardian.memory.fts_porter_pg`'s note)."""
    try:
        return token.decode()
    except UnicodeDecodeError as exc:
        return token[:exc.start].decode() + "\ufffd" + token[exc.start:].hex()


def fts5_words(texts: Sequence[str]) -> list[list[str]]:
    """Each of `texts` as FTS5 indexes it: its index words, sorted and distinct."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        with db:
            db.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(texts, 1))
        out: list[set[str]] = [set() for _ in texts]
        for term, doc in db.execute("SELECT hex(term), doc FROM v"):
            out[int(doc) - 1].add(as_text(bytes.fromhex(str(term))))
    finally:
        db.close()
    return [sorted(words) for words in out]
