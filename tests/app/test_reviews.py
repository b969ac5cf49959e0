"""`wardian.app.reviews` as a Garden page would call it: list an agent's reviews, load one
(plan, digest, state), apply it with a dialog's confirmation (`confirmed_as_shown`) through
the ordinary plan apply, and refuse a stale one — on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from wardian._db import StateDB
from wardian.app.maintenance import confirmed_as_shown
from wardian.app.reviews import ReviewStale, apply_review, list_reviews, load_review
from wardian.errors import EXIT_CONFLICT
from wardian.memory.db import MemoryDB, open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore


def _dbs() -> tuple[StateDB, MemoryDB]:
    """The current home's state and memory databases, as an entry point passes them."""
    from wardian.config import open_state_db

    return open_state_db(), open_memory_db()


REVIEWER = {"reviewer": {"target_type": "temporary_provider", "provider": "builtin",
                         "model": "curator-rules"}}


def _agent_with_memory() -> tuple[str, dict[str, str]]:
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry

    agent = AgentRegistry(open_state_db()).add("dev", provider="claude", workspace="/repo")
    store = MemoryStore(open_memory_db())
    ids = {key: store.save(agent.id, text, evidence=text, scope=Scope("workspace", "/repo"),
                           actor="test").id
           for key, text in (("npm", "Use npm for installs"), ("never", "Never use npm"),
                             ("ruff", "Run ruff before committing"),
                             ("cargo", "Run cargo fmt before committing"))}
    return agent.id, ids


def _draft(agent_id: str) -> str:
    from wardian.config import open_state_db
    from wardian.engine.executor import execute_run
    from wardian.engine.runs import RunStore

    run, _ = RunStore(open_state_db()).create_run(
        blueprint_id="memory-review", agent_id=agent_id, assignments=REVIEWER, inputs={},
        invocation={"trigger": "manual", "payload": {}}, idempotency_key=None,
        workspace="/repo")
    final = execute_run(run.id)
    assert final.status == "succeeded", final.error
    return run.id


def _texts(agent_id: str) -> list[str]:
    store = MemoryStore(open_memory_db())
    return sorted(r.text for r in store.list(agent_id))


def test_list_load_and_apply_with_a_dialogs_confirmation(backend: str) -> None:
    agent_id, ids = _agent_with_memory()
    run_id = _draft(agent_id)
    (listed,) = list_reviews(*_dbs(), agent_id)
    assert (listed.run_id, listed.state, listed.operations) == (run_id, "pending", 1)
    review = load_review(*_dbs(), run_id[:8])  # the run's own agent
    assert review.agent_id == agent_id and review.digest == listed.digest
    assert review.plan is not None
    assert [op["memory_id"] for op in review.plan["operations"]] == [ids["npm"]]
    assert review.to_json()["counts"]["contradiction"] == 1
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import pending_reviews, review_queue

    (queued,) = pending_reviews(*_dbs(), agent_id)  # what Garden's review queue lists
    assert queued["id"] == run_id and queued["summary"] == "1 operation: contradiction 1"
    assert queued["created_at"] == review.drafted_at
    assert [len(q.reviews) for q in review_queue(open_state_db(), open_memory_db())] == [1]

    shown = (agent_id, "1", review.digest_prefix)
    declined = confirmed_as_shown("cancel", shown)
    from wardian.app.maintenance import ApplyAborted

    with pytest.raises(ApplyAborted):
        apply_review(*_dbs(), run_id, agent_id, confirm=declined)
    assert len(_texts(agent_id)) == 4

    result = apply_review(*_dbs(), run_id, agent_id, confirm=confirmed_as_shown("apply", shown))
    assert not result.replayed and result.receipt.plan_id == f"memory-review:{run_id}"
    assert _texts(agent_id) == ["Never use npm", "Run cargo fmt before committing",
                                "Run ruff before committing"]
    assert load_review(*_dbs(), run_id, agent_id).state == "applied"
    assert pending_reviews(*_dbs(), agent_id) == []  # applied: no longer waiting
    again = apply_review(*_dbs(), run_id, agent_id,
                         confirm=confirmed_as_shown("cancel", shown))
    assert again.replayed  # the stored receipt, nothing asked or written


def test_a_revised_record_makes_the_review_stale(backend: str) -> None:
    agent_id, ids = _agent_with_memory()
    run_id = _draft(agent_id)
    store = MemoryStore(open_memory_db())
    store.update(agent_id, ids["npm"], text="Use npm for installs of the docs site",
                 actor="test")
    review = load_review(*_dbs(), run_id, agent_id)
    assert review.state == "stale"
    assert [(c["kind"], c["memory_id"]) for c in review.conflicts] == [
        ("revision_changed", ids["npm"])]
    shown = (agent_id, "1", review.digest_prefix)
    with pytest.raises(ReviewStale) as caught:
        apply_review(*_dbs(), run_id, agent_id, confirm=confirmed_as_shown("apply", shown))
    assert caught.value.exit_code == EXIT_CONFLICT
    assert f"review {run_id[:8]} is stale" in caught.value.message
    assert "Use npm for installs of the docs site" in _texts(agent_id)


def test_another_agents_review_is_not_found() -> None:
    from wardian.config import open_state_db
    from wardian.errors import NotFoundError
    from wardian.runtime.agents import AgentRegistry

    agent_id, _ids = _agent_with_memory()
    run_id = _draft(agent_id)
    other = AgentRegistry(open_state_db()).add("other", provider="claude").id
    assert list_reviews(*_dbs(), other) == []
    with pytest.raises(NotFoundError):
        load_review(*_dbs(), run_id, other)
