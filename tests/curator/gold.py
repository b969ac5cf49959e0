"""Curation targets from ``../shared/corpus/gold.json``, scored the way the release scorer does.

The single source of targets for the corpus tests and ``bench/curator_bench.py``: one entry per
transcript (key: its path under ``transcripts/``) with ``expected`` and ``acceptable`` items,
``forbidden`` regexes and ``max_records``. The matching rules are those of
``../shared/tools/curation-score`` (read it before changing anything here):

- a record's text and evidence are joined by a space, whitespace-collapsed and lowercased;
- an item (a list of groups, each a list of lowercase alternatives) matches when every group
  has one alternative as a substring of that string;
- a forbidden entry is a regex searched in the same string;
- evidence counts as found when, normalised the same way, it is a substring of every string
  value of the transcript's JSON record(s) joined by spaces.

precision = good records / saved records; recall = expected items hit / expected items.
The corpus is never copied into the project; callers skip when ``gold.json`` is absent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
"""``../shared/corpus`` relative to the checkout (``/work/shared/corpus`` for a worktree)."""
GOLD = CORPUS_DIR / "gold.json"
TRANSCRIPTS = CORPUS_DIR / "transcripts"
BLIND_DIR = Path(__file__).resolve().parent / "blind"
"""The blind set: made-up sessions (``blind/build.py``) the curator was not developed against."""
BLIND_GOLD = BLIND_DIR / "blind_gold.json"
BLIND_TRANSCRIPTS = BLIND_DIR / "transcripts"
BLIND2_DIR = Path(__file__).resolve().parent / "blind2"
"""The second blind set, written after the fixes the first one led to (``blind2/build.py``)."""
BLIND2_GOLD = BLIND2_DIR / "blind_gold.json"
BLIND2_TRANSCRIPTS = BLIND2_DIR / "transcripts"
BLIND3_DIR = Path(__file__).resolve().parent / "blind3"
"""The third blind set: styles the corpus lacks, written before any rule change for it."""
BLIND3_GOLD = BLIND3_DIR / "blind_gold.json"
BLIND3_TRANSCRIPTS = BLIND3_DIR / "transcripts"
UNSEEN_DIR = Path(__file__).resolve().parent / "unseen"
"""The unseen set: plain-worded sessions held out from rule writing (``unseen/build.py``)."""
UNSEEN_GOLD = UNSEEN_DIR / "blind_gold.json"
UNSEEN_TRANSCRIPTS = UNSEEN_DIR / "transcripts"
UNSEEN2_DIR = Path(__file__).resolve().parent / "unseen2"
"""The second unseen set, written before the precision-first changes (``unseen2/build.py``)."""
UNSEEN2_GOLD = UNSEEN2_DIR / "blind_gold.json"
UNSEEN2_TRANSCRIPTS = UNSEEN2_DIR / "transcripts"
UNSEEN3_DIR = Path(__file__).resolve().parent / "unseen3"
"""The third unseen set, written without reading the curator's rules (``unseen3/build.py``)."""
UNSEEN3_GOLD = UNSEEN3_DIR / "blind_gold.json"
UNSEEN3_TRANSCRIPTS = UNSEEN3_DIR / "transcripts"
UNSEEN4_DIR = Path(__file__).resolve().parent / "unseen4"
"""The fourth unseen set, written before reading the rules, scored once (``unseen4/build.py``)."""
UNSEEN4_GOLD = UNSEEN4_DIR / "blind_gold.json"
UNSEEN4_TRANSCRIPTS = UNSEEN4_DIR / "transcripts"
UNSEEN5_DIR = Path(__file__).resolve().parent / "unseen5"
"""The fifth unseen set: non-web projects, written blind to the rules (``unseen5/build.py``)."""
UNSEEN5_GOLD = UNSEEN5_DIR / "blind_gold.json"
UNSEEN5_TRANSCRIPTS = UNSEEN5_DIR / "transcripts"
UNSEEN6_DIR = Path(__file__).resolve().parent / "unseen6"
"""The sixth unseen set: other projects again, written blind to the rules (``unseen6/build.py``)."""
UNSEEN6_GOLD = UNSEEN6_DIR / "blind_gold.json"
UNSEEN6_TRANSCRIPTS = UNSEEN6_DIR / "transcripts"
UNSEEN7_DIR = Path(__file__).resolve().parent / "unseen7"
"""The seventh unseen set: new domains, written blind to the rules (``unseen7/build.py``)."""
UNSEEN7_GOLD = UNSEEN7_DIR / "blind_gold.json"
UNSEEN7_TRANSCRIPTS = UNSEEN7_DIR / "transcripts"
UNSEEN8_DIR = Path(__file__).resolve().parent / "unseen8"
"""The eighth unseen set: other new domains, written blind to the rules (``unseen8/build.py``)."""
UNSEEN8_GOLD = UNSEEN8_DIR / "blind_gold.json"
UNSEEN8_TRANSCRIPTS = UNSEEN8_DIR / "transcripts"
UNSEEN9_DIR = Path(__file__).resolve().parent / "unseen9"
"""The ninth unseen set: further new domains, written blind to the rules (``unseen9/build.py``)."""
UNSEEN9_GOLD = UNSEEN9_DIR / "blind_gold.json"
UNSEEN9_TRANSCRIPTS = UNSEEN9_DIR / "transcripts"
UNSEEN10_DIR = Path(__file__).resolve().parent / "unseen10"
"""The tenth unseen set: yet other domains, written blind to the rules (``unseen10/build.py``)."""
UNSEEN10_GOLD = UNSEEN10_DIR / "blind_gold.json"
UNSEEN10_TRANSCRIPTS = UNSEEN10_DIR / "transcripts"

HELD_OUT = {
    "blind": (BLIND_GOLD, BLIND_TRANSCRIPTS),
    "blind2": (BLIND2_GOLD, BLIND2_TRANSCRIPTS),
    "blind3": (BLIND3_GOLD, BLIND3_TRANSCRIPTS),
    "unseen": (UNSEEN_GOLD, UNSEEN_TRANSCRIPTS),
    "unseen2": (UNSEEN2_GOLD, UNSEEN2_TRANSCRIPTS),
    "unseen3": (UNSEEN3_GOLD, UNSEEN3_TRANSCRIPTS),
    "unseen4": (UNSEEN4_GOLD, UNSEEN4_TRANSCRIPTS),
    "unseen5": (UNSEEN5_GOLD, UNSEEN5_TRANSCRIPTS),
    "unseen6": (UNSEEN6_GOLD, UNSEEN6_TRANSCRIPTS),
    "unseen7": (UNSEEN7_GOLD, UNSEEN7_TRANSCRIPTS),
    "unseen8": (UNSEEN8_GOLD, UNSEEN8_TRANSCRIPTS),
    "unseen9": (UNSEEN9_GOLD, UNSEEN9_TRANSCRIPTS),
    "unseen10": (UNSEEN10_GOLD, UNSEEN10_TRANSCRIPTS),
}
"""Every held-out set by name → (targets, transcript folder): a new set is registered here
only, and the bench and the held-out tests read it from here."""

Item = list[list[str]]


@dataclass(frozen=True)
class Gold:
    """One transcript's targets (gold.json entry)."""

    file: str
    expected: list[Item]
    acceptable: list[Item]
    forbidden: list[str]
    max_records: int

    @property
    def stem(self) -> str:
        """The file name without folder and extension (a readable test id)."""
        return Path(self.file).name.split(".")[0]


@dataclass
class Score:
    """How one transcript's saved records scored."""

    file: str
    saved: int = 0
    good: int = 0
    expected: int = 0
    hit: list[int] = field(default_factory=list)
    missed: list[int] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    not_matched: list[str] = field(default_factory=list)
    evidence_not_found: list[str] = field(default_factory=list)
    max_records: int = 0

    @property
    def over_cap(self) -> int:
        """Records beyond the file's ``max_records``."""
        return max(0, self.saved - self.max_records)


def load_gold(path: Path = GOLD) -> list[Gold]:
    """Every transcript entry of gold.json (keys starting with ``_`` are documentation).

    Raises:
        FileNotFoundError: when gold.json is absent (callers skip or report it).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for key in sorted(data):
        if key.startswith("_"):
            continue
        entry = data[key]
        out.append(
            Gold(
                file=key,
                expected=entry.get("expected") or [],
                acceptable=entry.get("acceptable") or [],
                forbidden=entry.get("forbidden") or [],
                max_records=int(entry.get("max_records", 0)),
            )
        )
    return out


def norm(text: str) -> str:
    """Whitespace collapsed, stripped, lowercased (the scorer's ``norm``)."""
    return re.sub(r"\s+", " ", text or "").strip().lower()


def matches(item: Item, text: str) -> bool:
    """Every group of `item` has one alternative as a substring of the normalised `text`."""
    return all(any(alt in text for alt in group) for group in item)


def transcript_strings(path: Path) -> str:
    """Every string value of the transcript (JSON document or JSON lines), normalised."""
    acc: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            acc.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    raw = path.read_text(encoding="utf-8", errors="replace")
    try:
        walk(json.loads(raw))
    except ValueError:
        for line in raw.splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                acc.append(line)
    return norm(" ".join(acc))


def score(gold: Gold, records: list[dict[str, Any]], transcript: str) -> Score:
    """Score saved `records` (dicts with ``text`` and ``evidence``) against `gold`.

    Args:
        gold: the transcript's entry.
        records: what was saved (curator ``save``/``update`` operations or listed records).
        transcript: `transcript_strings` of the transcript file.
    """
    result = Score(file=gold.file, expected=len(gold.expected), max_records=gold.max_records)
    joined_all = []
    for rec in records:
        text, evidence = str(rec.get("text", "")), str(rec.get("evidence", ""))
        joined = norm(f"{text} {evidence}")
        joined_all.append(joined)
        result.saved += 1
        if any(matches(item, joined) for item in gold.expected + gold.acceptable):
            result.good += 1
        else:
            result.not_matched.append(text)
        result.forbidden += [f"/{p}/: {text}" for p in gold.forbidden if re.search(p, joined)]
        if norm(evidence) not in transcript:
            result.evidence_not_found.append(text)
    for k, item in enumerate(gold.expected):
        (result.hit if any(matches(item, j) for j in joined_all) else result.missed).append(k)
    return result


def saved_records(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The operations that leave a record active (``save`` and ``update``)."""
    return [op for op in operations if op.get("op") in ("save", "update")]
