"""The builtin curator against the expected extractions for the shared corpus.

Targets (issue 6): precision >= 0.85, recall >= 0.6, 0 saved items matching a "Do NOT save"
entry, 0 evidence excerpts not verbatim in the input, control sessions <= 1 item.
Transcripts are read from ../shared/corpus (skipped with a reason when absent).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.curator.expectations import Expectation, Score, load_expectations, score
from wardian.providers.builtin.curator import curate
from wardian.transcripts import load_transcript

EXPECTATIONS = load_expectations()


def _run(corpus_dir: Path, exp: Expectation) -> Score:
    path = corpus_dir / exp.file
    if not path.exists():
        pytest.skip(f"{exp.file} is not in the corpus")
    conv = load_transcript(path)
    payload = {
        "messages": [m.to_json() for m in conv.messages],
        "records": [],
        "max_changes": 10,
        "include_tool_output": False,
        "workspace": conv.cwd or "/",
    }
    return score(exp, curate(payload)["operations"], [m.text for m in conv.messages])


def test_every_corpus_file_has_expectations(corpus_dir: Path) -> None:
    files = sorted(str(p.relative_to(corpus_dir)) for p in corpus_dir.glob("*/*.json*"))
    assert files == sorted(exp.file for exp in EXPECTATIONS)


@pytest.mark.parametrize("exp", EXPECTATIONS, ids=[e.stem for e in EXPECTATIONS])
def test_no_forbidden_items_and_verbatim_evidence(corpus_dir: Path, exp: Expectation) -> None:
    result = _run(corpus_dir, exp)
    assert result.forbidden == []
    assert result.not_verbatim == 0
    if exp.control:
        assert result.saved <= 1


def test_overall_precision_and_recall(corpus_dir: Path) -> None:
    results = [_run(corpus_dir, exp) for exp in EXPECTATIONS]
    saved = sum(r.saved for r in results)
    correct = sum(r.correct for r in results)
    required = sum(r.required for r in results)
    hit = sum(len(r.hit) for r in results)
    assert saved and correct / saved >= 0.85, [r.false_positives for r in results]
    assert required and hit / required >= 0.6, [r.missed for r in results]
