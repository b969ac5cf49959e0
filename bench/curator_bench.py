"""Benchmark the builtin curator (`curator-rules`) on the shared transcript corpus.

Targets come from ``../shared/corpus/gold.json`` through ``tests/curator/gold.py`` (the same
loader and matching rules as the corpus tests and ``../shared/tools/curation-score``). Prints,
per transcript and overall: saved records, good records, expected items hit, forbidden hits,
evidence not found in the transcript, records over the file's ``max_records``, and the
curator's time (load + curate) per MB of transcript.

Exits 1 when a target is missed (the release check: precision >= 0.95, recall >= 0.6, 0 forbidden,
0 evidence-not-found, no file over its cap, <= 1 s per MB, a made-up 2 MB session in <= 1 s
CPU with its 900 repeats as at most one record); ``--verbose`` lists misses and
records that match no item. ``--set blind`` scores the blind set instead
(``tests/curator/blind/``: made-up sessions in the real formats, targets in blind_gold.json);
it prints the same figures and checks only the safety targets (0 forbidden, 0
evidence-not-found, no file over its cap, the large-session speed): its precision and
recall are a measurement, not a gate, so that nobody tunes rules to its sentences.
``--set blind2`` is a second blind set, written after the fixes the first one led to (the
first set's later figures are no longer blind). ``--set blind3`` is a third, in styles the
corpus lacks (corrections mid-task, dictation, terse answers, non-native English, secrets).
``--set unseen`` is the held-out set of plain-worded sessions (``tests/curator/unseen/``):
rejected agent claims, abandoned designs, negations, one-off instructions, value changes,
rules sharing a frame, checkpoints; it too is a measurement, gated on the safety targets only.
``--set unseen2`` is a second held-out set in all three host formats
(``tests/curator/unseen2/``), written before the precision-first rule changes.
``--set unseen3`` is a third, written without reading the rules (``tests/curator/unseen3/``):
plain-worded rules, refusals naming dotted paths and versions, finished work reported in plain
words (no checkpoint may be left), work that stopped, value changes, negations, one-off
instructions, tool output and a rejected quoted line; a measurement, gated on safety only.
``--set unseen4`` is a fourth, written before reading the rules and scored once before any
rule change (``tests/curator/unseen4/``): rules in plain words, corrections mid-task, refusals
with reasons, answers, values changed later, one-off instructions and answers, quoted claims
the user rejects, pasted logs, secrets, typos, non-native English, stopped and finished work.
``--set unseen5`` is a fifth, written the same way on projects unlike web apps (firmware,
a Go CLI, a game, a notebook, Terraform, an operator, a Rust library, ML training, a mobile
app, a docs site, a data pipeline; ``tests/curator/unseen5/``), scored once.
``--set unseen6`` is a sixth, written the same way on yet other projects (a till, Elixir, iOS,
Ansible, a GHC plugin, WordPress, Unity, Julia, genomics, Zig, WPF, Shiny;
``tests/curator/unseen6/``), scored once.
``--set unseen7`` is a seventh, written the same way on domains none of the earlier sets used
(a point of sale, a GHC plugin, a genomics pipeline, Elixir, WordPress, embedded Zig, iOS,
R Shiny, Unity, Ansible, WPF, Julia; ``tests/curator/unseen7/``), scored once, left untuned.
``--set unseen8`` is an eighth, written the same way on yet other domains (a COBOL batch
migration, Django + HTMX, Kafka Streams, a LaTeX thesis, Vue, Laravel, an OCaml compiler, Spark,
a Blender add-on, CUDA, a Raspberry Pi, SvelteKit; ``tests/curator/unseen8/``), scored once.
``--set unseen9`` is a ninth, written the same way on yet other domains (a berth planner,
a DICOM viewer, Perl billing, Godot, Go gRPC, Fortran, Clojure, Elm, React Native, no_std Rust,
PowerShell, dbt; ``tests/curator/unseen9/``), to be scored once.
``--set unseen10`` is a tenth, written the same way on yet other domains (Ada/SPARK, a Neovim
plugin, F#, Solidity, Akka, Erlang/OTP, a Nix flake, MATLAB, Racket, Flutter, PL/pgSQL, Verilog
on an iCE40; ``tests/curator/unseen10/``), to be scored once.

Usage: python bench/curator_bench.py [--verbose]
       [--set corpus|blind|blind2|blind3|unseen|unseen2|unseen3|unseen4|unseen5|unseen6|
              unseen7|unseen8|unseen9|unseen10]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.curator.gold import (  # noqa: E402
    GOLD,
    HELD_OUT,
    TRANSCRIPTS,
    load_gold,
    saved_records,
    score,
    transcript_strings,
)
from tests.curator.sessions import large_session  # noqa: E402

from wardian.curator import curate  # noqa: E402
from wardian.transcripts import load_transcript  # noqa: E402

MIN_PRECISION = 0.95
MIN_RECALL = 0.6
MAX_SECONDS_PER_MB = 1.0
MAX_LARGE_SESSION_S = 1.0
"""CPU seconds for the made-up 2 MB session (`large_session`), best of three."""


SETS = {"corpus": (GOLD, TRANSCRIPTS), **HELD_OUT}
"""Set name → (targets, transcript folder)."""


def run(verbose: bool, which: str = "corpus") -> int:
    """Run the bench on `which` set (a `SETS` key); return the process exit code."""
    gold, transcripts = SETS[which]
    if not gold.is_file():
        print(f"curation targets not found at {gold}; nothing to bench", file=sys.stderr)
        return 0
    # warm up once (imports, detect-secrets plugins), so the per-MB figure is the curator's
    curate(
        {
            "messages": [
                {
                    "seq": 0,
                    "role": "user",
                    "kind": "text",
                    "meta": {},
                    # a token-shaped word: the scanner loads its plugins on the first one
                    "text": "Always run the linter before committing, key q7Vx2Lm9Rp4sT8wZ1bN6.",
                }
            ]
        }
    )
    tot = {"saved": 0, "good": 0, "expected": 0, "hit": 0, "forb": 0, "enf": 0, "over": 0}
    seconds = 0.0
    size = 0
    print(
        f"{'file':48} {'saved':>5} {'good':>4} {'hit':>7} {'forb':>4} {'enf':>3} "
        f"{'over':>4} {'KiB':>6} {'ms':>6} {'s/MB':>5}"
    )
    for entry in load_gold(gold):
        path = transcripts / entry.file
        if not path.exists():
            print(f"{entry.stem:48} missing")
            continue
        started = time.perf_counter()
        conv = load_transcript(path)
        payload = {
            "messages": [m.to_json() for m in conv.messages],
            "records": [],
            "max_changes": 10,
            "include_tool_output": False,
            "workspace": conv.cwd or "/",
        }
        ops = curate(payload)["operations"]
        elapsed = time.perf_counter() - started
        nbytes = path.stat().st_size
        seconds += elapsed
        size += nbytes
        result = score(entry, saved_records(ops), transcript_strings(path))
        tot["saved"] += result.saved
        tot["good"] += result.good
        tot["expected"] += result.expected
        tot["hit"] += len(result.hit)
        tot["forb"] += len(result.forbidden)
        tot["enf"] += len(result.evidence_not_found)
        tot["over"] += result.over_cap
        print(
            f"{entry.stem[:48]:48} {result.saved:>5} {result.good:>4} "
            f"{len(result.hit):>3}/{result.expected:<3} {len(result.forbidden):>4} "
            f"{len(result.evidence_not_found):>3} {result.over_cap:>4} {nbytes // 1024:>6} "
            f"{elapsed * 1000:>6.0f} {elapsed / (nbytes / 1e6):>5.2f}"
        )
        if verbose:
            for item in result.forbidden:
                print(f"    FORBIDDEN {item}")
            for text in result.not_matched:
                print(f"    NOT MATCHED {text}")
            for text in result.evidence_not_found:
                print(f"    EVIDENCE NOT FOUND {text}")
            for k in result.missed:
                print("    MISSED " + " & ".join("|".join(g) for g in entry.expected[k]))
    precision = tot["good"] / tot["saved"] if tot["saved"] else 1.0
    recall = tot["hit"] / tot["expected"] if tot["expected"] else 1.0
    per_mb = seconds / (size / 1e6) if size else 0.0
    print(
        f"curation (builtin/curator-rules, {which}): precision {precision:.3f}, "
        f"recall {recall:.3f} "
        f"({tot['hit']}/{tot['expected']}), saved {tot['saved']}, forbidden {tot['forb']}, "
        f"evidence-not-found {tot['enf']}, over-cap {tot['over']}; "
        f"{per_mb:.3f} s per MB ({size / 1e6:.1f} MB in {seconds:.2f} s)"
    )
    gated = which == "corpus"  # the blind sets' quality figures are a measurement only
    ok = (
        (not gated or (precision >= MIN_PRECISION and recall >= MIN_RECALL))
        and tot["forb"] == 0
        and tot["enf"] == 0
        and tot["over"] == 0
        # a few KiB per file: fixed per-file costs, not the curator's speed, would decide it
        and (not gated or per_mb <= MAX_SECONDS_PER_MB)
    )
    large = large_session()
    best = float("inf")
    for _ in range(3):  # best of three CPU times: the machine is shared
        started = time.process_time()
        answer = curate(large)
        best = min(best, time.process_time() - started)
    megabytes = len(json.dumps(large["messages"])) / 1e6
    saved = len(answer.get("operations", []))
    print(
        f"made-up large session: {megabytes:.1f} MB curated in {best:.2f} s CPU "
        f"(target <= {MAX_LARGE_SESSION_S:.1f} s), {saved} record(s) from 900 repeats"
    )
    ok = ok and best <= MAX_LARGE_SESSION_S and saved <= 1
    print("targets: " + ("met" if ok else "NOT met"))
    return 0 if ok else 1


def main() -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true")
    parser.add_argument(
        "--set",
        dest="which",
        choices=tuple(SETS),
        default="corpus",
        help="the shared corpus (default) or a made-up blind set (tests/curator/blind*/)",
    )
    args = parser.parse_args()
    raise SystemExit(run(args.verbose, args.which))


if __name__ == "__main__":
    main()
