"""A scope's vector set built again after a small change, from the previous file's.

Fitting a set's principal directions and product-quantisation centroids, and assigning
every row its codes (`wardian.memory.vector_codes`), is most of what building the set
costs; after a save, nearly every row is the same as in the scope's previous file. So a
rebuild keeps the previous file's directions (``basis``), centre and centroids
(``books``), and takes over, for each row whose rowid and float16 vector are unchanged
(bit for bit), its codes and its head coordinates (moved by the change of the column
means); only the other rows are assigned. What depends on every row is computed from
the current rows: the column means, and the variance along each kept direction (from the
current covariance).

Retraining: the directions and centroids were fitted to the rows of the file that last
fitted them; each carried-over file counts the rows added, changed or removed since
(``drift``). When that count would exceed `RETRAIN_SHARE` of the current rows, or the
previous file does not fit (another dimension count, malformed arrays, a number that is
not finite, a code naming no pair of centroids), nothing is carried and the caller fits
everything again. A kept row's head coordinates that are not finite refuse it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from wardian.memory import vector_codes

if TYPE_CHECKING:
    from typing import Any

    from wardian.memory.vector_file import VectorSet

__all__ = ["RETRAIN_SHARE", "Carried", "carry"]

RETRAIN_SHARE = 0.05
"""The directions and centroids are fitted again once more than this share of the rows
(added, changed or removed) differ from the rows they were fitted to."""


class Carried(NamedTuple):
    """What `carry` computed for the current rows, as `wardian.memory.vector_file.VectorSet`
    holds it."""

    head: Any
    basis: Any
    variance: Any
    centre: Any
    books: Any
    codes: Any
    drift: int


def carry(np: Any, prior: VectorSet, rowids: Any, full: Any, means: Any, cov: Any,
          k: int) -> Carried | None:
    """The head (n x min(k, dims) float32), basis, variance, centre, books, codes and
    drift of the current rows from the previous file `prior` (NumPy arrays, as
    `wardian.memory.vector_file.load` maps them), or None when it must be fitted again
    (see the module docstring).

    Args:
        rowids: int64 (n), sorted; full: float16 (n x dims), the current rows.
        means: float32 (dims), their column means; cov: their covariance (dims x dims).
        k: how many leading directions the head holds.
    """
    n, dims = full.shape
    m, size = vector_codes.groups(dims), vector_codes.book_size(dims)
    k = min(k, dims)
    try:
        fits = (prior.full.shape[1:] == (dims,) and prior.full.dtype == full.dtype
                and prior.basis.shape == (dims, dims) and prior.centre.shape == (dims,)
                and prior.means.shape == (dims,)
                and prior.books.shape == (m, vector_codes.CENTROIDS, size)
                and prior.codes.shape == (m // 2, len(prior.rowids), 2)
                and prior.codes.dtype == np.uint8
                and prior.head.shape == (len(prior.rowids), k)
                and len(prior.full) == len(prior.rowids) and prior.drift >= 0)
    except AttributeError:
        return None
    if not fits or not len(prior.rowids):
        return None
    old = np.asarray(prior.rowids)
    at = np.minimum(np.searchsorted(old, rowids), len(old) - 1)
    same = old[at] == rowids
    matched = int(same.sum())
    if int(prior.drift) + (n - matched) + (len(old) - matched) > RETRAIN_SHARE * n:
        return None  # too many rows came or went, whatever the vectors of the rest
    runs = _runs(np, np.flatnonzero(same), at[same])
    lanes = np.uint64 if dims % 4 == 0 else np.uint16  # whole rows, compared bit for bit
    for begin, end, shift in runs:
        part = same[begin:end]
        part &= (prior.full[begin + shift:end + shift].view(lanes)
                 == full[begin:end].view(lanes)).all(axis=1)
    kept = int(same.sum())
    drift = int(prior.drift) + (n - kept) + (len(old) - kept)
    if drift > RETRAIN_SHARE * n:
        return None
    # Copies: the previous file is removed once the new one is written.
    basis = np.array(prior.basis, dtype=np.float32)
    centre = np.array(prior.centre, dtype=np.float32)
    books = np.array(prior.books, dtype=np.float32)
    if not all(bool(np.isfinite(a).all()) for a in (basis, centre, books, prior.means)):
        return None
    pair = prior.codes[:, :, 0]  # every code names two centroids (`vector_codes`)
    if pair.min() < 1 or pair.max() > vector_codes.CENTROIDS * (vector_codes.CENTROIDS - 1) \
            or prior.codes[:, :, 1].any():
        return None
    variance = np.maximum(((basis @ cov.astype(np.float32)) * basis).sum(axis=1), 0.0)
    fresh = np.flatnonzero(~same)
    lead = basis[:k]
    head = np.empty((n, k), dtype=np.float32)
    # A kept row's head moves by the change of the column means along the directions.
    moved = (np.asarray(prior.means, dtype=np.float32) - means) @ lead.T
    codes = np.empty((m // 2, n, 2), dtype=np.uint8)
    for begin, end, shift in runs:  # the rows of a run that are not the same: see below
        np.add(prior.head[begin + shift:end + shift], moved, out=head[begin:end])
        codes[:, begin:end] = prior.codes[:, begin + shift:end + shift]
    if len(fresh):
        head[fresh] = (full[fresh].astype(np.float32) - means) @ lead.T
    if not bool(np.isfinite(head).all()):
        return None
    if len(fresh):
        codes[:, fresh] = vector_codes.assign(np, full[fresh], centre, basis, books)
    return Carried(head, basis, variance.astype(np.float32), centre, books, codes, drift)


def _runs(np: Any, new: Any, old: Any) -> list[tuple[int, int, int]]:
    """``(begin, end, shift)``: the stretches of current rows ``begin..end - 1`` whose rows
    with the same rowid (`new`: their positions, increasing; `old`: those rows' positions
    in the previous file) lie at ``position + shift`` there. A stretch may hold rows of
    no match (new ones, in a gap of both): the caller overwrites those."""
    if not len(new):
        return []
    shift = old - new
    cuts = np.flatnonzero(np.diff(shift)) + 1
    starts = np.concatenate(([0], cuts)).tolist()
    ends = np.concatenate((cuts, [len(new)])).tolist()
    return [(int(new[a]), int(new[b - 1]) + 1, int(shift[a])) for a, b in
            zip(starts, ends, strict=True)]
