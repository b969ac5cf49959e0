"""The scanner on real-shaped secrets and their near-misses (`tests.hygiene.secret_corpus`):
every secret is found, its redaction removes the whole value, no near-miss is flagged."""

from __future__ import annotations

import pytest

from tests.hygiene.secret_corpus import NEAR_MISSES, SECRETS
from wardian.memory.secret_scan import redact, scan


def test_the_corpus_is_large_enough() -> None:
    assert len(SECRETS) >= 40 and len(NEAR_MISSES) >= 40


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_secret_is_found_and_wholly_redacted(name: str) -> None:
    text, value = SECRETS[name]
    found = scan(text)
    assert found, f"{name}: nothing found in {text!r}"
    redacted, _ = redact(text)
    assert value not in redacted, f"{name}: {redacted!r}"
    # No tail of the value survives beside the placeholder (partial redaction launders it).
    for size in (6, 8):
        pieces = {value[i:i + size] for i in range(0, max(1, len(value) - size + 1))}
        if len(value) > size:
            assert not [p for p in pieces if p in redacted], f"{name}: {redacted!r}"


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_miss_is_not_flagged(text: str) -> None:
    assert scan(text) == [], text


# --- the write paths that were not scanned: JSON restore and every reason ------------------

AGENT = "22222222-2222-4222-8222-222222222222"
OTHER = "33333333-3333-4333-8333-333333333333"


def _secret(name: str) -> tuple[str, str]:
    return SECRETS[name]


def test_json_restore_sets_aside_a_record_with_a_secret(wardian_home: object) -> None:
    import json

    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.portable import export_document, load_export, restore_document
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    store.save(AGENT, "Deploy from CI", evidence="deploy from CI", scope=Scope.agent(),
               actor="test")
    store.save(AGENT, "Use the staging database", evidence="staging db", scope=Scope.agent(),
               actor="test")
    doc = export_document(store, AGENT, "ada")
    text, value = _secret("postgres-bang")
    doc["records"][1]["text"] = f"Use the staging database: {text}"
    doc["records"][1]["revisions"][0]["snapshot"]["text"] = text
    store.delete_agent_records(AGENT)
    result = restore_document(store, load_export(json.dumps(doc).encode()), OTHER)
    assert result.records == 2
    assert [why for _, why in result.flagged] == [
        "secret_detected: Basic Auth Credentials in records[1].revisions[0].snapshot, "
        "Basic Auth Credentials in records[1].text"]
    assert value not in json.dumps(result.to_json())
    stored = store.conn.execute("SELECT text, flagged FROM records WHERE agent_id = ?"
                                " ORDER BY created_at", (OTHER,)).fetchall()
    assert value not in str([tuple(r) for r in stored])
    snapshots = store.conn.execute("SELECT snapshot_json FROM revisions").fetchall()
    assert value not in str([tuple(r) for r in snapshots])
    # Set aside: not recalled, not in the list of active unflagged records.
    assert [r.text for r in store.list(OTHER, flagged=False)] == ["Deploy from CI"]


@pytest.mark.parametrize("name", ["pass-is", "de-ist", "github"])
def test_a_reason_with_a_secret_is_refused_on_update_and_remove(
    name: str, wardian_home: object
) -> None:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.secret_scan import SecretDetected
    from wardian.memory.store import MemoryStore

    text, value = _secret(name)
    store = MemoryStore(open_memory_db())
    record = store.save(AGENT, "Deploy from CI", evidence="deploy from CI",
                        scope=Scope.agent(), actor="test")
    with pytest.raises(SecretDetected) as raised:
        store.remove(AGENT, record.id, actor="test", reason=f"retired: {text}")
    assert value not in str(raised.value) and "reason" in str(raised.value)
    with pytest.raises(SecretDetected):
        store.update(AGENT, record.id, text="Deploy from CI only", actor="test",
                     reason=text)
    after = store.get(record.id)
    assert after.status == "active" and after.text == "Deploy from CI"
    assert len(store.history(record.id, agent_id=AGENT)) == 1


def test_a_plan_retire_reason_with_a_secret_is_a_conflict_and_never_shown(
    tmp_path: object, wardian_home: object
) -> None:
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from tests.conftest import invoke
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    assert isinstance(tmp_path, Path)
    owner = AgentRegistry(open_state_db()).add("ada", provider="claude", workspace=str(tmp_path))
    store = MemoryStore(open_memory_db())
    record = store.save(owner.id, "Deploy from CI", evidence="e", scope=Scope.agent(),
                        actor="test")
    text, value = _secret("fr-est")
    plan = {"schema_version": 1, "plan_id": "p-reason", "agent_id": owner.id,
            "idempotency_key": "k-reason", "operations": [
                {"op": "retire", "memory_id": record.id,
                 "expected_revision_id": record.current_revision_id, "reason": text}]}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    shown = invoke(CliRunner(), "garden", "maintain", "preview", str(path), "--agent", "ada",
                   "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert [(c["kind"], c["path"]) for c in doc["conflicts"]] == [
        ("secret_detected", "operations[0].reason")]
    assert value not in shown.stdout


def test_a_curator_remove_whose_reason_holds_a_secret_is_dropped(wardian_home: object) -> None:
    from typing import Any

    from wardian.engine.actions import ActionContext, get_action
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    record = store.save(AGENT, "Release branch is frozen", evidence="the branch is frozen",
                        scope=Scope.agent(), actor="test", kind="current")
    text, value = _secret("github")
    archive: dict[str, Any] = {"text": "user: the branch is frozen\nuser: the freeze is over now\n",
               "messages": [], "cursor": None}
    batch = {"operations": [{"op": "remove", "memory_id": record.id,
                             "evidence": "the freeze is over now",
                             "reason": f"over; reopened with {text}"}]}
    events: list[tuple[str, dict[str, Any]]] = []
    ctx = ActionContext(
        run_id="run-1", step_id="commit", attempt=1, agent_id=AGENT, workspace="/repo",
        invocation={"trigger": "manual", "payload": {}}, inputs={}, steps={},
        idempotency_key=None, emit=lambda kind, data: events.append((kind, data)),
        agent_name="dev",
    )
    result = get_action("memory.commit")(ctx, batch=batch, archive=archive)
    assert result.counts["dropped"] == 1
    dropped = [data for kind, data in events if kind == "memory.op_dropped"]
    assert dropped[0]["code"] == "secret_detected" and "in reason" in dropped[0]["reason"]
    assert value not in str(events)
    store = MemoryStore(open_memory_db())
    assert store.get(record.id).status == "active"


def test_wardians_own_ids_in_a_reason_do_not_fail_a_consolidation(
    wardian_home: object
) -> None:
    """A session-close key (invoker and event UUIDs) has the shape of a Telegram bot token
    when the invoker id ends in digits: the generated reason holding it is no secret."""
    from typing import Any

    from wardian.engine.actions import ActionContext, get_action
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    key = ("session-close:0f1e2d3c-4b5a-4678-9abc-012345678912:"
           "5d2c1e0f-9a8b-4c7d-8e6f-0a1b2c3d4e5f")
    store = MemoryStore(open_memory_db())
    record = store.save(AGENT, "Release branch is frozen", evidence="the branch is frozen",
                        scope=Scope.agent(), actor="test", kind="current")
    archive: dict[str, Any] = {
        "text": "user: the branch is frozen\nuser: always run the linters first\n"
                "user: the freeze is over now\n", "messages": [], "cursor": None}
    batch = {"operations": [
        {"op": "save", "text": "Run the linters first", "evidence": "always run the linters"},
        {"op": "update", "memory_id": record.id, "text": "Release branch is open",
         "evidence": "the freeze is over now"}]}
    ctx = ActionContext(
        run_id="run-1", step_id="commit", attempt=1, agent_id=AGENT, workspace="/repo",
        invocation={"trigger": "session-close", "payload": {}}, inputs={}, steps={},
        idempotency_key=key, emit=lambda kind, data: None, agent_name="dev",
    )
    result = get_action("memory.commit")(ctx, batch=batch, archive=archive)
    assert result.counts["save"] == 1 and result.counts["update"] == 1
