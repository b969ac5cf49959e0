"""The curator batch is validated exactly twice per run (issue 13): once when the engine
accepts the provider's result (the check registered for ``wardian:curator-batch``), once by
the commit (or, in review mode, once by the plan draft) — never again in between.

A real run of the shipped memory-consolidation blueprint with the builtin curator, on a
real archive; the registered check is wrapped through the registry to count its calls, and
every other way the batch could be checked (memory's pydantic models, jsonschema) is counted
too, so a validation added anywhere on the way fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.validators
import pytest

from wardian.blueprints.output_schemas import get_output_schema, register_output_schema
from wardian.config import open_state_db
from wardian.engine.executor import execute_run
from wardian.engine.runs import RunStore
from wardian.memory.batch import CURATOR_BATCH_REF, CommitBatch, CuratorBatch
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.archives import ArchiveStore


@dataclass
class Counts:
    """How often each kind of check ran on the batch."""

    accepted: int = 0  # the registered output schema check (the provider boundary)
    calls: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str) -> None:
        self.calls[kind] = self.calls.get(kind, 0) + 1


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    found = Counts()
    entry = get_output_schema(CURATOR_BATCH_REF)
    assert entry.check is not None
    real_check = entry.check

    def counting_check(value: Any) -> None:
        found.accepted += 1
        real_check(value)

    register_output_schema(CURATOR_BATCH_REF, schema=entry.schema(), check=counting_check,
                           description=entry.description, replace=True)
    for model in (CuratorBatch, CommitBatch):
        real = model.model_validate

        def spy(cls: Any, /, value: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            found.add(cls.__name__)
            return _real(value, *args, **kwargs)

        monkeypatch.setattr(model, "model_validate", classmethod(spy))
    real_validate, real_for = jsonschema.validate, jsonschema.validators.validator_for

    def validate(*args: Any, **kwargs: Any) -> Any:
        found.add("jsonschema")
        return real_validate(*args, **kwargs)

    def validator_for(*args: Any, **kwargs: Any) -> Any:
        found.add("jsonschema")
        return real_for(*args, **kwargs)

    monkeypatch.setattr(jsonschema, "validate", validate)
    monkeypatch.setattr(jsonschema.validators, "validator_for", validator_for)
    yield found
    register_output_schema(CURATOR_BATCH_REF, schema=entry.schema(), check=real_check,
                           description=entry.description, replace=True)


def _session(tmp_path: Path) -> Path:
    lines = []
    for n, (role, text) in enumerate([
        ("user", "From now on, always run the linter with ruff before you commit here."),
        ("assistant", "Understood: ruff before every commit."),
        ("user", "We decided to keep the API versioned under /v2 from now on."),
    ]):
        message: dict[str, Any] = (
            {"role": "user", "content": text} if role == "user"
            else {"role": "assistant", "model": "claude-x", "id": f"m{n}",
                  "content": [{"type": "text", "text": text}]})
        lines.append(json.dumps({
            "type": role, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
            "sessionId": "s1", "timestamp": "2026-11-29T10:00:00Z", "cwd": "/repo",
            "message": message}))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(tmp_path: Path, mode: str) -> dict[str, Any]:
    agent = AgentRegistry(open_state_db()).add("dev", provider="claude", workspace="/repo")
    archives = ArchiveStore(open_state_db())
    conversation = archives.import_transcript(agent.id, _session(tmp_path), event_id="e1")
    runs = RunStore(open_state_db())
    run, _ = runs.create_run(
        blueprint_id="memory-consolidation", agent_id=agent.id,
        assignments={"curator": {"target_type": "temporary_provider", "provider": "builtin",
                                 "model": "curator-rules"}},
        inputs={"mode": mode}, idempotency_key="session-close:i:e1", workspace="/repo",
        invocation={"trigger": "session-close", "payload": {
            "archive_seq_range": [conversation.first_seq, conversation.last_seq]}})
    final = execute_run(run.id)
    assert final.status == "succeeded", final.error
    outputs = {a.step_id: a.output for a in runs.attempts(run.id)}
    return outputs


def test_a_committed_batch_is_validated_once_accepted_and_once_at_commit(
        tmp_path: Path, counts: Counts) -> None:
    outputs = _run(tmp_path, "commit")
    curated = outputs["curate"]["operations"]
    assert curated, "the builtin curator proposed nothing: the count would prove nothing"
    assert len(outputs["commit"]["applied"]) == len(curated)
    store = MemoryStore(open_memory_db())
    assert len(store.list(outputs["archive"]["agent_id"])) == len(curated)
    assert counts.accepted == 1
    # the accepting check is memory's model; the commit's is CommitBatch; nothing else
    assert counts.calls == {"CuratorBatch": 1, "CommitBatch": 1}


def test_a_reviewed_batch_is_validated_once_accepted_and_once_by_the_draft(
        tmp_path: Path, counts: Counts) -> None:
    outputs = _run(tmp_path, "review")
    assert outputs["review"]["operations"] >= 1
    assert counts.accepted == 1
    assert counts.calls == {"CuratorBatch": 2}
