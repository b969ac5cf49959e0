"""Engine benchmarks (issue 4): per-step engine overhead and shipped-library load time.

* Per-step overhead: a 50-step blueprint of ``noop`` actions executed end to end (claim,
  render, attempt rows, events, finish) against a real ``state.db`` in a temp WARDIAN_HOME;
  reported as (execute time) / 50. Target <= 5 ms per step.
* Run creation: `RunStore.create_run` given the blueprint's hash and path (what invokers
  pass), and `find_blueprint(id)` in a user library of 10 extra blueprints (it reads only
  each file's ``blueprint.id`` and validates the one found). Reported, no target.
* Library: `list_library()` — find, parse, schema-validate and cross-check (templates,
  references, actions) every shipped and user blueprint. Target <= 50 ms. The first call in
  a process also pays the one-off imports (pydantic models, Jinja2, PyYAML); reported apart.

Run: ``.venv/bin/python bench/engine_bench.py [--runs N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

STEPS = 50


def _blueprint(folder: Path) -> Path:
    lines = ["blueprint: {id: bench, name: Bench, version: 1}",
             "inputs:", "  n: {type: integer, default: 1}", "steps:"]
    for i in range(STEPS):
        lines += [f"  - id: s{i}", "    action: noop",
                  '    with: {n: "{{ inputs.n }}", text: "step ' + str(i) + '"}']
    path = folder / "bench" / "blueprint.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def bench_steps(runs: int) -> dict[str, float]:
    from wardian.blueprints.validate import load_blueprint
    from wardian.config import open_state_db
    from wardian.engine.executor import execute_run, resolve_inputs
    from wardian.engine.runs import RunStore

    path = _blueprint(Path(os.environ["WARDIAN_HOME"]))
    loaded = load_blueprint(path)
    store = RunStore(open_state_db())
    per_step: list[float] = []
    for _ in range(runs):
        run, _created = store.create_run(
            blueprint_id=loaded.id, agent_id=None, assignments={},
            inputs=resolve_inputs(loaded, {}, from_text=False),
            invocation={"trigger": "manual", "payload": {}}, blueprint_path=str(path))
        started = time.perf_counter()
        final = execute_run(run.id, store=store)
        elapsed = time.perf_counter() - started
        assert final.status == "succeeded", final.error
        per_step.append(elapsed * 1000 / STEPS)
    return {"ms_per_step_median": statistics.median(per_step), "ms_per_step_max": max(per_step)}


def bench_lookup(runs: int) -> dict[str, float]:
    import shutil

    from wardian.blueprints.library import find_blueprint, shipped_library_dir
    from wardian.config import open_state_db, user_library_dir
    from wardian.engine.runs import RunStore

    library = user_library_dir()
    source = shipped_library_dir() / "memory-consolidation"
    for i in range(10):
        copy = library / f"copy{i}"
        shutil.copytree(source, copy)
        text = (copy / "blueprint.yaml").read_text()
        (copy / "blueprint.yaml").write_text(text.replace("id: memory-consolidation",
                                                          f"id: copy{i}"))
    find_ms: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        loaded = find_blueprint("copy7")
        find_ms.append((time.perf_counter() - started) * 1000)
    store = RunStore(open_state_db())
    create_ms: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        store.create_run(blueprint_id=loaded.id, agent_id=None, assignments={}, inputs={},
                         invocation={"trigger": "manual", "payload": {}},
                         blueprint_hash=loaded.source_hash, blueprint_path=str(loaded.path))
        create_ms.append((time.perf_counter() - started) * 1000)
    shutil.rmtree(library)
    return {"find_by_id_ms_median": statistics.median(find_ms),
            "create_run_ms_median": statistics.median(create_ms)}


def bench_library(runs: int) -> dict[str, float]:
    started = time.perf_counter()
    from wardian.blueprints.library import list_library

    entries = list_library()
    cold = (time.perf_counter() - started) * 1000
    warm: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        entries = list_library()
        warm.append((time.perf_counter() - started) * 1000)
    broken = [e.id for e in entries if not e.ok]
    return {"library_blueprints": len(entries), "library_broken": len(broken),
            "library_ms_cold_with_imports": cold, "library_ms_median": statistics.median(warm)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["WARDIAN_HOME"] = home
        library = bench_library(args.runs)
        steps = bench_steps(args.runs)
        lookup = bench_lookup(args.runs)
    result = {**steps, **library, **lookup}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"engine overhead: {steps['ms_per_step_median']:.2f} ms/step median "
              f"(max {steps['ms_per_step_max']:.2f}) over {STEPS} noop steps; target <= 5")
        print(f"library load+validate: {library['library_ms_median']:.1f} ms median for "
              f"{library['library_blueprints']} blueprint(s) "
              f"({library['library_broken']} broken); first call with imports "
              f"{library['library_ms_cold_with_imports']:.1f} ms; target <= 50")
        print(f"find_blueprint(id) among 11: {lookup['find_by_id_ms_median']:.1f} ms median; "
              f"create_run given hash+path: {lookup['create_run_ms_median']:.2f} ms median")
    ok = steps["ms_per_step_median"] <= 5 and library["library_ms_median"] <= 50
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
