"""A scope's vector set on disk (`wardian.memory.vector_file`): a later process's store maps
it instead of reading every vector out of SQLite, and answers exactly as the store that
built it; any write (insert, update, remove, a vector change) moves the write counter so
the old file is never read again; a damaged file is ignored and rebuilt; small scopes
write none. Real SQLite files, real store objects on fresh connections."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from wardian._db import atomic
from wardian._util import utc_now_iso
from wardian.memory import vector_file
from wardian.memory.db import open_memory_db
from wardian.memory.embedding import MODEL, model_files
from wardian.memory.models import Scope
from wardian.memory.recall_index import _NUMPY_FROM
from wardian.memory.store import MemoryStore

pytestmark = pytest.mark.skipif(model_files() is None, reason="wordllama is not installed")

AGENT = "eeeeeeee-0000-4000-8000-000000000005"
WORDS = ("loom", "warp", "weft", "shuttle", "heddle", "reed", "bobbin", "spindle", "dye",
         "indigo", "madder", "wool", "linen", "skein", "treadle", "selvedge", "twill", "tabby")


def _fill(store: MemoryStore, n: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    with atomic(store.conn):
        for _ in range(n):
            store.insert_in_transaction(
                AGENT, text=" ".join(rng.choices(WORDS, k=7)), evidence="e", kind="stable",
                scope=Scope.agent(), sources=(), actor="t", reason=None, now=utc_now_iso())


def _files(store: MemoryStore) -> list[Path]:
    return sorted((Path(store.path).parent / "vectors").glob("*.wvs"))


def _answer(store: MemoryStore, query: str) -> list[str]:
    return [r.id for r in store.index.recall(AGENT, query, limit=10)]


def _fresh() -> MemoryStore:
    """A store as a new process has it: no vector set in memory yet (each store keeps
    its own)."""
    return MemoryStore(open_memory_db())


QUERIES = ("indigo dyed linen on the loom", "which shuttle for twill weaving",
           "madder wool skein")


def test_a_later_store_maps_the_file_and_answers_the_same(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 200)
    built = [_answer(store, q) for q in QUERIES]
    (written,) = _files(store)
    later = _fresh()
    assert [_answer(later, q) for q in QUERIES] == built
    ((_, entry, _),) = later.index._vectors.values()
    assert isinstance(entry[1], vector_file.RowIndex), "the set was not read from the file"
    assert _files(later) == [written]


def test_every_kind_of_write_retires_the_file(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 50)
    _answer(store, QUERIES[0])
    (first,) = _files(store)
    target = store.index.recall(AGENT, QUERIES[0], limit=1)[0]
    store.remove(AGENT, target.id, actor="t", reason="woven")
    later = _fresh()
    shown = _answer(later, QUERIES[0])
    assert target.id not in shown
    (second,) = _files(later)
    assert second != first and not first.exists()
    edited = later.index.recall(AGENT, QUERIES[1], limit=1)[0]
    later.update(AGENT, edited.id, text="The studio sells shortbread on Fridays.",
                 evidence="e", actor="t")
    again = _fresh()
    assert edited.id not in _answer(again, QUERIES[1])
    assert edited.id in _answer(again, "shortbread sold at the studio on fridays")
    assert second not in _files(again)


def test_the_write_counter_moves_for_records_and_vectors(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())

    def changes() -> int:
        return int(store.conn.execute("SELECT changes FROM memory_version").fetchone()[0])

    before = changes()
    record = store.save(AGENT, "Warp the loom before dyeing.", evidence="e",
                        scope=Scope.agent(), actor="t")
    saved = changes()
    assert saved > before
    with atomic(store.conn):
        store.conn.execute("DELETE FROM record_vectors WHERE record_id = ?", (record.id,))
    assert changes() > saved


def test_a_damaged_file_is_ignored_and_rebuilt(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 50)
    built = _answer(store, QUERIES[2])
    (written,) = _files(store)
    size = written.stat().st_size
    written.write_bytes(b"WVS1\n" + (10**9).to_bytes(8, "little") + b"{not json")
    later = _fresh()
    assert _answer(later, QUERIES[2]) == built
    (rebuilt,) = _files(later)
    assert rebuilt.stat().st_size == size
    scope = vector_file.scope_key(AGENT, None, MODEL)
    assert vector_file.load(rebuilt.parent, rebuilt.name, scope) is not None
    assert vector_file.load(rebuilt.parent, rebuilt.name,
                            vector_file.scope_key(AGENT, "/elsewhere", MODEL)) is None


def test_a_small_scope_writes_no_file(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    _fill(store, 40)
    assert _answer(store, QUERIES[0])
    assert _files(store) == []


def test_a_process_building_the_file_runs_numpy_on_one_blas_thread(wardian_home: Path) -> None:
    """A one-query process that builds a scope's file (the only place recall imports
    NumPy: a process that finds the file searches it without NumPy) does not start
    OpenBLAS's thread pool: the threads cost such a process more CPU than its search. A
    fresh interpreter without the variables set, on a real store."""
    import os
    import subprocess
    import sys

    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 100)
    assert not _files(store)
    script = (
        "import os, sys\n"
        "from wardian.memory.db import open_memory_db\n"
        "from wardian.memory.store import MemoryStore\n"
        f"MemoryStore(open_memory_db()).index.recall({AGENT!r}, {QUERIES[0]!r}, limit=10)\n"
        "assert 'numpy' in sys.modules\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.split() == ["1", "1"], done.stdout
    assert _files(store), "no file was written"


_NEAREST_CHILD = r"""
import json, sys
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
agent, path = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as handle:
    query = json.load(handle)
store = MemoryStore(open_memory_db())
found = {}
store.index._semantic_candidates(agent, None, query, 30, found)
print(json.dumps({"numpy": "numpy" in sys.modules,
                  "nearest": {str(k): v.cosine for k, v in found.items()}}))
"""


def _nearest_in_child(tmp: Path, query: list[float]) -> dict[str, Any]:
    """The 30 nearest rows to `query` (rowid -> cosine) as a new process without NumPy
    finds them, and whether it imported NumPy."""
    import json
    import os
    import subprocess
    import sys

    import wardian

    path = tmp / "query.json"
    path.write_text(json.dumps(query), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(wardian.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", _NEAREST_CHILD, AGENT, str(path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    seen["nearest"] = {int(k): v for k, v in seen["nearest"].items()}
    return seen


def _exact_nearest(store: MemoryStore, query: Any, count: int = 30) -> dict[int, float]:
    import numpy as np

    rows = store.conn.execute("SELECT r.rowid, v.vector FROM records r JOIN record_vectors v"
                              " ON v.record_id = r.id ORDER BY r.rowid").fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f2").reshape(
        len(rows), -1).astype(np.float64)
    scores = matrix @ np.asarray(query, dtype=np.float64)
    return {int(rows[i][0]): float(scores[i]) for i in np.argsort(-scores)[:count]}


def test_a_set_of_more_than_1031_dimensions_is_kept_and_searched_without_numpy(
        wardian_home: Path, tmp_path: Path) -> None:
    """An embedder of 1,536 dimensions (more than 1,031, past which the codes' 16-bit
    lanes could overflow with four dimensions a group): its set is still written with
    codes, and a process without NumPy finds the exact nearest rows from it."""
    import numpy as np

    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 100)
    dims = 1536
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((8, dims))
    ids = [r[0] for r in store.conn.execute("SELECT id FROM records ORDER BY rowid")]
    rows = centres[rng.integers(0, 8, len(ids))] + 0.7 * rng.standard_normal((len(ids), dims))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    with atomic(store.conn):
        store.conn.executemany("UPDATE record_vectors SET vector = ? WHERE record_id = ?", [
            (row.astype("<f2").tobytes(), rid) for row, rid in zip(rows, ids, strict=True)])
    query = centres[2] + 0.7 * rng.standard_normal(dims)
    query /= np.linalg.norm(query)
    found: dict[int, Any] = {}
    store.index._semantic_candidates(AGENT, None, query.tolist(), 30, found)
    assert _files(store), "no vector file was written"
    exact = _exact_nearest(store, query)
    seen = _nearest_in_child(tmp_path, query.tolist())
    assert seen["numpy"] is False
    assert set(seen["nearest"]) == set(exact)
    assert all(abs(seen["nearest"][k] - exact[k]) < 1e-3 for k in exact)


def test_a_scope_that_shrinks_below_the_file_size_leaves_no_file(wardian_home: Path) -> None:
    """A scope of more than `_NUMPY_FROM` vectors has a file; once it shrinks to
    `_NUMPY_FROM` or fewer it is scanned from SQLite, and its last file, which no longer
    describes it, must not stay on disk for a later process to read."""
    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 10)
    _answer(store, QUERIES[0])
    assert _files(store)
    for rid, in store.conn.execute("SELECT id FROM records ORDER BY rowid LIMIT 20").fetchall():
        store.remove(AGENT, rid, actor="t", reason="unpicked")
    later = _fresh()
    assert _answer(later, QUERIES[0])
    assert _files(later) == []


def _row_offset(path: Path, row: int) -> int:
    """Where row `row` of the float16 vectors starts in the file at `path`."""
    import json

    raw = path.read_bytes()
    size = int.from_bytes(raw[5:13], "little")
    header = json.loads(raw[13:13 + size])
    offset, _, shape = header["arrays"]["full"]
    return vector_file._data_start(size) + int(offset) + row * int(shape[1]) * 2


@pytest.mark.parametrize("plain", [True, False], ids=["no-numpy", "numpy"])
def test_a_row_holding_no_number_refuses_the_file(wardian_home: Path, tmp_path: Path,
                                                  plain: bool) -> None:
    """A NaN in a row of the file's float16 vectors (a damaged file) must not reach a
    score: the file is refused and the set rebuilt from SQLite, on the search without
    NumPy and on the NumPy search alike, with the exact cosines."""
    import numpy as np

    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 100)
    embedder = store.index.embedder()
    assert embedder is not None
    query = embedder.embed(QUERIES[1])
    assert query is not None
    exact = _exact_nearest(store, query)
    _answer(store, QUERIES[1])
    (written,) = _files(store)
    rowids = [r[0] for r in store.conn.execute(
        "SELECT r.rowid FROM records r JOIN record_vectors v ON v.record_id = r.id"
        " ORDER BY r.rowid")]
    best = max(exact, key=exact.__getitem__)
    at = _row_offset(written, rowids.index(best))
    raw = bytearray(written.read_bytes())
    raw[at:at + 2] = np.float16("nan").tobytes()
    written.write_bytes(bytes(raw))
    if plain:
        nearest = _nearest_in_child(tmp_path, query)["nearest"]
    else:
        found: dict[int, Any] = {}
        _fresh().index._semantic_candidates(AGENT, None, query, 30, found)
        nearest = {k: v.cosine for k, v in found.items()}
    assert set(nearest) == set(exact)
    assert all(abs(nearest[k] - exact[k]) < 1e-3 for k in exact)
    (rebuilt,) = _files(store)
    at = _row_offset(rebuilt, rowids.index(best))
    assert not np.isnan(np.frombuffer(rebuilt.read_bytes()[at:at + 2], dtype="<f2")).any()


@pytest.mark.parametrize("size", [40, _NUMPY_FROM + 50], ids=["small", "large"])
def test_a_stored_vector_holding_no_number_is_no_vector(wardian_home: Path, size: int) -> None:
    """A vector in SQLite holding a NaN (a damaged row) gives its record no semantic score,
    in a set scanned in pure Python and in one built with NumPy: no other score is
    spoiled by it (mean, spread) and the record is still in scope for lexical recall."""
    import numpy as np

    store = MemoryStore(open_memory_db())
    _fill(store, size)
    rid, rowid = store.conn.execute("SELECT id, rowid FROM records ORDER BY rowid LIMIT 1"
                                    ).fetchone()
    spoiled = np.zeros(256, dtype="<f2")
    spoiled[7] = np.nan
    with atomic(store.conn):
        store.conn.execute("UPDATE record_vectors SET vector = ? WHERE record_id = ?",
                           (spoiled.tobytes(), rid))
    embedder = store.index.embedder()
    assert embedder is not None
    query = embedder.embed(QUERIES[0])
    assert query is not None
    found: dict[int, Any] = {}
    store.index._semantic_candidates(AGENT, None, query, 30, found)
    assert found and rowid not in found
    assert all(np.isfinite([c.cosine, c.z]).all() for c in found.values())
    assert rowid in store.index._vector_set(AGENT, None)[4]  # in scope, without a vector


def _mapped(store: MemoryStore) -> vector_file.VectorSet:
    (path,) = _files(store)
    loaded = vector_file.load(path.parent, path.name, vector_file.scope_key(AGENT, None, MODEL))
    assert loaded is not None
    return loaded


def test_a_small_change_carries_the_codes_over_and_answers_as_a_fresh_build(
        wardian_home: Path, tmp_path: Path) -> None:
    """After a save and an edit in a large scope, the set is built again from the previous
    file's centroids, with the codes of the rows that did not change; it answers as a set
    built from scratch on the same rows, and a process without NumPy finds the exact
    nearest rows from it."""
    import numpy as np

    from wardian.memory.vector_carry import RETRAIN_SHARE

    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 400)
    _answer(store, QUERIES[0])
    first = _mapped(store)
    books, codes = np.array(first.books), np.array(first.codes)
    old_rowids = np.array(first.rowids)
    store.save(AGENT, "The dye shed keeps madder roots in a cold cellar.", evidence="e",
               scope=Scope.agent(), actor="t")
    edited = store.index.recall(AGENT, QUERIES[2], limit=1)[0]
    store.update(AGENT, edited.id, text="Skeins of indigo linen hang over the treadle.",
                 evidence="e", actor="t")
    later = _fresh()
    carried_answers = [_answer(later, q) for q in QUERIES]
    carried = _mapped(later)
    assert 0 < carried.drift <= RETRAIN_SHARE * len(carried.rowids)
    assert np.array_equal(carried.books, books)
    edited_rowid = int(store.conn.execute("SELECT rowid FROM records WHERE id = ?",
                                          (edited.id,)).fetchone()[0])
    kept = [i for i, rid in enumerate(old_rowids.tolist()) if rid != edited_rowid]
    at = np.searchsorted(np.array(carried.rowids), old_rowids[kept])
    assert np.array_equal(np.array(carried.codes)[:, at], codes[:, kept])
    embedder = later.index.embedder()
    assert embedder is not None
    query = embedder.embed(QUERIES[1])
    assert query is not None
    seen = _nearest_in_child(tmp_path, query)
    exact = _exact_nearest(later, query)
    assert seen["numpy"] is False and set(seen["nearest"]) == set(exact)
    # The same rows built from scratch: the same answers.
    for path in _files(later):
        path.unlink()
    scratch = _fresh()
    assert [_answer(scratch, q) for q in QUERIES] == carried_answers
    assert _mapped(scratch).drift == 0


def test_codes_are_fitted_again_once_the_rows_drift_too_far(wardian_home: Path) -> None:
    """Once more than `RETRAIN_SHARE` of the rows differ from those the centroids were
    fitted to, summed over the saves since, the centroids are fitted again."""
    import numpy as np

    from wardian.memory.vector_carry import RETRAIN_SHARE

    store = MemoryStore(open_memory_db())
    _fill(store, _NUMPY_FROM + 400)
    _answer(store, QUERIES[0])
    books = np.array(_mapped(store).books)
    step = int(RETRAIN_SHARE * (_NUMPY_FROM + 400) / 3)
    drifts = []
    for seed in range(4):
        _fill(store, step, seed=100 + seed)
        later = _fresh()
        _answer(later, QUERIES[0])
        drifts.append(_mapped(later).drift)
    assert drifts[:3] == [step, 2 * step, 3 * step]
    assert drifts[3] == 0
    assert not np.array_equal(_mapped(store).books, books)
