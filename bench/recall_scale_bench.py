"""Right answers at any size: recall on stores of 1k, 10k and 100k templated records.

Every record comes from one of a dozen templates of what agents remember (a tool run before
a step, where a service reads its settings, which branch deploys, what a test suite needs)
filled with a service name (three words: "amber-falcon-gateway"), a tool, a path and a
branch; at 100k the same templates and filler words recur thousands of times, so only the
combination names one record. Each query
*rewords* its record's template ("what do I run before I commit to amber-falcon?" for "Run
ruff before committing changes to amber-falcon") and keeps only the fillers, never the
template's own phrasing. Reported per size:

* hit@5: the share of 200 planted records among the first five answers to their query
  (target >= 0.95 at 100k, and within 0.02 of the 1k figure);
* in-process recall CPU p50/p95 (`RecallIndex.recall`, target p95 <= 10 ms at 100k);
* the whole ``wardian memory recall QUERY`` process, median CPU inside a real ``wardian
  agent exec`` launch at 1k and 100k (target: 100k costs at most 1.5x what 1k costs:
  nothing proportional to the store is loaded per process), beside ``python -c pass``.

* after a save at the largest size (``--saves N``, default 3): the CPU of a ``wardian
  memory save`` process and the ``wardian memory recall`` process after it (one of them
  builds the scope's vector set again), with the previous file to carry the codes of
  unchanged rows over from and without one; and what the
  carried file answers: hit@5 (target >= 0.95) and the share of queries whose top five
  equal those of a file built from scratch on the same state (target >= 0.98), on the
  NumPy search and on the codes.

Run: ``.venv/bin/python bench/recall_scale_bench.py [--sizes 1000,10000,100000]
[--no-process] [--saves N] [--keep DIR]`` (a few minutes). Exits 1 when a target is
missed.

What the process figure measures: every process imports from a byte-code cache
(``PYTHONPYCACHEPREFIX`` under the bench's directory, written by the warm-up run), as an
installed Wardian's do; a caller's ``PYTHONDONTWRITEBYTECODE`` is not passed on. With it
and the prefix together nothing is cached and every process compiles Wardian (and, when
it imported NumPy to map its vectors, as the 100k process once did, NumPy) from source:
then 675 ms against 350 ms at 1k, the compile, not the recall. The 100k process now
searches the vector file's codes without NumPy (`wardian.memory.vector_codes`).

Where the 100k misses came from (hit@5 0.890, then 0.910: 18 of 200 missed, all of them
one template's, "what base branch do royal-wombat-webhook PRs target?" for "Open pull
requests for royal-wombat-webhook against staging, ..."): at 100k every word of a service
name is in more than ``RECALL_EXACT_POSTINGS`` records, so their counts were capped alike
and no word was "rare"; the answer, holding the name but no other word of the question,
covered no more of it than the dozens of records holding two of the name's three words
and "branch", which a static embedding ranks nearer. The semantic shortlist (300 rows by the first
64 dimensions) also lost a fifth of the exact 30 nearest. Now the query's compound name is
a term of its own, matched as a phrase, as rare as the record it names
(`wardian.memory.ranking`, Terms), and the shortlist grows with the set and is scanned
along the set's 64 principal directions. docs/decisions/recall-at-scale.md has the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.memory_bench import _build, _pct  # noqa: E402

PLANTED = 200
TARGET_HIT_AT_5 = 0.95
TARGET_HIT_DRIFT = 0.02
TARGET_RECALL_CPU_P95_MS = 10.0
TARGET_PROCESS_RATIO = 1.5
TARGET_SAME_TOP5 = 0.98
"""Share of planted queries whose top five from a file with codes carried over must equal
those from a file built from scratch on the same state."""
PROCESS_RUNS = 15


def _list(words: str) -> list[str]:
    return words.split()


_ADJ = _list("amber crimson silent rapid hollow golden frozen quiet brisk lunar copper velvet "
             "misty rustic shy bold dusty ivory jade wild calm tidal polar sunny stormy mellow "
             "noble pale royal sharp sleek smoky steady swift tawny umber vivid windy young zesty "
             "azure coral dapper eager fuzzy gentle humble icy jolly keen lively")
_NOUN = _list("falcon otter badger heron lynx marten osprey puffin raven stoat tern vole walrus "
              "yak zebra bison cobra dingo egret ferret gecko hyena ibis jackal koala lemur "
              "magpie newt ocelot panda quail robin skunk tapir urchin viper weasel wombat alpaca "
              "beaver cougar donkey eland finch gopher hornet iguana")
_ROLE = _list("api worker gateway cron ingest billing search auth ledger notifier exporter "
              "scheduler proxy indexer uploader renderer mailer webhook reports sync")
_TOOLS = _list("ruff mypy eslint prettier black isort pytest vitest cargo-fmt clippy gofmt "
               "shellcheck hadolint tflint yamllint markdownlint stylelint buf sqlfluff "
               "pyright")
_STEPS = (("committing", "commit"), ("pushing", "push"), ("merging", "merge"),
          ("deploying", "deploy"), ("releasing", "release"))
_FILES = _list("config/settings.toml deploy/values.yaml etc/app.ini conf/service.json "
               "settings/local.env infra/params.yml")
_BRANCHES = _list("main trunk develop release stable production staging")
_DEPS = _list("redis postgres kafka minio rabbitmq elasticsearch memcached localstack "
              "mailhog clickhouse")

# (record template, query templates that reword it): the query keeps the fillers only
_TEMPLATES: list[tuple[str, tuple[str, ...]]] = [
    ("Run {tool} before {step_ing} changes to {svc}.",
     ("what do I run before I {step} to {svc}?", "check needed on {svc} prior to a {step}")),
    ("The {svc} service reads its settings from {file}.",
     ("where is the {svc} configuration kept?", "config location for {svc}")),
    ("Deploy {svc} only from the {branch} branch.",
     ("which branch ships {svc} to production?", "{svc} release branch")),
    ("The {svc} tests need a {dep} container running.",
     ("what must be up before testing {svc}?", "{svc} test suite dependency")),
    ("Never edit {file} in {svc} by hand; regenerate it with {tool}.",
     ("how is {file} of {svc} produced?", "can I change {svc} {file} manually?")),
    ("{svc} talks to {dep} through a connection pool of its own.",
     ("how does {svc} connect to {dep}?", "{svc} {dep} pooling")),
    ("Open pull requests for {svc} against {branch}, never against a release tag.",
     ("what base branch do {svc} PRs target?", "target branch for {svc} merge requests")),
    ("Format {svc} with {tool} and keep its defaults.",
     ("which formatter does {svc} use?", "code style tool for {svc}")),
    ("The {svc} worker retries failed jobs through {dep}.",
     ("how are failed {svc} jobs retried?", "{svc} job retry mechanism")),
    ("Keep secrets for {svc} out of {file}; they come from the vault.",
     ("where do {svc} credentials live?", "should {svc} secrets go in {file}?")),
]


def _fill(rng: random.Random) -> dict[str, str]:
    step_ing, step = rng.choice(_STEPS)
    svc = f"{rng.choice(_ADJ)}-{rng.choice(_NOUN)}-{rng.choice(_ROLE)}"
    return {"svc": svc, "tool": rng.choice(_TOOLS),
            "step_ing": step_ing, "step": step, "file": rng.choice(_FILES),
            "branch": rng.choice(_BRANCHES), "dep": rng.choice(_DEPS)}


def _record(i: int) -> str:
    rng = random.Random(i)
    template, _ = _TEMPLATES[i % len(_TEMPLATES)]
    return template.format(**_fill(rng))


def _planted() -> list[tuple[str, str]]:
    """(record text, reworded query) for records drawn from the same templates and fillers
    as the rest of the store: at 100k each word of a service name is in thousands of
    records and each whole name in two or three, mostly of other templates, so only the
    name's words together and the query's sense of the template single the record out."""
    rng = random.Random(2026)
    out = []
    for k in range(PLANTED):
        template, queries = _TEMPLATES[k % len(_TEMPLATES)]
        fill = _fill(rng)
        out.append((template.format(**fill), rng.choice(queries).format(**fill)))
    return out


def _agent_id(env: dict[str, str]) -> str:
    out = _wardian(env, "agent", "list", "--json")
    agents = json.loads(out)
    rows = agents["agents"] if isinstance(agents, dict) else agents
    return str(next(a["id"] for a in rows if a["name"] == "bench"))


def _wardian(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "wardian", *args], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"wardian {' '.join(args)} failed: {done.stderr}")
    return done.stdout


DRIVER = r"""
import json, resource, statistics, subprocess, sys
runs, query = int(sys.argv[1]), sys.argv[2]
def cpu(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{argv} failed: {r.stderr}")
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000, r
recall = [sys.executable, "-m", "wardian", "memory", "recall", query, "--json"]
_, first = cpu(recall)  # warm the page cache
found = json.loads(first.stdout)
samples = [cpu(recall)[0] for _ in range(runs)]
base = [cpu([sys.executable, "-c", "pass"])[0] for _ in range(runs)]
print(json.dumps({"recall": statistics.median(samples), "pass": statistics.median(base),
                  "found": found}))
"""


SAVE_DRIVER = r"""
import json, os, resource, statistics, subprocess, sys
from pathlib import Path
rounds, query, folder, nonce = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
def cpu(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{argv} failed: {r.stderr}")
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000, r
wardian = [sys.executable, "-m", "wardian"]
recall = [*wardian, "memory", "recall", query, "--json"]
cpu(recall)  # the set of the current state on disk, and the page cache warm
spent = {"carried": [], "rebuilt": []}
answers = []
for i in range(rounds):
    for kind in ("carried", "rebuilt"):
        if kind == "rebuilt":  # no earlier file: the set and its codes built from scratch
            for old in folder.glob("*.wvs"):
                old.unlink()
        # The save (which may recall, and so build the set) and the recall after it.
        saved, wrote = cpu([*wardian, "memory", "save", f"Bench note {nonce} {kind} {i}: the"
                            f" kiosk printer jams on {i + 3} sheet batches", "--evidence",
                            "bench", "--json"])
        if json.loads(wrote.stdout)["already_saved"]:  # no write: nothing to build again
            raise SystemExit("the bench's save wrote nothing")
        recalled, done = cpu(recall)
        spent[kind].append((saved + recalled, saved, recalled))
        answers.append(json.loads(done.stdout))
print(json.dumps({kind: [statistics.median(x[j] for x in runs) for j in range(3)]
                  for kind, runs in spent.items()} | {"answers": answers}))
"""


def after_saves(base: Path, size: int, planted: list[tuple[str, str]], agent: str,
                rounds: int) -> dict[str, Any]:
    """CPU of a ``wardian memory save`` process and the ``wardian memory recall`` process
    after it (a real `agent exec` launch, median of `rounds`; whichever of them first
    needs the scope's vector set builds it), with the previous vector file to carry codes
    over from and without one (the set built from scratch); then what the carried file
    answers: hit@5 over the planted queries and their top five beside those of the file
    built from scratch on the same state, on the NumPy search and on the codes."""
    home = base / f"home-{size}"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDIAN_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["WARDIAN_HOME"] = str(home)
    env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    workspace = base / "workspace"
    driver = base / "save_driver.py"
    driver.write_text(SAVE_DRIVER, encoding="utf-8")
    text, query = planted[0]
    out = _wardian(env, "agent", "exec", "--workspace", str(workspace), "bench", "--",
                   sys.executable, str(driver), str(rounds), query, str(home / "vectors"),
                   str(time.time_ns()))
    measured = json.loads(out.strip().splitlines()[-1])
    shown = [text in json.dumps(a) for a in measured["answers"]]
    # The same state, once with codes carried over from the previous file, once built
    # from scratch: save once more, let a process carry the codes, keep that file.
    _wardian(env, "agent", "exec", "--workspace", str(workspace), "bench", "--",
             sys.executable, "-m", "wardian", "memory", "save",
             f"Bench note {time.time_ns()}: the kiosk printer is back", "--evidence", "bench")
    _wardian(env, "agent", "exec", "--workspace", str(workspace), "bench", "--",
             sys.executable, "-m", "wardian", "memory", "recall", query, "--json")
    (carried_file,) = (home / "vectors").glob("*.wvs")
    kept = carried_file.read_bytes()
    carried = _answers(agent, planted, workspace, plain=False)
    carried_codes = _answers(agent, planted, workspace, plain=True)
    carried_file.unlink()
    _wardian(env, "agent", "exec", "--workspace", str(workspace), "bench", "--",
             sys.executable, "-m", "wardian", "memory", "recall", query, "--json")
    rebuilt = _answers(agent, planted, workspace, plain=False)
    rebuilt_codes = _answers(agent, planted, workspace, plain=True)
    carried_file.write_bytes(kept)  # the store's file stays the carried one

    def hit(answers: list[list[str]]) -> float:
        return sum(t in a[:5] for (t, _), a in zip(planted, answers, strict=True)) / len(planted)

    def same(a: list[list[str]], b: list[list[str]]) -> float:
        return sum(x[:5] == y[:5] for x, y in zip(a, b, strict=True)) / len(planted)

    return {"save_carried_cpu": measured["carried"][0],
            "save_rebuilt_cpu": measured["rebuilt"][0],
            "carried_parts": measured["carried"][1:], "rebuilt_parts": measured["rebuilt"][1:],
            "save_shown": float(all(shown)), "carried_hit": hit(carried),
            "carried_codes_hit": hit(carried_codes), "rebuilt_hit": hit(rebuilt),
            "rebuilt_codes_hit": hit(rebuilt_codes), "same_top5": same(carried, rebuilt),
            "same_top5_codes": same(carried_codes, rebuilt_codes)}


def _answers(agent: str, planted: list[tuple[str, str]], workspace: Path, *,
             plain: bool) -> list[list[str]]:
    """The texts each planted query recalls from the scope's file as it is on disk: by the
    NumPy search, or (`plain`) by the codes, as a process without NumPy searches them."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.embedding import MODEL
    from wardian.memory.store import MemoryStore
    from wardian.memory.vector_file import scope_key

    index = MemoryStore(open_memory_db()).index
    key = (agent, str(workspace))
    index._vector_set(*key)  # maps the file (this process has NumPy: the NumPy search)
    version, _, name = index._vectors[key]
    if plain:
        assert name is not None, "the set was not read from a file"
        entry = index._vectors_on_disk(name, scope_key(*key, MODEL), plain=True)
        index._vectors[key] = (version, entry, None)  # None: never switch to NumPy
    return [[r.text for r in index.recall(agent, q, limit=10, workspace=str(workspace))]
            for _, q in planted]


def bench_size(base: Path, size: int, planted: list[tuple[str, str]],
               process: bool) -> dict[str, float]:
    """Build a store of `size` records in a data directory under `base` (or reuse the one
    a previous run with the same `base` built: ``--keep``) and measure it."""
    home = base / f"home-{size}"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDIAN_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["WARDIAN_HOME"] = str(home)
    env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    workspace = base / "workspace"
    workspace.mkdir(exist_ok=True)
    built = home / "bench-built"
    started = time.perf_counter()
    if built.exists():
        agent = built.read_text(encoding="utf-8").strip()
        import numpy  # noqa: F401  as building imports it: recall then scans with NumPy at any size
    else:
        _wardian(env, "agent", "add", "bench", "--provider", "claude")
        _wardian(env, "settings", "set", "agent_memory.enabled", "true")
        agent = _agent_id(env)
        _build(home, size, planted, agent=agent, filler=_record, workspace=str(workspace),
               embed_filler=True)
        built.write_text(agent, encoding="utf-8")
    build_s = time.perf_counter() - started
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    for _, query in planted[:10]:  # warm the page cache and any vector matrix
        store.index.recall(agent, query, limit=10, workspace=str(workspace))
    cpu_ms, hits, empty = [], 0, 0
    for text, query in planted:
        c0 = time.process_time()
        found = store.index.recall(agent, query, limit=10, workspace=str(workspace))
        cpu_ms.append((time.process_time() - c0) * 1000)
        hits += any(r.text == text for r in found[:5])
        empty += not found
    semantic = store.index.semantic_enabled()
    result = {"hit@5": hits / len(planted), "cpu_p50": _pct(cpu_ms, 0.5),
              "cpu_p95": _pct(cpu_ms, 0.95), "empty": float(empty), "build_s": build_s,
              "semantic": float(semantic)}
    if process:
        driver = base / "driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        text, query = planted[0]
        out = _wardian(env, "agent", "exec", "--workspace", str(workspace), "bench", "--",
                       sys.executable, str(driver), str(PROCESS_RUNS), query)
        measured = json.loads(out.strip().splitlines()[-1])
        shown = json.dumps(measured["found"])
        result.update(process_cpu=measured["recall"], pass_cpu=measured["pass"],
                      process_found=float(text in shown))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--no-process", action="store_true",
                        help="skip the whole-process measurement")
    parser.add_argument("--saves", type=int, default=3, metavar="N",
                        help="at the largest size, N rounds of a `memory save` followed by"
                        " a `memory recall` process, with and without the previous vector"
                        " file (0: skip; the store gains 2N + 1 records)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build the stores in DIR and keep them; a later run with the"
                        " same DIR reuses them (the 100k build takes minutes)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    planted = _planted()
    results: dict[int, dict[str, Any]] = {}
    with (tempfile.TemporaryDirectory(prefix="wardian-recall-scale-") if args.keep is None
          else contextlib.nullcontext(str(args.keep))) as tmp:
        base = Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            os.environ["WARDIAN_HOME"] = str(base / f"home-{size}")
            process = not args.no_process and size in (min(sizes), max(sizes))
            r = results[size] = bench_size(base, size, planted, process)
            line = (f"  {size:>7,} records  hit@5 {r['hit@5']:.3f}  recall CPU p50 "
                    f"{r['cpu_p50']:5.2f} ms  p95 {r['cpu_p95']:5.2f} ms  empty answers "
                    f"{int(r['empty'])}  [semantic {'on' if r['semantic'] else 'off'}; built in"
                    f" {r['build_s']:.1f} s]")
            if "process_cpu" in r:
                line += (f"  whole `memory recall` process CPU {r['process_cpu']:.0f} ms"
                         f" (python -c pass {r['pass_cpu']:.0f} ms; planted record shown:"
                         f" {'yes' if r['process_found'] else 'NO'})")
            print(line, flush=True)
            if size == max(sizes) and args.saves > 0:
                agent = (base / f"home-{size}" / "bench-built").read_text("utf-8").strip()
                r.update(after_saves(base, size, planted, agent, args.saves))
                carried, scratch = r["carried_parts"], r["rebuilt_parts"]
                print(f"  {size:>7,} records  `memory save` then `memory recall` processes:"
                      f" CPU {r['save_carried_cpu']:.0f} ms with codes carried over (save"
                      f" {carried[0]:.0f} + recall {carried[1]:.0f}),"
                      f" {r['save_rebuilt_cpu']:.0f} ms built from scratch (save"
                      f" {scratch[0]:.0f} + recall {scratch[1]:.0f}; median of"
                      f" {args.saves}; planted record shown: "
                      f"{'yes' if r['save_shown'] else 'NO'})\n"
                      f"           hit@5 carried {r['carried_hit']:.3f} (codes"
                      f" {r['carried_codes_hit']:.3f}), from scratch {r['rebuilt_hit']:.3f}"
                      f" (codes {r['rebuilt_codes_hit']:.3f}); same top five as from"
                      f" scratch {r['same_top5']:.3f} (codes {r['same_top5_codes']:.3f})",
                      flush=True)
    small, large = results[min(sizes)], results[max(sizes)]
    failures = []
    if large["hit@5"] < TARGET_HIT_AT_5:
        failures.append(f"hit@5 {large['hit@5']:.3f} < {TARGET_HIT_AT_5} at {max(sizes):,}")
    if small["hit@5"] - large["hit@5"] > TARGET_HIT_DRIFT:
        failures.append(f"hit@5 drops {small['hit@5'] - large['hit@5']:.3f} from"
                        f" {min(sizes):,} to {max(sizes):,} (target <= {TARGET_HIT_DRIFT})")
    if large["cpu_p95"] > TARGET_RECALL_CPU_P95_MS:
        failures.append(f"recall CPU p95 {large['cpu_p95']:.2f} ms > "
                        f"{TARGET_RECALL_CPU_P95_MS} ms at {max(sizes):,}")
    if "process_cpu" in large and "process_cpu" in small:
        ratio = large["process_cpu"] / small["process_cpu"]
        print(f"  whole-process ratio {max(sizes):,} / {min(sizes):,}: {ratio:.2f}x"
              f" (target <= {TARGET_PROCESS_RATIO}x)")
        if ratio > TARGET_PROCESS_RATIO:
            failures.append(f"whole-process ratio {ratio:.2f}x > {TARGET_PROCESS_RATIO}x")
        if not (large["process_found"] and small["process_found"]):
            failures.append("the whole `memory recall` process did not show the planted record")
    if "save_carried_cpu" in large:
        for label in ("carried_hit", "carried_codes_hit"):
            if large[label] < TARGET_HIT_AT_5:
                failures.append(f"{label} {large[label]:.3f} < {TARGET_HIT_AT_5}")
        for label in ("same_top5", "same_top5_codes"):
            if large[label] < TARGET_SAME_TOP5:
                failures.append(f"{label} {large[label]:.3f} < {TARGET_SAME_TOP5}: the"
                                " carried file answers differently from one built from scratch")
        if not large["save_shown"]:
            failures.append("a `memory recall` process after a save did not show the planted"
                            " record")
    for failure in failures:
        print(f"  MISSED: {failure}")
    print("targets: met" if not failures else "targets: NOT met")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
