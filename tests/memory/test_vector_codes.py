"""The product-quantised codes of a vector set (`wardian.memory.vector_codes`): built with
NumPy, searched with the standard library alone. Invented vectors with a known nearest
set; the search must hold the exact nearest rows and score them exactly."""

from __future__ import annotations

import pytest

from wardian.memory import vector_codes

np = pytest.importorskip("numpy")


def _coded(full: object) -> vector_codes.CodedSet:
    vectors = np.asarray(full)
    means = vectors.astype(np.float32).mean(axis=0)
    values, directions = np.linalg.eigh(np.cov(vectors.astype(np.float64), rowvar=False))
    order = np.argsort(values)[::-1]
    basis = np.ascontiguousarray(directions[:, order].T, dtype=np.float32)
    books, codes = vector_codes.encode(np, vectors, means, basis)
    return vector_codes.CodedSet(
        n=len(vectors), dims=vectors.shape[1], full=vectors.astype("<f2").tobytes(),
        means=means.tolist(), variance=np.maximum(values[order], 0).astype(np.float32).tolist(),
        basis=basis.tobytes(), books=books.ravel().tolist(), codes=codes.tobytes())


def test_the_shortlist_holds_the_exact_nearest_and_scores_them_exactly() -> None:
    rng = np.random.default_rng(5)
    # Clusters of unit vectors, as texts of a few kinds are: most rows look alike.
    centres = rng.standard_normal((12, 256))
    rows = centres[rng.integers(0, 12, 3000)] + 0.6 * rng.standard_normal((3000, 256))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    full = rows.astype(np.float16)
    coded = _coded(full)
    exact_rows = full.astype(np.float64)
    for seed in range(5):
        # A question near one kind of row, as a query is near the records it asks for.
        query = centres[seed] + 0.6 * rng.standard_normal(256)
        query /= np.linalg.norm(query)
        scores = exact_rows @ query
        mean, spread, rotated = coded.moments(query.tolist())
        assert abs(mean - scores.mean()) < 1e-4 and abs(spread - scores.std()) < 1e-3
        pool = coded.shortlist(rotated, 300)
        assert len(pool) == len(set(pool)) == 300
        assert set(np.argsort(-scores)[:30].tolist()) <= set(pool), seed
        assert np.allclose(coded.cosines(pool, query.tolist()), scores[pool], atol=1e-6)


def test_codes_that_do_not_match_the_set_are_refused() -> None:
    rng = np.random.default_rng(6)
    full = rng.standard_normal((200, 256)).astype(np.float16)
    coded = _coded(full)
    assert coded.shortlist(coded.moments([0.0] * 256)[2], 500) == list(range(200))
    with pytest.raises(ValueError, match="do not match"):
        vector_codes.CodedSet(n=201, dims=256, full=full.tobytes(), means=[0.0] * 256,
                              variance=[0.0] * 256, basis=bytes(256 * 256 * 4),
                              books=[0.0] * (64 * 16 * 4), codes=bytes(32 * 200 * 2))


def test_codes_are_the_same_whatever_float_type_the_inputs_have() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((2500, 76))  # 76 dims in 18 groups of 5: some padded
    values, directions = np.linalg.eigh(np.cov(rows, rowvar=False))
    basis = directions[:, np.argsort(values)[::-1]].T
    wide = vector_codes.encode(np, rows, rows.mean(axis=0), basis)
    narrow = vector_codes.encode(np, rows.astype(np.float32),
                                 rows.mean(axis=0).astype(np.float32),
                                 basis.astype(np.float32))
    assert wide[0].dtype == np.float32 and wide[1].shape == (9, 2500, 2)
    assert np.array_equal(wide[1], narrow[1])
    # Every byte is a pair of centroid numbers (the second group's 16th never chosen).
    assert wide[1][:, :, 0].min() >= 1 and wide[1][:, :, 0].max() <= 240
    assert not wide[1][:, :, 1].any()


@pytest.mark.parametrize("part", ["means", "variance", "basis", "books"])
def test_codes_holding_a_value_that_is_no_number_are_refused(part: str) -> None:
    # A damaged file (a NaN where a float was) must be refused like one of the wrong size,
    # so that recall reads the set another way and rebuilds it, not fail on the first query.
    n, dims = 50, 256
    means, variance, books = [0.0] * dims, [0.0] * dims, [0.0] * (64 * 16 * 4)
    basis = bytearray(dims * dims * 4)
    if part == "basis":
        basis[40:44] = np.float32("nan").tobytes()
    else:
        {"means": means, "variance": variance, "books": books}[part][3] = float("nan")
    with pytest.raises(ValueError, match="not a number"):
        vector_codes.CodedSet(n=n, dims=dims, full=bytes(n * dims * 2), means=means,
                              variance=variance, basis=bytes(basis), books=books,
                              codes=bytes(32 * n * 2))
