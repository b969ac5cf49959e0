"""Benchmark the shared secret scanner: cost per save of 8 KiB of text.

Three 8 KiB texts, each scanned the way a save scans (`scan_fields` over text and
evidence): plain prose (no line passes the gate), developer notes (paths, URLs, versions,
commit hashes, "token"/"password policy" mentions: some lines reach the detectors), and the
same notes with one AWS key inside. Prints the median and p95 CPU time per save in
milliseconds (the cost; wall time is printed too, but on a shared machine it mostly
measures waiting for a core) after a warm-up (detector instances built once, as in any
process that scans twice) and checks what came back: nothing for the first two, the key
for the third. Exits 1 when a median is over the 1 ms target or a result is wrong.

Usage: python bench/secret_scan_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from wardian.memory.secret_scan import scan_fields

TARGET_MS = 1.0
SIZE = 8 * 1024

PROSE = (
    "We agreed to keep the release notes short and to describe every change from the "
    "user's side. Reviews happen in the morning, and nobody merges on a Friday afternoon. "
    "The team prefers small commits with tests, squashed before merging into main. "
)
NOTES = [
    "Run the suite with `make test` before pushing; the slow tests live in tests/e2e/.",
    "Release 2.14.0-rc1 ships on Thursday; tag v2.14.0 afterwards and update CHANGELOG.md.",
    "Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (see PR #1432).",
    "Our password policy requires 12 characters; the token lives in 1Password.",
    "Docs: https://docs.python.org/3/library/sqlite3.html#sqlite3.Connection.execute",
    "The curator's max_tokens=4096 is enough; raise it only for long transcripts.",
    "Run id 3f2b8c1e-9a4d-4e7b-8c2f-1d6e5a7b9c0d failed at step curate, retry it.",
    "Deploy to eu-west-1 with the prod profile; the bucket is wardian-artifacts-2024.",
    "Use TokenBucketRateLimiter for the HTTP client, not SlidingWindowCounter2.",
    "The key insight: the scheduler must fire exactly once per slot, even after a crash.",
]


def _texts() -> dict[str, str]:
    rng = random.Random(14)
    prose = (PROSE * (SIZE // len(PROSE) + 1))[:SIZE]
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < SIZE:
        lines.append(rng.choice(NOTES))
    notes = "\n".join(lines)[:SIZE]
    key = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    middle = notes.rfind("\n", 0, SIZE // 2)
    with_key = notes[:middle] + f"\nThe deploy key is {key} for now." + notes[middle:]
    return {"prose": prose, "notes": notes, "notes+key": with_key[:SIZE + 40]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    failed = False
    for name, text in _texts().items():
        fields = {"text": text, "evidence": text[:200]}
        found = scan_fields(fields)  # warm-up: builds the detector instances
        cpu: list[float] = []
        wall: list[float] = []
        for _ in range(args.rounds):
            start, start_cpu = time.perf_counter(), time.thread_time()
            found = scan_fields(fields)
            cpu.append((time.thread_time() - start_cpu) * 1000)
            wall.append((time.perf_counter() - start) * 1000)
        median = statistics.median(cpu)
        p95 = statistics.quantiles(cpu, n=20)[-1]
        expect_key = name == "notes+key"
        right = bool(found) == expect_key and (not expect_key or any(
            f.kind == "aws-access-key" for f in found))
        ok = median <= TARGET_MS and right
        failed |= not ok
        print(f"secret scan per save · {name:9} · {len(text):5} chars · CPU median "
              f"{median:.3f} ms · p95 {p95:.3f} ms · wall median "
              f"{statistics.median(wall):.3f} ms · findings {len(found)} · "
              f"{'ok' if ok else 'FAIL'} (target <= {TARGET_MS} ms)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
