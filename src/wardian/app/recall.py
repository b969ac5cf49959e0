"""Recall's ``wardian doctor`` check: is semantic recall available, and does every record
have its vector?

The fix for records without one is ``wardian garden memory reindex``
(`wardian.app.reindex`).

Without the optional embedding model (``pip install 'wardian[semantic]'``) recall is
lexical only (FTS5/BM25 with the relevance floor) and still works; the doctor says so as
a warning. With it, records saved before it was installed have no vector and are found
by their words only; the doctor counts them. Read-only.
"""

from __future__ import annotations

from collections.abc import Iterator

from wardian.app.doctor import DoctorContext, Finding, register_check

__all__: list[str] = []

_CHECK = "recall"


@register_check(_CHECK, "Recall (semantic score)")
def _recall(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.memory.embedding import MODEL, Embedder, model_files

    if model_files() is None or Embedder.load() is None:
        yield Finding.warning(
            _CHECK, "semantic recall is off: the optional embedding model (wordllama) is not"
            " installed, so `memory recall` ranks by words only (BM25)",
            fix="pip install 'wardian[semantic]'")
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
