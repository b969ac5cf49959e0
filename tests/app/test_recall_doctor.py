"""Without the optional embedding model recall still works, by words only, and
``wardian doctor`` says so; with it, the doctor counts records that have no vector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore

AGENT = "eeeeeeee-0000-4000-8000-000000000005"


def _recall_findings(cli: CliRunner) -> list[dict[str, Any]]:
    res = invoke(cli, "doctor", "--json")
    doc = json.loads(res.stdout)
    (entry,) = [c for c in doc["checks"] if c["name"] == "recall"]
    return list(entry["findings"])


def test_without_the_model_recall_is_lexical_and_doctor_warns(
    cli: CliRunner, wardian_home: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import wardian.memory.embedding as embedding

    monkeypatch.setattr(embedding, "model_files", lambda: None)  # as if not installed
    store = MemoryStore()
    assert not store.semantic_enabled()
    rid = store.save(AGENT, "The kiln schedule lives in firing.toml", evidence="e",
                     scope=Scope.agent(), actor="t").id
    assert store.conn.execute("SELECT COUNT(*) FROM record_vectors").fetchone()[0] == 0
    assert [r.id for r in store.recall(AGENT, "kiln schedule")] == [rid]
    assert store.recall(AGENT, "what is the office cat called") == []
    store.close()
    (finding,) = _recall_findings(cli)
    assert finding["status"] == "warning" and "words only" in finding["message"]
    assert finding["fix"] == "pip install 'wardian[semantic]'"


def test_with_the_model_doctor_counts_records_without_a_vector(
    cli: CliRunner, wardian_home: Path,
) -> None:
    from wardian.memory.embedding import model_files

    if model_files() is None:
        pytest.skip("wordllama is not installed")
    store = MemoryStore()
    rid = store.save(AGENT, "Glaze tests go on the top shelf", evidence="e",
                     scope=Scope.agent(), actor="t").id
    assert [f["status"] for f in _recall_findings(cli)] == ["ok"]
    store.conn.execute("DELETE FROM record_vectors WHERE record_id = ?", (rid,))
    store.close()
    findings = _recall_findings(cli)
    assert [f["status"] for f in findings] == ["ok", "warning"]
    assert "1 active records have no vector" in findings[1]["message"]
