"""The made-up held-out sets are well formed: one target entry per transcript, and back.

Only the shape is checked (keys, regexes, caps, loadable transcripts); the curator is not run
here, so the sets stay a measurement that ``bench/curator_bench.py --set NAME`` takes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.curator.gold import HELD_OUT, load_gold
from wardian.transcripts import load_transcript

SETS = HELD_OUT


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
