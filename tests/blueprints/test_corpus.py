"""The broken-blueprint corpus: one defect per file, each with its exact expected message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wardian.blueprints.validate import validate_file
from wardian.engine.actions import known_actions

CORPUS = Path(__file__).parent / "corpus"
EXPECTED: dict[str, list[str]] = json.loads((CORPUS / "expected.json").read_text("utf-8"))
MESSAGE = re.compile(r"^broken/[\w.-]+:\d+:\d+: (\(root\)|[\w$\[\]. -]+): .+; expected .+")


def test_corpus_is_large_and_complete() -> None:
    files = sorted(p.name for p in (CORPUS / "broken").glob("*.yaml"))
    assert len(files) >= 40
    assert files == sorted(EXPECTED), "every corpus file needs an expected message"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_blueprint_message(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    report = validate_file(Path("broken") / name, display=f"broken/{name}",
                           known_actions=known_actions())
    # {ACTIONS} stands for the registered action names, which grow as packages add actions
    expected = [m.replace("{ACTIONS}", ", ".join(known_actions())) for m in EXPECTED[name]]
    assert [p.render() for p in report.problems] == expected
    assert len(report.problems) == 1, "one defect per file"
    for message in expected:
        assert MESSAGE.match(message), message
    assert report.loaded is None


def test_every_error_kind_is_covered() -> None:
    kinds: set[str] = set()
    for name in EXPECTED:
        report = validate_file(CORPUS / "broken" / name, known_actions=known_actions())
        kinds.update(p.kind for p in report.problems)
    assert {"syntax", "schema", "reference", "template", "duplicate", "order"} <= kinds


def test_base_blueprint_is_valid() -> None:
    report = validate_file(CORPUS / "valid" / "base.yaml", known_actions=known_actions())
    assert report.problems == []
    assert report.loaded is not None and report.loaded.id == "corpus-base"
