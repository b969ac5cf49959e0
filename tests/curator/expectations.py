"""Score curator output against the expected extractions in tests/curator/expected/.

Shared by the corpus tests and `bench/curator_bench.py`. See expected/README.md for the
data format and the scoring rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPECTED_DIR = Path(__file__).resolve().parent / "expected"


@dataclass(frozen=True)
class Matcher:
    """A target or forbidden item: every regex group must hit the chosen field."""

    id: str
    groups: tuple[tuple[re.Pattern[str], ...], ...]
    kind: str = "any"
    field: str = "both"
    optional: bool = False

    def matches(self, op: dict[str, Any]) -> bool:
        """True when the saved/updated item `op` satisfies this matcher."""
        if self.kind != "any" and op.get("kind", "stable") != self.kind:
            return False
        text, evidence = str(op.get("text", "")), str(op.get("evidence", ""))
        hay = {"text": text, "evidence": evidence}.get(self.field, f"{text}\n{evidence}")
        return all(any(p.search(hay) for p in group) for group in self.groups)


def _matcher(data: dict[str, Any]) -> Matcher:
    groups = tuple(
        tuple(re.compile(rx, re.IGNORECASE | re.MULTILINE) for rx in group)
        for group in data["match"]
    )
    return Matcher(
        id=data["id"],
        groups=groups,
        kind=data.get("kind", "any"),
        field=data.get("field", "both"),
        optional=bool(data.get("optional", False)),
    )


@dataclass
class Expectation:
    """One corpus file's targets and forbidden items."""

    stem: str
    file: str
    control: bool
    targets: list[Matcher]
    forbidden: list[Matcher]


@dataclass
class Score:
    """How one file's output scored."""

    stem: str
    saved: int = 0
    correct: int = 0
    forbidden: list[str] = field(default_factory=list)
    false_positives: list[str] = field(default_factory=list)
    required: int = 0
    hit: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    not_verbatim: int = 0

    @property
    def precision(self) -> float | None:
        return self.correct / self.saved if self.saved else None

    @property
    def recall(self) -> float | None:
        return len(self.hit) / self.required if self.required else None


def load_expectations() -> list[Expectation]:
    """Every expected/*.yaml (except _common.yaml, whose forbidden items apply to all)."""
    common = yaml.safe_load((EXPECTED_DIR / "_common.yaml").read_text(encoding="utf-8"))
    common_forbidden = [_matcher(f) for f in common.get("forbidden") or []]
    out = []
    for path in sorted(EXPECTED_DIR.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.append(
            Expectation(
                stem=path.stem,
                file=data["file"],
                control=bool(data.get("control")),
                targets=[_matcher(t) for t in data.get("targets") or []],
                forbidden=[_matcher(f) for f in data.get("forbidden") or []] + common_forbidden,
            )
        )
    return out


def score(exp: Expectation, operations: list[dict[str, Any]], texts: list[str]) -> Score:
    """Score one batch of operations against `exp`; `texts` are the payload message texts."""
    result = Score(stem=exp.stem, required=sum(1 for t in exp.targets if not t.optional))
    hit: set[str] = set()
    for op in operations:
        evidence = str(op.get("evidence", ""))
        if not any(evidence in t for t in texts):
            result.not_verbatim += 1
        if op.get("op") == "remove":
            continue
        result.saved += 1
        bad = [f.id for f in exp.forbidden if f.matches(op)]
        if bad:
            result.forbidden.append(f"{bad[0]}: {op.get('text')}")
            continue
        good = [t for t in exp.targets if t.matches(op)]
        if good:
            result.correct += 1
            hit.update(t.id for t in good if not t.optional)
        else:
            result.false_positives.append(str(op.get("text")))
    result.hit = sorted(hit)
    result.missed = sorted(t.id for t in exp.targets if not t.optional and t.id not in hit)
    return result
