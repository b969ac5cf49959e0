"""Semantic recall is the default install; without readable model files recall still
works, by words only, and ``wardian doctor`` says which is active and why; with them, the
doctor counts records that have no vector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.db import open_memory_db
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
    store = MemoryStore(open_memory_db())
    assert not store.index.semantic_enabled()
    rid = store.save(AGENT, "The kiln schedule lives in firing.toml", evidence="e",
                     scope=Scope.agent(), actor="t").id
    assert store.conn.execute("SELECT COUNT(*) FROM record_vectors").fetchone()[0] == 0
    assert [r.id for r in store.index.recall(AGENT, "kiln schedule")] == [rid]
    assert store.index.recall(AGENT, "what is the office cat called") == []
    (finding,) = _recall_findings(cli)
    assert finding["status"] == "warning" and "lexical only" in finding["message"]
    assert "missing" in finding["message"]
    assert finding["fix"] == "pip install --force-reinstall 'wordllama>=0.4,<0.5'"


def test_unreadable_model_files_fall_back_to_words_and_doctor_says_why(
    cli: CliRunner, wardian_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import wardian.memory.embedding as embedding

    weights, vocab = tmp_path / "l2_supercat_256.safetensors", tmp_path / "tokenizer.json"
    weights.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00not json")  # a truncated download
    vocab.write_text("{}")
    monkeypatch.setattr(embedding, "model_files", lambda: (weights, vocab))
    store = MemoryStore(open_memory_db())
    assert not store.index.semantic_enabled()
    rid = store.save(AGENT, "Kiln logs rotate weekly", evidence="e", scope=Scope.agent(),
                     actor="t").id
    assert [r.id for r in store.index.recall(AGENT, "kiln logs")] == [rid]
    (finding,) = _recall_findings(cli)
    assert finding["status"] == "warning"
    assert "unreadable" in finding["message"] and weights.name in finding["message"]


def test_the_embedding_model_is_a_dependency_not_an_extra() -> None:
    from importlib.metadata import requires

    from wardian.app.recall import REQUIREMENT

    plain = [r for r in requires("wardian") or [] if "extra ==" not in r]
    assert any(r.replace(" ", "").startswith("wordllama") for r in plain), plain
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert f'"{REQUIREMENT}",' in pyproject.split("[project.optional-dependencies]")[0]


def test_with_the_model_doctor_counts_records_without_a_vector(
    cli: CliRunner, wardian_home: Path,
) -> None:
    from wardian.memory.embedding import model_files

    if model_files() is None:
        pytest.skip("wordllama is not installed")
    store = MemoryStore(open_memory_db())
    rid = store.save(AGENT, "Glaze tests go on the top shelf", evidence="e",
                     scope=Scope.agent(), actor="t").id
    assert [f["status"] for f in _recall_findings(cli)] == ["ok"]
    store.conn.execute("DELETE FROM record_vectors WHERE record_id = ?", (rid,))
    findings = _recall_findings(cli)
    assert [f["status"] for f in findings] == ["ok", "warning"]
    assert "1 active records have no vector" in findings[1]["message"]


def test_records_saved_without_the_model_get_vectors_from_reindex(
    cli: CliRunner, wardian_home: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import wardian.memory.embedding as embedding

    real = embedding.model_files
    if real() is None:
        pytest.skip("wordllama is not installed")
    monkeypatch.setattr(embedding, "model_files", lambda: None)  # saved while absent
    store = MemoryStore(open_memory_db())
    texts = ["Use pnpm, not npm or yarn, in the web workspace",
             "The staging database is postgres 16 on host db-stage-3",
             "The mobile app supports Portuguese and Polish",
             "Payments are retried three times with jittered backoff"]
    ids = [store.save(AGENT, t, evidence="e", scope=Scope.workspace("/w"), actor="t").id
           for t in texts]
    removed = store.save(AGENT, "The kiln fires on Tuesdays", evidence="e",
                         scope=Scope.workspace("/w"), actor="t").id
    store.remove(AGENT, removed, actor="t", reason="wrong")
    # nothing to do
    assert store.index.backfill_vectors() == 0 and store.index.missing_vectors() == 0
    res = invoke(cli, "garden", "memory", "reindex")
    assert "semantic recall is off" in res.stdout
    monkeypatch.setattr(embedding, "model_files", real)  # the model is now installed
    question = "what languages does the phone app ship in"
    before = MemoryStore(open_memory_db())
    assert before.index.missing_vectors() == 4
    assert before.index.recall(AGENT, question, workspace="/w") == []  # by its words only
    assert [f["status"] for f in _recall_findings(cli)] == ["ok", "warning"]
    assert _recall_findings(cli)[1]["fix"] == "wardian garden memory reindex"
    doc = json.loads(invoke(cli, "garden", "memory", "reindex", "--json").stdout)
    assert doc == {"semantic": True, "model": embedding.MODEL, "filled": 4, "missing": 0}
    after = MemoryStore(open_memory_db())
    rows = {r[0]: r[1] for r in after.conn.execute(
        "SELECT record_id, revision_id FROM record_vectors")}
    assert set(rows) == set(ids)  # the removed record gets none
    assert all(rows[i] == after.get(i).current_revision_id for i in ids)
    assert [r.id for r in after.index.recall(AGENT, question, workspace="/w")][:1] == [ids[2]]
    assert [f["status"] for f in _recall_findings(cli)] == ["ok"]
    again = invoke(cli, "garden", "memory", "reindex")
    assert again.stdout.startswith("0 record(s) got a vector")


def test_backfill_skips_a_record_revised_meanwhile_and_goes_in_batches(
    wardian_home: Path,
) -> None:
    from wardian.memory.embedding import Embedder, model_files

    if model_files() is None:
        pytest.skip("wordllama is not installed")
    store = MemoryStore(open_memory_db())
    ids = [store.save(AGENT, f"Shelf {i} holds glaze batch {i}", evidence="e",
                      scope=Scope.agent(), actor="t").id for i in range(7)]
    store.conn.execute("DELETE FROM record_vectors")
    assert store.index.missing_vectors() == 7
    assert store.index.backfill_vectors(batch=2, at_most=3) == 3
    assert store.index.missing_vectors() == 4
    embedder = store.index.embedder()
    assert embedder is not None
    new_text = "Shelf 6 now holds the celadon test tiles"

    class Revising:
        """Revises the last record (another writer) while its old text is embedded."""

        def embed(self, text: str) -> list[float] | None:
            if text == "Shelf 6 holds glaze batch 6":
                store.update(AGENT, ids[-1], text=new_text, actor="other")
            assert embedder is not None
            return embedder.embed(text)

    store.index._embedder = Revising()  # type: ignore[assignment]
    assert store.index.backfill_vectors(batch=2) == 3  # the revised one already has its own
    store.index._embedder = embedder
    assert store.index.missing_vectors() == 0
    row = store.conn.execute("SELECT revision_id, vector FROM record_vectors"
                             " WHERE record_id = ?", (ids[-1],)).fetchone()
    assert row["revision_id"] == store.get(ids[-1]).current_revision_id
    expected = embedder.embed(new_text)
    assert expected is not None and row["vector"] == Embedder.pack(expected)
