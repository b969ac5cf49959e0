"""Sentence vectors for recall from the optional `wordllama` package, loaded lightly.

`wordllama` (MIT) ships static token embeddings inside its wheel: the 32,000 x 256
float16 matrix ``weights/l2_supercat_256.safetensors`` and a Llama (SentencePiece BPE)
tokenizer file. A text's vector is the mean of its tokens' rows, L2-normalised — the
same as ``WordLlama.embed(text, norm=True)`` — and cosine similarity ranks by meaning.

Its own loader takes ~0.6 s of CPU (pydantic, the `tokenizers` library, a float32 copy
of the matrix), more than a whole `wardian memory recall` may spend. So this module
imports nothing of `wordllama`: it finds the package's files, memory-maps the matrix
(reading only the rows of the tokens it sees) and tokenises with a small BPE over the
package's vocabulary: SentencePiece BPE merges the adjacent pair whose merged piece has
the best score, and the Llama vocabulary is ordered by score, so the lowest id wins.
The vocabulary (1.8 MB of JSON) is parsed once and cached as a marshal file beside
``memory.db``. Nothing is downloaded, ever; without the package `Embedder.load` returns
None and recall is lexical only.

Spec: DESIGN.md "Storage" → Recall; issue 19 (hybrid ranking).
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import math
import mmap
import os
import struct
from functools import lru_cache
from pathlib import Path

__all__ = ["DIM", "MODEL", "Embedder", "model_files"]

MODEL = "wordllama/l2_supercat_256"
"""The model's name, stored with every vector so a change of model is noticed."""
DIM = 256
"""The vector's length."""
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_VOCAB = ("tokenizers", "l2_supercat_tokenizer_config.json")
_SPACE = "\u2581"
_ROW = struct.Struct(f"<{DIM}e")
_VECTOR = struct.Struct(f"<{DIM}e")


def model_files() -> tuple[Path, Path] | None:
    """The (weights, tokenizer) files of the installed `wordllama` package, or None when
    it is not installed (or lacks them). Imports nothing of the package."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, vocab = root.joinpath(*_WEIGHTS), root.joinpath(*_VOCAB)
    return (weights, vocab) if weights.is_file() and vocab.is_file() else None


def _load_vocab(path: Path, cache_dir: Path | None) -> dict[str, int]:
    """The tokenizer's {piece: id}, from the marshal cache when it is there."""
    stat = path.stat()
    cache = None
    if cache_dir is not None:
        cache = cache_dir / f"wordllama-vocab-{stat.st_size}-{int(stat.st_mtime)}.marshal"
        try:
            cached = marshal.loads(cache.read_bytes())
            if isinstance(cached, dict):
                return cached
        except (OSError, ValueError, EOFError, TypeError):
            pass
    vocab: dict[str, int] = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    if cache is not None:
        try:
            from wardian._fs import open_private, private_dir

            # Private like everything else in the data directory (issue 15).
            private_dir(cache.parent)
            partial = cache.with_suffix(f".{os.getpid()}.tmp")
            with open_private(partial, "wb") as handle:
                handle.write(marshal.dumps(vocab))
            os.replace(partial, cache)
        except OSError:
            pass  # a cache we cannot write only costs the next process 30 ms
    return vocab


class Embedder:
    """Turns text into unit vectors (`DIM` floats) with wordllama's static embeddings.

    Use `Embedder.load`; instances are read-only and cheap to keep.
    """

    def __init__(self, weights: Path, vocab: Path, *, cache_dir: Path | None) -> None:
        self._ids = _load_vocab(vocab, cache_dir)
        with weights.open("rb") as handle:
            header_len = struct.unpack("<Q", handle.read(8))[0]
            header = json.loads(handle.read(header_len))
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        tensor = header["embedding.weight"]
        if tensor["dtype"] != "F16" or tensor["shape"][1] != DIM:
            raise ValueError(f"unexpected embedding tensor {tensor}")
        self._rows = int(tensor["shape"][0])
        self._base = 8 + header_len + int(tensor["data_offsets"][0])
        self._word = lru_cache(maxsize=4096)(self._tokenise_word)

    @classmethod
    def load(cls, cache_dir: Path | None = None) -> Embedder | None:
        """The embedder, or None when `wordllama` is not installed or its files are
        unreadable. `cache_dir`: where the parsed vocabulary may be cached."""
        files = model_files()
        if files is None:
            return None
        try:
            return cls(*files, cache_dir=cache_dir)
        except (OSError, ValueError, KeyError, struct.error):
            return None

    def _tokenise_word(self, word: str) -> tuple[int, ...]:
        ids = self._ids
        symbols: list[str] = []
        for char in word:
            if char in ids:
                symbols.append(char)
            else:  # byte fallback, as the Llama tokenizer does
                symbols.extend(f"<0x{b:02X}>" for b in char.encode("utf-8"))
        while len(symbols) > 1:
            best, at = None, -1
            for i in range(len(symbols) - 1):
                rank = ids.get(symbols[i] + symbols[i + 1])
                if rank is not None and (best is None or rank < best):
                    best, at = rank, i
            if best is None:
                break
            symbols[at:at + 2] = [symbols[at] + symbols[at + 1]]
        return tuple(ids[s] for s in symbols if s in ids)

    def tokenise(self, text: str) -> list[int]:
        """The token ids of `text` (Llama BPE, no special tokens)."""
        out: list[int] = []
        for word in text.split():
            out.extend(self._word(_SPACE + word))
        return out

    def embed(self, text: str) -> list[float] | None:
        """The unit vector of `text`, or None when it has no tokens."""
        ids = self.tokenise(text)
        if not ids:
            return None
        total = [0.0] * DIM
        for token in ids:
            if 0 <= token < self._rows:
                row = _ROW.unpack_from(self._map, self._base + token * DIM * 2)
                total = [a + b for a, b in zip(total, row, strict=True)]
        norm = math.sqrt(sum(v * v for v in total))
        if norm == 0:
            return None
        return [v / norm for v in total]

    @staticmethod
    def pack(vector: list[float]) -> bytes:
        """`vector` as stored: `DIM` little-endian float16 values (512 bytes)."""
        return _VECTOR.pack(*vector)

    @staticmethod
    def unpack(blob: bytes) -> tuple[float, ...]:
        """The inverse of `pack`."""
        return _VECTOR.unpack(blob)
