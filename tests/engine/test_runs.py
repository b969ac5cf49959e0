"""RunStore: idempotent creation, skipped runs, listing, claims, requeue rules, migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import create_run, write_blueprint

from wardian.blueprints.validate import load_blueprint
from wardian.config import open_state_db
from wardian.engine.runs import RunStore
from wardian.errors import NotFoundError, UsageError

BP = """\
blueprint: {id: store-demo, name: Store, version: 1}
inputs:
  key: {type: string, secret: true, default: d}
steps:
  - id: a
    action: noop
"""


def test_idempotency_key_returns_the_existing_run(tmp_path: Path) -> None:
    store = RunStore(open_state_db())
    path = write_blueprint(tmp_path / "bp", BP)
    kwargs: dict[str, Any] = dict(blueprint_id="store-demo", agent_id="agent-1", assignments={},
                  inputs={"key": "clear"}, blueprint_path=str(path),
                  invocation={"trigger": "session-close", "payload": {"boundary": "clear"}},
                  idempotency_key="session-close:inv:b1", invoker_id="inv")
    first, created = store.create_run(**kwargs)
    again, created_again = store.create_run(**kwargs)
    assert created and not created_again
    assert again.id == first.id
    assert first.inputs == {"key": "***"}  # the blueprint says it is secret
    assert first.blueprint_hash and first.blueprint_hash.startswith("sha256:")
    assert len(store.list(invoker_id="inv")) == 1


def test_skipped_run_is_recorded_with_reason(tmp_path: Path) -> None:
    store = RunStore(open_state_db())
    run, _ = store.create_run(blueprint_id="store-demo", agent_id=None, assignments={},
                              inputs={}, invocation={"trigger": "schedule", "payload": {}},
                              status="skipped", skip_reason="no archive")
    assert (run.status, run.skip_reason) == ("skipped", "no archive")
    assert run.finished_at is not None
    assert [r.id for r in store.list(status="skipped")] == [run.id]
    with pytest.raises(UsageError):
        store.create_run(blueprint_id="x", agent_id=None, assignments={}, inputs={},
                         invocation={"trigger": "cron"})


def test_only_one_claim_wins_and_requeue_rules(tmp_path: Path) -> None:
    store = RunStore(open_state_db())
    run = create_run(store, write_blueprint(tmp_path / "bp", BP))
    assert store.claim(run.id) is True
    assert RunStore(open_state_db()).claim(run.id) is False
    assert RunStore(open_state_db()).mark_interrupted_orphans() == []  # we are alive
    with pytest.raises(UsageError, match="only interrupted, failed or cancelled"):
        store.requeue(run.id)
    store.finish(run.id, "failed", "x")
    assert store.requeue(run.id).status == "queued"


def test_lookup_by_prefix_and_not_found(tmp_path: Path, backend: str) -> None:
    store = RunStore(open_state_db())
    run = create_run(store, write_blueprint(tmp_path / "bp", BP))
    assert store.get(run.id[:8]).id == run.id
    assert store.get(run.id[:8].upper()).id == run.id  # hex: either case, both backends
    with pytest.raises(NotFoundError):
        store.get("ffffffff")


def test_events_are_append_only(tmp_path: Path, wardian_home: Path) -> None:
    store = RunStore(open_state_db())
    create_run(store, write_blueprint(tmp_path / "bp", BP))
    conn = sqlite3.connect(wardian_home / "state.db")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE run_events SET kind = 'x'")
    conn.close()


def test_secret_inputs_come_from_the_validated_blueprint_without_reading_it(tmp_path: Path
                                                                          ) -> None:
    path = write_blueprint(tmp_path / "bp", BP)
    loaded = load_blueprint(path)
    path.unlink()  # a run created from the caller's validated copy needs no file access
    store = RunStore(open_state_db())
    run, created = store.create_run(
        blueprint_id=loaded.id, agent_id=None, assignments={}, inputs={"key": "s3cret"},
        invocation={"trigger": "manual", "payload": {}}, blueprint=loaded)
    assert created and run.inputs == {"key": "***"} and run.secret_inputs == ["key"]
    assert (run.blueprint_hash, run.blueprint_path) == (loaded.source_hash, str(path))
    # given explicitly (even empty), the caller's list is used as is: no lookup at all
    run, _ = store.create_run(
        blueprint_id="elsewhere", agent_id=None, assignments={}, inputs={"key": "plain"},
        invocation={"trigger": "manual", "payload": {}},
        blueprint_hash="sha256:0", blueprint_path="/nowhere.yaml", secret_inputs=[])
    assert run.inputs == {"key": "plain"} and run.blueprint_path == "/nowhere.yaml"
