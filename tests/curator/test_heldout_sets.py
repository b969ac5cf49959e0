"""The made-up held-out sets are well formed: one target entry per transcript, and back.

Only the shape is checked (keys, regexes, caps, loadable transcripts); the curator is not run
here, so the sets stay a measurement that ``bench/curator_bench.py --set NAME`` takes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.curator.gold import (
    BLIND2_GOLD,
    BLIND2_TRANSCRIPTS,
    BLIND3_GOLD,
    BLIND3_TRANSCRIPTS,
    BLIND_GOLD,
    BLIND_TRANSCRIPTS,
    UNSEEN2_GOLD,
    UNSEEN2_TRANSCRIPTS,
    UNSEEN3_GOLD,
    UNSEEN3_TRANSCRIPTS,
    UNSEEN4_GOLD,
    UNSEEN4_TRANSCRIPTS,
    UNSEEN5_GOLD,
    UNSEEN5_TRANSCRIPTS,
    UNSEEN6_GOLD,
    UNSEEN6_TRANSCRIPTS,
    UNSEEN7_GOLD,
    UNSEEN7_TRANSCRIPTS,
    UNSEEN8_GOLD,
    UNSEEN8_TRANSCRIPTS,
    UNSEEN_GOLD,
    UNSEEN_TRANSCRIPTS,
    load_gold,
)
from wardian.transcripts import load_transcript

SETS = {
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
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_transcript_has_targets_and_back(name: str) -> None:
    gold, transcripts = SETS[name]
    raw = json.loads(gold.read_text(encoding="utf-8"))
    keys = {key for key in raw if not key.startswith("_")}
    files = {p.relative_to(transcripts).as_posix() for p in transcripts.rglob("*.json*")}
    assert keys == files


@pytest.mark.parametrize("name", sorted(SETS))
def test_targets_are_well_formed(name: str) -> None:
    gold, transcripts = SETS[name]
    for entry in load_gold(gold):
        for pattern in entry.forbidden:
            re.compile(pattern)
        # a cap below the expected items would make full recall an over-cap failure
        assert entry.max_records >= len(entry.expected), entry.file
        for item in entry.expected + entry.acceptable:
            assert item and all(group for group in item), entry.file
            assert all(alt == alt.lower() for group in item for alt in group), entry.file
        assert load_transcript(Path(transcripts / entry.file)).messages, entry.file
