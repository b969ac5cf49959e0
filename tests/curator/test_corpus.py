"""The builtin curator against ``../shared/corpus/gold.json``, scored like ``curation-score``.

gold.json is the single source of targets (a grown corpus brings its own entries; nothing is
kept by hand here). The thresholds below are a ratchet: what the curator achieves today,
kept at the release check of the precision-first curator (precision >= 0.95 and recall >= 0.6,
0 forbidden, 0 evidence-not-found, every file within its ``max_records``): a wrong record is
loaded into every later session, a missing one only costs recall.
Skipped with a reason when the shared corpus is absent.
"""

from __future__ import annotations

import pytest

from tests.curator.gold import GOLD, TRANSCRIPTS, Gold, Score, load_gold, saved_records, score
from tests.curator.gold import transcript_strings as strings
from wardian.curator import curate
from wardian.transcripts import load_transcript

MIN_PRECISION = 0.95
MIN_RECALL = 0.6
MAX_FORBIDDEN = 0
MAX_EVIDENCE_NOT_FOUND = 0
MAX_OVER_CAP_FILES = 0

ENTRIES: list[Gold] = load_gold() if GOLD.is_file() else []


def _need_gold() -> None:
    if not GOLD.is_file():
        pytest.skip(f"curation targets not found at {GOLD} (they live in ../shared/corpus)")


_RESULTS: dict[str, Score] = {}


def _run(entry: Gold) -> Score:
    if entry.file in _RESULTS:
        return _RESULTS[entry.file]
    path = TRANSCRIPTS / entry.file
    if not path.exists():
        pytest.fail(f"gold.json names {entry.file}, which is not in {TRANSCRIPTS}")
    conv = load_transcript(path)
    payload = {
        "messages": [m.to_json() for m in conv.messages],
        "records": [],
        "max_changes": 10,
        "include_tool_output": False,
        "workspace": conv.cwd or "/",
    }
    result = score(entry, saved_records(curate(payload)["operations"]), strings(path))
    _RESULTS[entry.file] = result
    return result


def test_gold_names_only_corpus_files() -> None:
    _need_gold()
    assert ENTRIES, "gold.json has no transcript entries"
    missing = [e.file for e in ENTRIES if not (TRANSCRIPTS / e.file).exists()]
    assert missing == []


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.stem for e in ENTRIES])
def test_no_forbidden_verbatim_evidence_within_cap(entry: Gold) -> None:
    result = _run(entry)
    assert result.forbidden == []
    assert result.evidence_not_found == []
    assert result.over_cap == 0, (result.saved, result.max_records)


def test_overall_precision_and_recall() -> None:
    _need_gold()
    results = [_run(entry) for entry in ENTRIES]
    saved = sum(r.saved for r in results)
    good = sum(r.good for r in results)
    expected = sum(r.expected for r in results)
    hit = sum(len(r.hit) for r in results)
    assert saved and good / saved >= MIN_PRECISION, [(r.file, r.not_matched) for r in results]
    assert expected and hit / expected >= MIN_RECALL, [(r.file, r.missed) for r in results]
