"""A scope's vector set kept on disk, memory-mapped by every later recall process.

Semantic recall scans the vectors of every record in the asked scope. Reading them out of
SQLite costs a process time proportional to the store (at 100k records most of a
``wardian memory recall``); this file holds what that read builds — the rowids (sorted),
their ``updated_at``, the float16 vectors, the column means, the set's principal
directions with the variance along each, every vector's coordinates along the leading
ones (float32: what the NumPy search scans), the product-quantised codes a process
without NumPy scans (`wardian.memory.vector_codes`), and the records in scope without a
vector — so a process maps it and touches only what a query scans.

Validity: a file is named by the store's write counter (``memory_version.changes``, moved
by triggers on every change to ``records`` and ``record_vectors``) and the database file's
inode, so any write, or another database file in its place, makes it unused; it is never
read for another state of the store. A reader that finds no file builds the set from
SQLite and writes it (atomically: temp file and rename), removing the scope's older files;
a scope built without writing one (it has too few vectors) has its files removed
(`discard`). Unreadable or malformed files, and files of an older format, are ignored
(and rebuilt). A file is not read whole when mapped, so a number that is not finite in
its vectors is found when a search reads it: the search then refuses the file (removes
it) and builds the set again from SQLite, where a vector that is not all numbers counts
as none (`wardian.memory.recall_index.RecallIndex._semantic_candidates`).
The caller still checks every record it shows against the table
(`RecallIndex._records_by_rowid`).

Format: ``WVS3\\n``, an 8-byte little-endian header length, a JSON header (``scope``:
`scope_key`; ``arrays``: name → ``[offset, dtype, shape]``, NumPy's little-endian dtype
strings; ``unvectored``: ``{rowid: updated_at}``; ``drift``: `VectorSet`'s), then the
arrays from the next 64-byte boundary on, each at a 64-byte aligned offset from there.
"""

from __future__ import annotations

import bisect
import json
import math
import mmap
import os
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wardian._fs import open_private, private_dir

if TYPE_CHECKING:
    from typing import Any

__all__ = ["FixedWidth", "RowIndex", "ScopeStamps", "Stamps", "VectorSet", "discard",
           "file_name", "load", "numpy", "previous", "save", "scope_key"]

_MAGIC = b"WVS3\n"
_ALIGN = 64
_ARRAYS = ("rowids", "stamps", "full", "head", "basis", "variance", "means", "centre", "books",
           "codes")
_PLAIN = {"<i8": "q", "<f4": "f"}
"""The arrays a reader without NumPy reads as typed memoryviews (the rest as bytes)."""


_np: Any = None


def numpy() -> Any:
    """NumPy, imported with one BLAS thread unless the environment already chose: a
    matrix-vector product gains nothing from more, and OpenBLAS starting and spinning
    its idle threads costs a one-query process more CPU than the search itself. Every
    import of NumPy by memory recall goes through here (the first one decides)."""
    global _np
    if _np is None:
        for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
        import numpy as np

        _np = np
    return _np


class VectorSet:
    """The arrays of one scope's vector set: NumPy arrays (memory-mapped when loaded), or,
    as `load` reads them for a process without NumPy (``plain``), memoryviews over the
    mapped file (``q`` and ``f`` for int64 and float32, bytes otherwise, ``stamps`` a
    `FixedWidth`) with ``head`` None.

    Attributes:
        rowids: int64, sorted. stamps: bytes (``S``), the ``updated_at`` of each row.
        full: float16 (n x dims). head: float32 (n x k), each row's centred vector along
        the first k rows of `basis`. basis: float32 (dims x dims), the set's principal
        directions, one per row, most variance first. variance: float32 (dims), along
        each. means: float32 (dims). books, codes: `wardian.memory.vector_codes.encode`'s,
        of the vectors centred on ``centre`` (float32, dims: the column means of the set
        they were trained on) and rotated by `basis`. unvectored: ``{rowid: updated_at}``
        of the records in scope without a vector. drift: how many rows were added,
        changed or removed since `basis`, ``centre`` and ``books`` were fitted (0: fitted
        to these rows; `wardian.memory.vector_carry`).
    """

    __slots__ = ("basis", "books", "centre", "codes", "drift", "full", "head", "means",
                 "rowids", "stamps", "unvectored", "variance")

    def __init__(self, *, rowids: Any, stamps: Any, full: Any, head: Any, basis: Any,
                 variance: Any, means: Any, centre: Any, books: Any, codes: Any,
                 unvectored: dict[int, str], drift: int = 0) -> None:
        self.rowids, self.stamps, self.full, self.head = rowids, stamps, full, head
        self.basis, self.variance, self.means = basis, variance, means
        self.centre, self.books, self.codes = centre, books, codes
        self.unvectored, self.drift = unvectored, drift


class FixedWidth(Sequence[bytes]):
    """Fixed-width byte strings back to back (NumPy's ``S`` dtype), each without its
    trailing NUL padding, as NumPy reads them."""

    def __init__(self, view: Any, width: int) -> None:
        self._view, self._width = view, width

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return bytes(self._view[i * self._width:(i + 1) * self._width]).rstrip(b"\0")

    def __len__(self) -> int:
        return len(self._view) // self._width if self._width else 0


class RowIndex(Mapping[int, int]):
    """``{rowid: row index}`` over a sorted rowid array (NumPy, or a ``q`` memoryview),
    without a Python object per row."""

    def __init__(self, rowids: Any) -> None:
        self._rowids = rowids
        self._plain = isinstance(rowids, memoryview)

    def get(self, rowid: object, default: Any = None) -> Any:
        """The row index of `rowid`, or `default`."""
        if not isinstance(rowid, int):
            return default
        if self._plain:
            i = bisect.bisect_left(self._rowids, rowid)
        else:
            i = int(numpy().searchsorted(self._rowids, rowid))
        return i if i < len(self._rowids) and int(self._rowids[i]) == rowid else default

    def __getitem__(self, rowid: int) -> int:
        found = self.get(rowid)
        if found is None:
            raise KeyError(rowid)
        return int(found)

    def many(self, rowids: Iterable[int]) -> dict[int, int]:
        """``{rowid: row index}`` of those of `rowids` that are here (one search for a
        NumPy array)."""
        if self._plain:
            return {rid: i for rid in rowids if (i := self.get(rid)) is not None}
        np = numpy()
        wanted = np.fromiter(rowids, dtype=np.int64)
        if not len(wanted) or not len(self._rowids):
            return {}
        at = np.minimum(np.searchsorted(self._rowids, wanted), len(self._rowids) - 1)
        hit = self._rowids[at] == wanted
        return dict(zip(wanted[hit].tolist(), at[hit].tolist(), strict=True))

    def __contains__(self, rowid: object) -> bool:
        return self.get(rowid) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self._rowids.tolist())

    def __len__(self) -> int:
        return len(self._rowids)


class Stamps(Sequence[str]):
    """The ``updated_at`` texts of a `VectorSet`'s rows (NumPy ``S`` array or
    `FixedWidth`), decoded when read."""

    def __init__(self, stamps: Any) -> None:
        self._stamps = stamps

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [s.decode("ascii") for s in self._stamps[i]]
        return self._stamps[i].decode("ascii")

    def __len__(self) -> int:
        return len(self._stamps)


class ScopeStamps(Mapping[int, str]):
    """``{rowid: updated_at}`` of every record in a scope: the rows of a vector set (by
    `index`, with `stamps`) and the records without a vector."""

    def __init__(self, index: RowIndex, stamps: Sequence[str],
                 unvectored: Mapping[int, str]) -> None:
        self._index, self._stamps, self._unvectored = index, stamps, unvectored

    def get(self, rowid: object, default: Any = None) -> Any:
        """The ``updated_at`` of `rowid` when it is in scope, else `default`."""
        i = self._index.get(rowid)
        if i is not None:
            return self._stamps[i]
        return self._unvectored.get(rowid, default)  # type: ignore[call-overload]

    def __getitem__(self, rowid: int) -> str:
        found = self.get(rowid)
        if found is None:
            raise KeyError(rowid)
        return str(found)

    def __iter__(self) -> Iterator[int]:
        yield from self._index
        yield from self._unvectored

    def __len__(self) -> int:
        return len(self._index) + len(self._unvectored)


def scope_key(agent_id: str, workspace: str | None, model: str) -> str:
    """What a file is the set of (agent, workspace, embedding model), as its header holds
    it: `load` refuses a file whose header names another scope."""
    return json.dumps([agent_id, workspace, model])


def file_name(scope: str, stamp: tuple[int, int]) -> str:
    """The file of the set of `scope` (`scope_key`) at `stamp` (database inode, write
    counter). The name's checksum only spreads scopes over files; the header decides."""
    raw = scope.encode("utf-8")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.{stamp[0]}.{stamp[1]}.wvs"


def _data_start(header_size: int) -> int:
    """Where the arrays start: after the magic, the length and the header, aligned."""
    return -(-(len(_MAGIC) + 8 + header_size) // _ALIGN) * _ALIGN


def load(folder: Path, name: str, scope: str, *, plain: bool = False) -> VectorSet | None:
    """The set of `scope` in ``folder/name``, memory-mapped, or None when there is none,
    it cannot be read as one, or it holds another scope's set. NumPy is imported only
    when there is a file (small sets have none), and never with `plain` (the arrays are
    then memoryviews, as `VectorSet` says; None on a big-endian machine)."""
    if plain and sys.byteorder != "little":
        return None
    try:
        with open(folder / name, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < len(_MAGIC) + 8:
                return None
            view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        if view[:len(_MAGIC)] != _MAGIC:
            return None
        size = int.from_bytes(view[len(_MAGIC):len(_MAGIC) + 8], "little")
        header = json.loads(view[len(_MAGIC) + 8:len(_MAGIC) + 8 + size])
        if header.get("scope") != scope:
            return None
        base = _data_start(size)
        arrays = {key: (_plain_array if plain else _numpy_array)(
            view, base, *header["arrays"][key]) for key in _ARRAYS if key != "head" or not plain}
        unvectored = {int(k): str(v) for k, v in header["unvectored"].items()}
        drift = int(header["drift"])
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError):
        return None
    arrays.setdefault("head", None)
    return VectorSet(unvectored=unvectored, drift=drift, **arrays)


def previous(folder: Path, name: str, scope: str) -> VectorSet | None:
    """The newest other file of the scope of ``folder/name`` (by the write counter in its
    name), mapped with NumPy, or None when there is none that `load` reads as the set of
    `scope`. It describes an earlier state of the store (or another database file): only
    what a caller checks against the current rows may be taken from it."""
    prefix = name.split(".", 1)[0] + "."
    found = []
    try:
        for other in folder.glob(prefix + "*.wvs"):
            parts = other.name.split(".")
            if other.name != name and len(parts) == 4 and parts[2].isdigit():
                found.append((int(parts[2]), other.name))
    except OSError:
        return None
    for _, other_name in sorted(found, reverse=True):
        loaded = load(folder, other_name, scope)
        if loaded is not None:
            return loaded
    return None


def _numpy_array(view: mmap.mmap, base: int, offset: int, dtype: str, shape: list[int]) -> Any:
    """The array at `offset` from `base`, over the mapped file (raises ValueError when
    it does not fit)."""
    np = numpy()
    count = int(np.prod(shape)) if shape else 1
    return np.frombuffer(view, dtype=np.dtype(dtype), count=count,
                         offset=base + int(offset)).reshape(shape)


def _plain_array(view: mmap.mmap, base: int, offset: int, dtype: str, shape: list[int]) -> Any:
    """The array at `offset` from `base` as a memoryview (`VectorSet`); raises ValueError
    when it does not fit the file or its dtype has no fixed width."""
    width = int(dtype[2:])
    count = math.prod(int(d) for d in shape)
    start = base + int(offset)
    if width <= 0 or start < 0 or start + count * width > len(view):
        raise ValueError("an array lies outside the file")
    raw = memoryview(view)[start:start + count * width]
    if dtype[1] == "S":
        return FixedWidth(raw, width)
    kind = _PLAIN.get(dtype)
    return raw.cast(kind) if kind else raw  # type: ignore[call-overload]


def save(folder: Path, name: str, scope: str, vectors: VectorSet) -> None:
    """Write `vectors`, the set of `scope`, as ``folder/name`` (a 0600 file, atomically)
    and remove the scope's other files. Best effort: a failure to write (a full or
    read-only disk) leaves no partial file and is not raised (recall builds the set again
    next time)."""
    np = numpy()

    arrays = {key: np.ascontiguousarray(getattr(vectors, key)) for key in _ARRAYS}
    layout: dict[str, list[Any]] = {}
    offset = 0
    for key, array in arrays.items():
        layout[key] = [offset, array.dtype.str, list(array.shape)]
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    raw = json.dumps({"scope": scope, "arrays": layout, "drift": int(vectors.drift),
                      "unvectored": {str(k): v for k, v in vectors.unvectored.items()}}
                     ).encode("utf-8")
    base = _data_start(len(raw))
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    try:
        private_dir(folder)
        with open_private(tmp, "wb") as handle:
            handle.write(_MAGIC + len(raw).to_bytes(8, "little") + raw)
            for key, array in arrays.items():
                handle.seek(layout[key][0] + base)
                handle.write(array.tobytes())
            handle.truncate(base + offset)
        os.replace(tmp, folder / name)
    except OSError:
        tmp.unlink(missing_ok=True)
        return
    discard(folder, name, keep=True)


def discard(folder: Path, name: str, *, keep: bool = False) -> None:
    """Remove the files of the scope of ``folder/name`` (`file_name`) — with `keep`, all
    but ``name`` itself. Called when no file describes the scope's current state (it is
    too small to keep one, or its file was refused), so that no process reads a file of
    an earlier state. Best effort: a file that cannot be removed stays (it is never read
    for another state of the store)."""
    prefix = name.split(".", 1)[0] + "."
    try:
        for other in folder.glob(prefix + "*.wvs"):
            if not keep or other.name != name:
                other.unlink(missing_ok=True)
    except OSError:
        pass
