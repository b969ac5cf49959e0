"""Sentence vectors for recall from the optional `wordllama` package, loaded lightly.

`wordllama` (MIT) ships static token embeddings inside its wheel: the 32,000 x 256
float16 matrix ``weights/l2_supercat_256.safetensors`` and a Llama (SentencePiece BPE)
tokenizer file. A text's vector is the mean of its tokens' rows, L2-normalised — the
same as ``WordLlama.embed(text, norm=True)`` — and cosine similarity ranks by meaning.

Its own loader is slow (pydantic, the `tokenizers` library, a float32 copy
of the matrix), more than a whole `wardian memory recall` may spend. So this module
imports nothing of `wordllama`: it finds the package's files, memory-maps the matrix
(reading only the rows of the tokens it sees) and tokenises with a small BPE over the
package's vocabulary: SentencePiece BPE merges the adjacent pair whose merged piece has
the best score, and the Llama vocabulary is ordered by score, so the lowest id wins.
The vocabulary (1.8 MB of JSON, 32,000 pieces) is parsed once and cached beside
``memory.db`` as a hash table file that later processes memory-map and probe only for the
pieces a text needs (loading the whole table into a dict costs every process too much of
its budget). Nothing is downloaded, ever; without the package
`Embedder.load` returns None and recall is lexical only.

Spec: DESIGN.md "Storage" → Recall (hybrid ranking).
"""

from __future__ import annotations

import heapq
import importlib.util
import json
import math
import mmap
import os
import struct
import zlib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Protocol

__all__ = ["DIM", "MAX_WORD_CHARS", "MODEL", "Embedder", "model_files"]

MODEL = "wordllama/l2_supercat_256"
"""The model's name, stored with every vector so a change of model is noticed."""
DIM = 256
"""The vector's length."""
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_VOCAB = ("tokenizers", "l2_supercat_tokenizer_config.json")
_SPACE = "\u2581"
MAX_WORD_CHARS = 256
"""A whitespace-separated word is tokenised up to this many characters; the rest of it
is left out of the vector. Words this long are blobs (hashes, base64, minified code),
whose meaning is not in their tail, and the cut bounds the work of one word, as BERT's
tokenizer bounds it (``max_input_chars_per_word``)."""
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


if TYPE_CHECKING:
    class _Vocab(Protocol):
        def get(self, piece: str, /) -> int | None: ...


_TABLE_MAGIC = b"WVOCAB1\0"
_TABLE_HEAD = struct.Struct("<8sIII")  # magic, slots (a power of two), entries, string bytes
_SLOT = struct.Struct("<III")  # crc32 of the piece, offset of its bytes + 1 (0: empty), id
_LEN = struct.Struct("<H")


class _VocabTable:
    """A memory-mapped, read-only {piece: id} hash table (open addressing, linear
    probing on the CRC-32 of the piece's UTF-8 bytes); `get` answers as ``dict.get``.

    Raises (constructor): ValueError when the file is not a whole table (its header
    gives the exact length, so a truncated or padded file is refused)."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        if len(self._map) < _TABLE_HEAD.size:
            raise ValueError(f"{path}: not a vocabulary table")
        magic, slots, _, size = _TABLE_HEAD.unpack_from(self._map, 0)
        self._mask = slots - 1
        self._strings = _TABLE_HEAD.size + slots * _SLOT.size
        if magic != _TABLE_MAGIC or slots & self._mask or len(self._map) != self._strings + size:
            raise ValueError(f"{path}: not a vocabulary table")

    def get(self, piece: str, /) -> int | None:
        """The id of `piece`, or None when the vocabulary has no such piece."""
        key = piece.encode("utf-8", "surrogatepass")
        crc = zlib.crc32(key)
        slot, data = crc & self._mask, self._map
        while True:
            found, offset, ident = _SLOT.unpack_from(data, _TABLE_HEAD.size + slot * _SLOT.size)
            if not offset:
                return None
            if found == crc:
                start = self._strings + offset - 1
                size = _LEN.unpack_from(data, start)[0]
                if data[start + _LEN.size:start + _LEN.size + size] == key:
                    return int(ident)
            slot = (slot + 1) & self._mask

    @staticmethod
    def build(vocab: dict[str, int]) -> bytes:
        """The table file's bytes for `vocab` (slots: the power of two >= 2 x entries)."""
        slots = 1 << max(4, (2 * len(vocab) - 1).bit_length())
        table = bytearray(slots * _SLOT.size)
        strings = bytearray()
        for piece, ident in vocab.items():
            key = piece.encode("utf-8", "surrogatepass")
            crc = zlib.crc32(key)
            slot = crc & (slots - 1)
            while _SLOT.unpack_from(table, slot * _SLOT.size)[1]:
                slot = (slot + 1) & (slots - 1)
            _SLOT.pack_into(table, slot * _SLOT.size, crc, len(strings) + 1, ident)
            strings += _LEN.pack(len(key)) + key
        head = _TABLE_HEAD.pack(_TABLE_MAGIC, slots, len(vocab), len(strings))
        return head + bytes(table) + bytes(strings)


def _load_vocab(path: Path, cache_dir: Path | None) -> _Vocab:
    """The tokenizer's {piece: id}: the cached table when it is there, else parsed from
    `path` (and the table written to `cache_dir` for the next process)."""
    stat = path.stat()
    cache = None
    if cache_dir is not None:
        cache = cache_dir / f"wordllama-vocab-{stat.st_size}-{int(stat.st_mtime)}.table"
        try:
            return _VocabTable(cache)
        except (OSError, ValueError):
            pass
    vocab: dict[str, int] = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    if cache is not None:
        try:
            from wardian._fs import open_private, private_dir

            # Private like everything else in the data directory.
            private_dir(cache.parent)
            partial = cache.with_suffix(f".{os.getpid()}.tmp")
            with open_private(partial, "wb") as handle:
                handle.write(_VocabTable.build(vocab))
            os.replace(partial, cache)
        except OSError:
            pass  # a cache we cannot write only costs the next process a rebuild
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
        self._word_sum = lru_cache(maxsize=1024)(self._sum_word)

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
        # SentencePiece BPE: merge the adjacent pair whose piece has the lowest id, the
        # leftmost of equals, until no pair is in the vocabulary. A heap of candidate
        # pairs over a linked list of symbols looks up a few pieces per character; the
        # plain rescan after every merge made a 3,000-character word take seconds.
        ids = self._ids
        symbols: list[str | None] = []
        for char in word[:MAX_WORD_CHARS + 1]:  # + 1: the leading word-start mark
            if ids.get(char) is not None:
                symbols.append(char)
            else:  # byte fallback, as the Llama tokenizer does
                symbols.extend(f"<0x{b:02X}>" for b in char.encode("utf-8"))
        count = len(symbols)
        after = [*range(1, count), -1]
        before = list(range(-1, count - 1))
        heap: list[tuple[int, int, str]] = []
        for i in range(count - 1):
            pair = f"{symbols[i]}{symbols[i + 1]}"
            rank = ids.get(pair)
            if rank is not None:
                heap.append((rank, i, pair))
        heapq.heapify(heap)
        while heap:
            _, i, pair = heapq.heappop(heap)
            j = after[i]
            # Stale when either side has merged since: symbols only grow, so the pair's
            # text then differs.
            if j < 0 or symbols[i] is None or f"{symbols[i]}{symbols[j]}" != pair:
                continue
            symbols[i], symbols[j] = pair, None
            after[i] = k = after[j]
            if k >= 0:
                before[k] = i
                self._push_pair(heap, i, pair, symbols[k])
            if (h := before[i]) >= 0:
                self._push_pair(heap, h, symbols[h], pair)
        found = (ids.get(s) for s in symbols if s is not None)
        return tuple(ident for ident in found if ident is not None)

    def _push_pair(self, heap: list[tuple[int, int, str]], at: int, left: str | None,
                   right: str | None) -> None:
        pair = f"{left}{right}"
        rank = self._ids.get(pair)
        if rank is not None:
            heapq.heappush(heap, (rank, at, pair))

    def tokenise(self, text: str) -> list[int]:
        """The token ids of `text` (Llama BPE, no special tokens)."""
        out: list[int] = []
        for word in text.split():
            out.extend(self._word(_SPACE + word))
        return out

    def _sum_word(self, word: str) -> tuple[bool, tuple[float, ...] | None]:
        """(whether `word` has tokens, the sum of its tokens' rows or None when none is
        in the matrix)."""
        ids = self._word(_SPACE + word)
        total: tuple[float, ...] | None = None
        for token in ids:
            if 0 <= token < self._rows:
                row = _ROW.unpack_from(self._map, self._base + token * DIM * 2)
                total = row if total is None else tuple(
                    [a + b for a, b in zip(total, row, strict=True)])
        return bool(ids), total

    def embed(self, text: str) -> list[float] | None:
        """The unit vector of `text`, or None when it has no tokens."""
        # Rows are float16 values, which doubles add without rounding (every partial sum
        # is a multiple of 2^-24 far below 2^29), so summing each word's rows first (kept
        # per word: a long-running process embeds the same words again) gives exactly
        # the sums of adding every token's row in order.
        tokens, total = False, [0.0] * DIM
        for word in text.split():
            has_tokens, rows = self._word_sum(word)
            tokens = tokens or has_tokens
            if rows is not None:
                total = [a + b for a, b in zip(total, rows, strict=True)]
        if not tokens:
            return None
        norm = math.sqrt(sum([v * v for v in total]))
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
