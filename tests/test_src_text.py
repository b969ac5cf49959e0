"""`src/` states contracts, not history: no issue references, no measured times.

Measurements belong in the output of `bench/`, tuning history in commit messages and
`docs/decisions/`; a figure or an issue number in a docstring drifts from the code.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

ISSUE_REF = re.compile(r"\bissues?\s+\d+\b", re.IGNORECASE)
MEASURED = re.compile(r"~\s?\d+(?:\.\d+)?\s?(?:ms|s|µs|us|ns)\b")


def offending_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every issue reference or measured time in `text`."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
            if ISSUE_REF.search(line) or MEASURED.search(line)]


def test_patterns_catch_what_they_are_for() -> None:
    caught = ["Spec: issue 7 point 2.", "(Issue 19: budget)", "see issues 16, 19",
              "costs ~20 ms of CPU", "a scan is ~1.5 µs a row", "waited ~0.5 s longer"]
    passed = ["APScheduler issues\n#1021", "an open issue stays", "every 250ms", "``90s``",
              "issued 3 tokens", "~/.claude/projects"]
    assert all(offending_lines(t) for t in caught)
    assert not [t for t in passed if offending_lines(t)]


def test_src_has_no_issue_numbers_or_measured_times() -> None:
    found = [f"{path.relative_to(SRC.parent)}:{n}: {line}"
             for path in sorted(SRC.rglob("*.py"))
             for n, line in offending_lines(path.read_text(encoding="utf-8"))]
    assert not found, ("history or a measurement in src/ (move figures to bench/ output, "
                       "history to the commit message or docs/decisions/):\n"
                       + "\n".join(found))
