"""Benchmark the builtin curator (`curator-rules`) on the shared transcript corpus.

Prints, per corpus file and overall: saved items, precision, recall against the expected
extractions in tests/curator/expected/, items matching a "Do NOT save" entry, evidence that
is not verbatim in the input, and the time per file (load + curate, and curate alone).
Exits 1 when a target is missed (precision >= 0.85, recall >= 0.6, 0 forbidden,
0 non-verbatim, control files <= 1 item); `--verbose` lists misses and false positives.

Usage: python bench/curator_bench.py [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "curator"))

from expectations import load_expectations, score  # noqa: E402

from wardian.providers.builtin.curator import curate  # noqa: E402
from wardian.transcripts import load_transcript  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "transcripts"
MIN_PRECISION = 0.85
MIN_RECALL = 0.6
MAX_CONTROL_ITEMS = 1


def run(corpus: Path, verbose: bool) -> int:
    """Run the bench; return the process exit code."""
    if not corpus.is_dir():
        print(f"corpus not found at {corpus}; nothing to bench", file=sys.stderr)
        return 0
    rows = []
    tot_saved = tot_correct = tot_req = tot_hit = tot_forb = tot_nv = 0
    control_over = []
    print(
        f"{'file':48} {'saved':>5} {'prec':>5} {'recall':>7} {'forb':>4} {'nonvb':>5} "
        f"{'load+curate ms':>14} {'curate ms':>9} {'KiB':>6}"
    )
    for exp in load_expectations():
        path = corpus / exp.file
        if not path.exists():
            print(f"{exp.stem:48} missing")
            continue
        started = time.perf_counter()
        conv = load_transcript(path)
        loaded = time.perf_counter()
        payload = {
            "messages": [m.to_json() for m in conv.messages],
            "records": [],
            "max_changes": 10,
            "include_tool_output": False,
            "workspace": conv.cwd or "/",
        }
        ops = curate(payload)["operations"]
        elapsed_ms = (time.perf_counter() - started) * 1000
        curate_ms = (time.perf_counter() - loaded) * 1000
        result = score(exp, ops, [m.text for m in conv.messages])
        rows.append(result)
        tot_saved += result.saved
        tot_correct += result.correct
        tot_req += result.required
        tot_hit += len(result.hit)
        tot_forb += len(result.forbidden)
        tot_nv += result.not_verbatim
        if exp.control and result.saved > MAX_CONTROL_ITEMS:
            control_over.append(exp.stem)
        prec = "-" if result.precision is None else f"{result.precision:.2f}"
        rec = "-" if result.recall is None else f"{len(result.hit)}/{result.required}"
        print(
            f"{exp.stem[:48]:48} {result.saved:>5} {prec:>5} {rec:>7} "
            f"{len(result.forbidden):>4} {result.not_verbatim:>5} {elapsed_ms:>14.0f} "
            f"{curate_ms:>9.0f} {path.stat().st_size // 1024:>6}"
            + ("  (control)" if exp.control else "")
        )
        if verbose:
            for item in result.forbidden:
                print(f"    FORBIDDEN {item}")
            for item in result.false_positives:
                print(f"    FP  {item}")
            for item in result.missed:
                print(f"    MISS {item}")
    precision = tot_correct / tot_saved if tot_saved else 1.0
    recall = tot_hit / tot_req if tot_req else 1.0
    print(
        f"overall: saved={tot_saved} precision={precision:.3f} recall={recall:.3f} "
        f"({tot_hit}/{tot_req}) forbidden={tot_forb} non_verbatim={tot_nv} "
        f"controls_over_{MAX_CONTROL_ITEMS}={len(control_over)}"
    )
    ok = (
        precision >= MIN_PRECISION
        and recall >= MIN_RECALL
        and tot_forb == 0
        and tot_nv == 0
        and not control_over
    )
    print("targets: " + ("met" if ok else "NOT met"))
    return 0 if ok else 1


def main() -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args()
    raise SystemExit(run(args.corpus, args.verbose))


if __name__ == "__main__":
    main()
