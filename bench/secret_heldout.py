"""Secret scanner on the blind held-out set: prints what it catches and what it wrongly flags.

The cases in ``bench/secret_heldout_cases.py`` were written without reading the scanner,
its corpus or its tests, so these figures say how it does on inputs its authors never saw.
Per shape (``url``, ``password-prose``, ``pass-short``, ``basic-auth``, ``user-pair``,
``token``) and in total:

* found/total over `SECRETS`: a case counts only when `scan` reports something AND the text
  `redact` returns no longer contains the secret value;
* flagged/total over `NEAR_MISSES`: texts holding no secret on which `scan` reports anything.

A measurement, not a gate: it always exits 0, and nothing may be tuned on these cases.

Run: ``PYTHONPATH=$PWD/src .venv/bin/python bench/secret_heldout.py [--show]``
(``--show`` also lists the missed secrets and the flagged near misses).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from secret_heldout_cases import NEAR_MISSES, SECRETS, SHAPES

from wardian.memory.secret_scan import redact, scan


def main(argv: list[str]) -> int:
    show = "--show" in argv
    found = dict.fromkeys(SHAPES, 0)
    secrets = dict.fromkeys(SHAPES, 0)
    flagged = dict.fromkeys(SHAPES, 0)
    near = dict.fromkeys(SHAPES, 0)
    missed: list[tuple[str, str]] = []
    false_flags: list[tuple[str, str]] = []

    for shape, text, value in SECRETS:
        secrets[shape] += 1
        redacted, _ = redact(text)
        if scan(text) and value not in redacted:
            found[shape] += 1
        else:
            missed.append((shape, text))
    for shape, text in NEAR_MISSES:
        near[shape] += 1
        if scan(text):
            flagged[shape] += 1
            false_flags.append((shape, text))

    def row(name: str, hits: int, total: int, flags: int, nears: int) -> str:
        return (f"  {name:<16}{hits:>6}/{total:<5}{hits / total:>7.0%}"
                f"{flags:>14}/{nears:<5}{flags / nears:>4.0%}")

    print("Secret scanner on the blind held-out set:")
    print(f"  {'shape':<16}{'found':>12}{'':>8}{'near misses flagged':>22}")
    for shape in SHAPES:
        print(row(shape, found[shape], secrets[shape], flagged[shape], near[shape]))
    print(row("total", sum(found.values()), sum(secrets.values()),
              sum(flagged.values()), sum(near.values())))

    if show:
        print("\nMissed secrets (not found, or still in the redacted text):")
        for shape, text in missed:
            print(f"  [{shape}] {text!r}")
        print("\nFlagged near misses:")
        for shape, text in false_flags:
            print(f"  [{shape}] {text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
