"""Codes carried over from a vector set's previous file (`wardian.memory.vector_carry`):
whatever rows came, went or changed, the carried codes and head are those the kept
centroids and directions give the current rows. Invented vectors."""

from __future__ import annotations

import pytest

from wardian.memory import vector_carry, vector_codes
from wardian.memory.vector_file import VectorSet

np = pytest.importorskip("numpy")


def _prior(rowids: object, full: object) -> VectorSet:
    rows = np.asarray(full)
    means = rows.astype(np.float32).mean(axis=0)
    values, directions = np.linalg.eigh(np.cov(rows.astype(np.float64), rowvar=False))
    basis = np.ascontiguousarray(directions[:, np.argsort(values)[::-1]].T, dtype=np.float32)
    books, codes = vector_codes.encode(np, rows, means, basis)
    head = (rows.astype(np.float32) - means) @ basis[:8].T
    return VectorSet(rowids=np.asarray(rowids, dtype=np.int64), stamps=None, full=rows,
                     head=head, basis=basis, variance=None, means=means, centre=means,
                     books=books, codes=codes, unvectored={}, drift=0)


def test_carried_codes_and_head_are_those_of_the_current_rows() -> None:
    rng = np.random.default_rng(9)
    dims, n = 32, 2000
    rows = rng.standard_normal((n, dims)).astype(np.float16)
    rowids = np.arange(1, n + 1) * 2
    prior = _prior(rowids, rows)
    # Removed: two stretches; changed: one row; new: one in a gap and one at the end.
    keep = np.ones(n, dtype=bool)
    keep[100:110] = False
    keep[1500] = False
    ids, full = rowids[keep].tolist(), rows[keep].copy()
    full[700] = rng.standard_normal(dims).astype(np.float16)
    at = ids.index(rowids[1200])
    ids.insert(at, int(rowids[1200]) - 1)
    full = np.insert(full, at, rng.standard_normal(dims).astype(np.float16), axis=0)
    ids.append(int(rowids[-1]) + 2)
    full = np.vstack([full, rng.standard_normal((1, dims)).astype(np.float16)])
    ids_array = np.asarray(ids, dtype=np.int64)
    means = full.astype(np.float32).mean(axis=0)
    cov = np.cov(full.astype(np.float32), rowvar=False, bias=True)
    carried = vector_carry.carry(np, prior, ids_array, full, means, cov, 8)
    assert carried is not None
    assert carried.drift == 11 + 2 + 2  # removed, changed (gone and come), new
    assert np.array_equal(carried.codes, vector_codes.assign(
        np, full, prior.centre, prior.basis, prior.books))
    fresh = (full.astype(np.float32) - means) @ prior.basis[:8].T
    assert np.allclose(carried.head, fresh, atol=1e-4)


def test_too_large_a_change_is_fitted_again() -> None:
    rng = np.random.default_rng(10)
    rows = rng.standard_normal((1000, 16)).astype(np.float16)
    prior = _prior(np.arange(1000), rows)
    grown = np.vstack([rows, rng.standard_normal((60, 16)).astype(np.float16)])
    means = grown.astype(np.float32).mean(axis=0)
    cov = np.cov(grown.astype(np.float32), rowvar=False, bias=True)
    assert vector_carry.carry(np, prior, np.arange(1060), grown, means, cov, 8) is None
    assert vector_carry.carry(np, prior, np.arange(1040), grown[:1040], means, cov, 8)
