"""Product-quantised codes of a vector set, and the search over them without NumPy.

A process that answers one query (``wardian memory recall``) would spend more on importing
NumPy than on the search itself. So the process that builds a scope's vector set (it has
NumPy for that) also stores, beside the vectors (`wardian.memory.vector_file`), what a
pure-Python reader needs to find the rows nearest to a query (`encode`), and a process
without NumPy searches with the standard library alone (`CodedSet`).

Codes: the vectors are centred on the column means and rotated onto the set's principal
directions (``basis``: dims x dims, a direction per row, most variance first;
``variance``: along each). The rotated dimensions are dealt round-robin into `groups`
groups (about four dimensions each, so each group has a share of every variance level;
past 1,031 dimensions more, as the groups are capped at 256: see `groups`).
Each group's coordinates are replaced by the nearest of its k-means centroids
(``books``: 16 centroids for the first group of each pair, 15 for the second), and a
pair of groups is one byte ``1 + 15 * a + b`` (the two centroids' numbers; 0 never
occurs). ``codes`` holds, pair by pair, each row's byte followed by a zero byte: 16-bit
little-endian lanes, row i at lane i.

Search (`CodedSet.shortlist`): a row's score is its centred vector's dot product with the
query, approximated by the sum over groups of its centroid's. Per pair, the sums of the
two groups' centroid scores, scaled to 0..255 on one step for all pairs, make a 256-byte
table in which byte 0 maps to 0; `bytes.translate` maps a pair's lanes through it and
`int.from_bytes` reads them as one integer, so adding the pairs' integers adds every
row's lanes at once (a lane stays below 2**15: no carry crosses lanes). Rows whose lane
reaches c are counted with one addition, one mask and `int.bit_count`; c is searched so
that at least `take` rows reach it, and those rows' exact scores (`CodedSet.cosines`,
the float16 vectors) decide.
"""

from __future__ import annotations

import math
import operator
import re
import struct
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["CENTROIDS", "CodedSet", "assign", "book_size", "encode", "groups", "train"]

CENTROIDS = 16
"""Centroids of a pair's first group (its second has one fewer: 16 x 15 codes + the
zero byte fill one byte)."""
_SECOND = CENTROIDS - 1
_GROUP_DIMS = 4
_TRAIN_ROWS = 8_192
"""The centroids are fitted on at most this many evenly spaced rows."""
_ROUNDS = 6
"""k-means rounds (Lloyd) when fitting the centroids."""
_BLOCK = 2_048
"""Rows rotated and encoded at a time (their distances to the centroids stay in cache)."""
_LANE_TOP = 1 << 15
_NUMBER_MASK = (1 << (CENTROIDS - 1).bit_length()) - 1
"""The low bits of a squared distance that carry its centroid's number (`encode`)."""


_MAX_PAIRS = (_LANE_TOP - 1) // 255
"""Pairs of groups at most: each adds up to 255 to a row's 16-bit lane, which must stay
below 2**15 (`CodedSet.shortlist`)."""


def groups(dims: int) -> int:
    """How many groups a `dims`-dimensional set's rotated coordinates are dealt into (even:
    they make pairs): about `_GROUP_DIMS` dimensions each, and no more than 2 x
    `_MAX_PAIRS` groups (a wider set gets more dimensions a group)."""
    return 2 * min(_MAX_PAIRS, max(1, dims // (2 * _GROUP_DIMS)))


def book_size(dims: int) -> int:
    """How many coordinates a group's centroid has (groups of fewer are padded with 0)."""
    return -(-dims // groups(dims))


def _layout(dims: int) -> list[list[int]]:
    """The rotated dimensions of each group (round-robin)."""
    m = groups(dims)
    return [list(range(j, dims, m)) for j in range(m)]


def encode(np: Any, full: Any, means: Any, basis: Any) -> tuple[Any, Any]:
    """(books, codes) of the vectors `full` (n x dims, any float dtype) centred on
    `means` and rotated by the principal `basis` (dims x dims, a direction per row):
    ``books`` float32 (groups x `CENTROIDS` x `book_size`), fitted to them (`train`),
    ``codes`` uint8 (groups / 2 x n x 2), every row's (`assign`), as the module docstring
    lays them out. Deterministic: the same vectors give the same codes. Requires n >= 1
    (any dims >= 1)."""
    books = train(np, full, means, basis)
    return books, assign(np, full, means, basis, books)


class _Quantiser:
    """The rotation of `encode`'s vectors into groups, and the nearest centroid of each."""

    def __init__(self, np: Any, dims: int, centre: Any, basis: Any) -> None:
        self.np = np
        m, size = groups(dims), book_size(dims)
        self.m, self.size = m, size
        # Row j * size + k: the direction of group j's k-th rotated dimension (0: padding).
        self.rotation = np.zeros((m * size, dims), dtype=np.float32)
        for j, dims_of in enumerate(_layout(dims)):
            self.rotation[j * size:j * size + len(dims_of)] = np.asarray(basis)[dims_of]
        # The second group of a pair has one centroid fewer: it is never chosen.
        self.excluded = np.zeros((m, CENTROIDS, 1), dtype=np.float32)
        self.excluded[1::2, _SECOND:] = np.inf
        self.numbers = np.arange(CENTROIDS, dtype=np.int32)[None, :, None]
        # float32 distances: their bits are read
        self.centre = np.asarray(centre, dtype=np.float32)

    def grouped(self, rows: Any) -> Any:
        """Rotated coordinates of `rows` by group: (m x size x len(rows))."""
        centred = rows.astype(self.np.float32) - self.centre
        return (self.rotation @ centred.T).reshape(self.m, self.size, len(rows))

    def nearest(self, coords: Any, books: Any) -> Any:
        """Each row's nearest centroid per group: (m x rows). Squared distances that
        agree to within a few units in the last place count as equal, and the
        lower-numbered centroid wins."""
        np = self.np
        far = (-2.0 * books) @ coords  # m x CENTROIDS x rows, one product per group
        far += (coords * coords).sum(axis=1)[:, None, :]
        far += (books * books).sum(axis=2)[:, :, None] + self.excluded
        # A squared distance >= 0 orders as its bits do: its low bits carry the centroid's
        # number, so one minimum over the centroids finds both.
        bits = np.maximum(far, 0.0, out=far).view(np.int32)
        bits &= ~_NUMBER_MASK
        bits |= self.numbers
        return bits.min(axis=1) & _NUMBER_MASK


def train(np: Any, full: Any, centre: Any, basis: Any) -> Any:
    """The centroids (``books``, float32, groups x `CENTROIDS` x `book_size`) fitted by
    k-means to the vectors `full` (n >= 1 rows) centred on `centre` and rotated by
    `basis`, on at most `_TRAIN_ROWS` evenly spaced rows. Deterministic."""
    n, dims = full.shape
    q = _Quantiser(np, dims, centre, basis)
    m, size = q.m, q.size
    sample = q.grouped(full[::max(1, -(-n // _TRAIN_ROWS))])
    rows = sample.shape[2]
    start = np.random.default_rng(0).choice(rows, size=min(rows, CENTROIDS), replace=False)
    books = np.zeros((m, CENTROIDS, size), dtype=np.float32)
    books[:, :len(start)] = sample[:, :, np.sort(start)].transpose(0, 2, 1)
    offsets = (np.arange(m) * CENTROIDS)[:, None]
    parts = [np.ascontiguousarray(sample[:, :, begin:begin + _BLOCK])
             for begin in range(0, rows, _BLOCK)]
    for _ in range(_ROUNDS):
        chosen = np.concatenate([q.nearest(part, books) for part in parts], axis=1)
        flat = (chosen + offsets).ravel()
        count = np.bincount(flat, minlength=m * CENTROIDS).reshape(m, CENTROIDS)
        for d in range(size):
            total = np.bincount(flat, weights=sample[:, d].ravel(), minlength=m * CENTROIDS)
            moved = total.reshape(m, CENTROIDS) / np.maximum(count, 1)
            books[:, :, d] = np.where(count > 0, moved, books[:, :, d])
    return books


def assign(np: Any, rows: Any, centre: Any, basis: Any, books: Any) -> Any:
    """The codes (uint8, groups / 2 x len(rows) x 2) of `rows` (any number, any float
    dtype): each row's nearest centroid of `books` per group, its coordinates centred
    on `centre` and rotated by `basis` (those `books` were trained with: `train`)."""
    n, dims = rows.shape
    q = _Quantiser(np, dims, centre, basis)
    codes = np.zeros((q.m // 2, n, 2), dtype=np.uint8)
    for begin in range(0, n, _BLOCK):
        chosen = q.nearest(q.grouped(rows[begin:begin + _BLOCK]), books)
        codes[:, begin:begin + _BLOCK, 0] = 1 + _SECOND * chosen[0::2] + chosen[1::2]
    return codes


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


class CodedSet:
    """A vector set's codes and vectors as mapped from disk, searched without NumPy.

    Args:
        n: rows. dims: the vectors' length.
        full: the float16 vectors, little-endian (n x dims, row-major), a buffer.
        means, variance: float32 sequences (dims each). basis: float32 buffer
        (dims x dims). books: float32 sequence (`groups` x `CENTROIDS` x `book_size`).
        codes: a byte buffer (`groups` / 2 x n x 2), as `encode` lays them out.

    Raises:
        ValueError: when a length does not match `n` and `dims`, a mean, variance,
            basis or centroid value is not a finite number (a damaged file), or the
            machine is not little-endian (the lanes are read in its byte order).
    """

    def __init__(self, *, n: int, dims: int, full: Any, means: Sequence[float],
                 variance: Sequence[float], basis: Any, books: Sequence[float],
                 codes: Any) -> None:
        m, size = groups(dims), book_size(dims)
        if (sys.byteorder != "little" or dims < 1
                or memoryview(full).nbytes != n * dims * 2
                or len(means) != dims or len(variance) != dims
                or memoryview(basis).nbytes != dims * dims * 4
                or len(books) != m * CENTROIDS * size
                or memoryview(codes).nbytes != (m // 2) * n * 2):
            raise ValueError("a vector set's codes do not match its size")
        if not all(map(math.isfinite, (*means, *variance, *books,
                                       *struct.unpack(f"<{dims * dims}f", basis)))):
            raise ValueError("a vector set's codes hold a value that is not a number")
        self.n, self.dims = n, dims
        self._full, self._basis, self._codes = full, basis, codes
        self._means = list(means)
        self._variance = [max(float(v), 0.0) for v in variance]
        self._books = list(books)
        self._layout = _layout(dims)
        self._row = struct.Struct(f"<{dims}e")
        self._ones = 0

    def moments(self, query: Sequence[float]) -> tuple[float, float, list[float]]:
        """(mean, standard deviation) of `query`'s scores over the set, from the column
        means and the variance along each principal direction, and the query along those
        directions (what `shortlist` takes)."""
        rotated = [_dot(row, query) for row in
                   struct.iter_unpack(f"<{self.dims}f", self._basis)]
        spread = _dot(self._variance, [x * x for x in rotated])
        return _dot(self._means, query), math.sqrt(max(spread, 0.0)), rotated

    def _tables(self, rotated: Sequence[float]) -> list[bytes]:
        """Each pair's 256-byte table of scaled centroid-score sums (see module doc)."""
        size, books = book_size(self.dims), self._books
        scores = []
        for j, dims_of in enumerate(self._layout):
            part = [rotated[d] for d in dims_of] + [0.0] * (size - len(dims_of))
            count = CENTROIDS if j % 2 == 0 else _SECOND
            base = j * CENTROIDS * size
            scores.append([_dot(books[base + c * size:base + (c + 1) * size], part)
                           for c in range(count)])
        firsts, seconds = scores[0::2], scores[1::2]
        width = max(max(a) - min(a) + max(b) - min(b) for a, b in zip(firsts, seconds,
                                                                         strict=True))
        scale = 255.0 / width if width > 0 else 0.0
        tables = []
        for a, b in zip(firsts, seconds, strict=True):
            low_a, low_b = min(a), min(b)
            left = [(x - low_a) * scale for x in a]
            right = [(y - low_b) * scale for y in b]
            cells = [min(255, round(x + y)) for x in left for y in right]
            tables.append(bytes([0, *cells]).ljust(256, b"\0"))
        return tables

    def shortlist(self, rotated: Sequence[float], take: int) -> list[int]:
        """The `take` rows (indices, at most n) whose approximate score along `rotated`
        (`moments`) is highest, best first; equal scores keep row order."""
        n = self.n
        take = min(take, n)
        if take <= 0:
            return []
        lanes, pairs, step = 0, len(self._layout) // 2, n * 2
        for p, table in enumerate(self._tables(rotated)):
            lanes += int.from_bytes(bytes(self._codes[p * step:(p + 1) * step])
                                    .translate(table), "little")
        if not self._ones:
            self._ones = int.from_bytes(b"\1\0" * n, "little")
        ones, top = self._ones, self._ones << 15

        def reaching(cut: int) -> int:
            return (lanes + (_LANE_TOP - cut) * ones) & top

        low, high = 0, 255 * pairs + 1  # reaching(low) holds every row, reaching(high) none
        while high - low > 1:
            mid = (low + high) // 2
            if reaching(mid).bit_count() >= take:
                low = mid
            else:
                high = mid
        marks = reaching(low).to_bytes(step, "little")
        found = [m.start() >> 1 for m in re.finditer(b"\x80", marks)]
        value = memoryview(lanes.to_bytes(step, "little")).cast("H")
        return sorted(found, key=value.__getitem__, reverse=True)[:take]

    def cosines(self, rows: Sequence[int], query: Sequence[float]) -> list[float]:
        """The exact score (dot product with the float16 vector) of each of `rows`."""
        row, full, width = self._row, self._full, self.dims * 2
        return [_dot(row.unpack_from(full, i * width), query) for i in rows]

