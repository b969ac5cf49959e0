"""`commit_batch`: authority, evidence check, atomicity, idempotency, cursor (DESIGN.md
"Blueprints, runs, providers" → `memory.commit`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wardian.errors import AuthorityError, ConflictError, ValidationError
from wardian.memory.batch import CommitBatch
from wardian.memory.consolidation import (
    batch_digest,
    commit_batch,
    get_cursor,
    get_receipt,
    normalise_whitespace,
)
from wardian.memory.db import MemoryDB, open_memory_db
from wardian.memory.models import Scope, Source
from wardian.memory.store import MemoryStore

AGENT = "11111111-1111-4111-8111-111111111111"
OTHER = "22222222-2222-4222-8222-222222222222"
ARCHIVE = (
    "user: please always run   the linters before committing.\n"
    "assistant: ok\n"
    "user: We decided to use uv instead of pip for this repo.\n"
)


@pytest.fixture
def store(backend: str) -> Iterator[MemoryStore]:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    s = MemoryStore(open_memory_db())
    yield s


def _batch(ops: list[dict[str, Any]], *, key: str = "run:1", cursor: int | None = 7,
           agent: str = AGENT, workspace: str = "/repo") -> CommitBatch:
    return CommitBatch.model_validate({
        "agent_id": agent, "workspace": workspace, "idempotency_key": key, "cursor": cursor,
        "operations": ops,
    })


def _save(text: str, evidence: str, **extra: Any) -> dict[str, Any]:
    return {"op": "save", "text": text, "evidence": evidence, **extra}


def _counts(store: MemoryStore) -> tuple[int, int, int, int]:
    c = store.conn
    return (
        c.execute("SELECT COUNT(*) FROM records").fetchone()[0],
        c.execute("SELECT COUNT(*) FROM revisions").fetchone()[0],
        c.execute("SELECT COUNT(*) FROM consolidation_receipts").fetchone()[0],
        c.execute("SELECT COUNT(*) FROM consolidation_cursors").fetchone()[0],
    )


def test_saves_with_evidence_revision_actor_and_cursor(store: MemoryStore) -> None:
    batch = _batch([
        _save("Run the linters before committing", "please always run the linters before",
              scope="agent"),
        _save("Use uv instead of pip", "We decided to use uv instead of pip", kind="stable"),
    ])
    result = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:abc",
                          archive_text=ARCHIVE, sources=[Source("archive", "seq:0-7")])
    assert [a.op for a in result.applied] == ["save", "save"]
    assert result.dropped == ()
    assert result.cursor == 7 and result.previous_cursor is None
    assert get_cursor(store, AGENT) == 7
    first, second = (store.get(a.memory_id) for a in result.applied)
    assert first.scope == Scope.agent()
    assert second.scope == Scope("workspace", "/repo")
    assert second.evidence == "We decided to use uv instead of pip"
    assert second.sources == (Source("archive", "seq:0-7"),)
    history = store.history(second.id)
    assert [h.actor for h in history] == ["run:abc"]
    assert history[0].snapshot["evidence"] == "We decided to use uv instead of pip"
    assert result.applied[1].revision_id == second.current_revision_id
    assert result.summary().startswith("2 saved, 0 updated, 0 removed, 0 dropped; cursor 7")


def test_evidence_not_in_archive_is_dropped_and_reported(store: MemoryStore) -> None:
    batch = _batch([
        _save("Invented preference", "the user loves tabs"),
        _save("Use uv", "use uv instead\n   of pip"),  # whitespace differs: still found
    ])
    result = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:x",
                          archive_text=ARCHIVE)
    assert [(d.index, d.code) for d in result.dropped] == [(0, "evidence_not_found")]
    assert [a.index for a in result.applied] == [1]
    assert [r.text for r in store.list(AGENT)] == ["Use uv"]


def test_empty_archive_drops_every_save(store: MemoryStore) -> None:
    result = commit_batch(store, _batch([_save("x", "anything")]), principal_agent_id=AGENT,
                          actor="run:x", archive_text="")
    assert result.applied == () and result.dropped[0].code == "evidence_not_found"
    assert store.count(AGENT) == 0


def test_other_principal_is_refused_and_nothing_written(store: MemoryStore) -> None:
    with pytest.raises(AuthorityError) as info:
        commit_batch(store, _batch([_save("Use uv", "use uv")], agent=OTHER),
                     principal_agent_id=AGENT, actor="run:x", archive_text=ARCHIVE)
    assert info.value.exit_code == 3
    assert _counts(store) == (0, 0, 0, 0)


def test_update_and_remove_touch_only_own_records(store: MemoryStore) -> None:
    theirs = store.save(OTHER, "Their record", evidence="e", scope=Scope.agent(), actor="t")
    mine = store.save(AGENT, "Old checkpoint", evidence="e", kind="current",
                      scope=Scope("workspace", "/elsewhere"), actor="t")
    stale = store.save(AGENT, "Stale note", evidence="e", scope=Scope.agent(), actor="t")
    batch = _batch([
        {"op": "update", "memory_id": theirs.id, "text": "hijack", "evidence": "use uv"},
        {"op": "remove", "memory_id": theirs.id[:8], "evidence": "assistant: ok",
         "reason": "r"},
        {"op": "update", "memory_id": mine.id[:8], "text": "New checkpoint", "kind": "current",
         "evidence": "We decided to use uv"},
        {"op": "remove", "memory_id": stale.id, "evidence": "assistant: ok",
         "reason": "finished"},
        {"op": "remove", "memory_id": stale.id, "evidence": "assistant: ok",
         "reason": "again"},
        {"op": "remove", "memory_id": mine.id, "evidence": "not in the archive",
         "reason": "hallucinated"},
    ])
    result = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:r",
                          archive_text=ARCHIVE)
    assert [(d.index, d.code) for d in result.dropped] == [
        (0, "not_found"), (1, "not_found"), (4, "already_removed"), (5, "evidence_not_found")]
    assert [(a.index, a.op) for a in result.applied] == [(2, "update"), (3, "remove")]
    assert store.get(theirs.id).text == "Their record"
    updated = store.get(mine.id)
    assert updated.text == "New checkpoint"
    assert updated.scope == Scope("workspace", "/elsewhere")  # stays in its workspace
    assert [h.actor for h in store.history(mine.id)] == ["t", "run:r"]
    removed = store.get(stale.id)
    assert removed.status == "removed" and removed.removed_reason == "finished"


def test_duplicate_save_is_dropped(store: MemoryStore) -> None:
    existing = store.save(AGENT, "Use uv  instead of pip", evidence="e",
                          scope=Scope("workspace", "/repo"), actor="t")
    result = commit_batch(
        store, _batch([_save("use uv instead of pip", "use uv instead of pip")]),
        principal_agent_id=AGENT, actor="run:d", archive_text=ARCHIVE)
    assert result.dropped[0].code == "duplicate"
    assert result.dropped[0].memory_id == existing.id


def test_replay_returns_first_result_without_writes(store: MemoryStore) -> None:
    batch = _batch([_save("Use uv", "use uv")])
    first = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:1",
                         archive_text=ARCHIVE)
    before = _counts(store)
    again = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:2",
                         archive_text=ARCHIVE)
    assert _counts(store) == before == (1, 1, 1, 1)
    assert again.replayed and not first.replayed
    assert again.applied == first.applied and again.actor == "run:1"
    stored = get_receipt(store, AGENT, "run:1")
    assert stored is not None and stored.batch_digest == batch_digest(batch)


def test_same_key_different_batch_conflicts_naming_both_digests(store: MemoryStore) -> None:
    first = _batch([_save("Use uv", "use uv")])
    commit_batch(store, first, principal_agent_id=AGENT, actor="run:1", archive_text=ARCHIVE)
    before = _counts(store)
    other = _batch([_save("Run linters", "run the linters")])
    with pytest.raises(ConflictError) as info:
        commit_batch(store, other, principal_agent_id=AGENT, actor="run:1",
                     archive_text=ARCHIVE)
    assert info.value.exit_code == 4
    assert batch_digest(first) in str(info.value) and batch_digest(other) in str(info.value)
    assert _counts(store) == before


def test_empty_batch_advances_cursor_and_cursor_never_moves_back(store: MemoryStore) -> None:
    r1 = commit_batch(store, _batch([], key="k1", cursor=10), principal_agent_id=AGENT,
                      actor="run:1", archive_text="")
    assert r1.applied == () and r1.cursor == 10 and get_cursor(store, AGENT) == 10
    r2 = commit_batch(store, _batch([], key="k2", cursor=4), principal_agent_id=AGENT,
                      actor="run:2", archive_text="")
    assert r2.previous_cursor == 10 and r2.cursor == 10
    r3 = commit_batch(store, _batch([], key="k3", cursor=None), principal_agent_id=AGENT,
                      actor="run:3", archive_text="")
    assert r3.cursor == 10
    assert get_cursor(store, OTHER) is None


def test_failure_midway_rolls_back_everything(store: MemoryStore) -> None:
    """One transaction: if the receipt insert fails, no record, revision or cursor stays."""
    from wardian._db import Migrations, NamedMigration, migrate_component

    # Each backend words the failing trigger in its own DDL.
    failing = Migrations(
        sqlite=[NamedMigration(
            "create_fail_receipt", "CREATE TRIGGER fail_receipt BEFORE INSERT ON"
            " consolidation_receipts BEGIN SELECT RAISE(ABORT, 'boom'); END;")],
        postgres=[NamedMigration(
            "create_fail_receipt",
            "CREATE FUNCTION fail_receipt() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'boom' USING ERRCODE = 'integrity_constraint_violation';"
            " END $$;"
            " CREATE TRIGGER fail_receipt BEFORE INSERT ON consolidation_receipts"
            " FOR EACH ROW EXECUTE FUNCTION fail_receipt();")])
    migrate_component(store.conn, "test_fail_receipt", failing.on(store.conn))
    with pytest.raises(store.db.backend.IntegrityError):
        commit_batch(store, _batch([_save("Use uv", "use uv")]), principal_agent_id=AGENT,
                     actor="run:1", archive_text=ARCHIVE)
    assert _counts(store) == (0, 0, 0, 0)


def test_max_changes_drops_the_rest(store: MemoryStore) -> None:
    batch = _batch([_save("Use uv", "use uv"), _save("Run linters", "run the linters")])
    result = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:1",
                          archive_text=ARCHIVE, max_changes=1)
    assert [d.code for d in result.dropped] == ["over_max_changes"]
    assert store.count(AGENT) == 1


def test_relative_workspace_is_rejected(store: MemoryStore) -> None:
    with pytest.raises(ValidationError):
        commit_batch(store, _batch([], workspace="repo"), principal_agent_id=AGENT,
                     actor="run:1")


def test_normalise_whitespace() -> None:
    assert normalise_whitespace("  a\n\tb  c ") == "a b c"


def test_concurrent_commits_of_one_key_write_once(wardian_home: Path) -> None:
    import threading

    MemoryStore(open_memory_db())  # migrate once before the race
    batch = _batch([_save("Use uv", "use uv")])
    results: list[Any] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def worker(n: int) -> None:
        store = MemoryStore(open_memory_db())
        try:
            barrier.wait()
            results.append(commit_batch(store, batch, principal_agent_id=AGENT,
                                        actor=f"run:{n}", archive_text=ARCHIVE))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(r.replayed for r in results) == [False, True, True, True]
    check = MemoryStore(open_memory_db())
    assert _counts(check) == (1, 1, 1, 1)


_WORDS = ["use", "uv", "pnpm", "always", "never", "lint", "tabs", "repo", "the", "we"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    archive_words=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=30),
    picks=st.lists(st.tuples(st.booleans(), st.integers(0, 29), st.integers(1, 5),
                             st.sampled_from(["agent", "workspace"])), max_size=8),
)
def test_property_only_evidence_from_the_archive_is_committed(
    tmp_path: Path, archive_words: list[str], picks: list[tuple[bool, int, int, str]]
) -> None:
    import uuid

    store = MemoryStore(MemoryDB.open(tmp_path / f"{uuid.uuid4()}.db"))
    archive = "\n".join(" ".join(archive_words[i:i + 5])
                        for i in range(0, len(archive_words), 5))
    ops = []
    for index, (quote, start, length, scope) in enumerate(picks):
        if quote and archive_words:
            s = start % len(archive_words)
            evidence = " ".join(archive_words[s:s + length])
        else:
            evidence = f"zz-not-in-archive-{index}"
        ops.append(_save(f"record {index}", evidence, scope=scope))
    batch = _batch(ops)
    result = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:p",
                          archive_text=archive)
    assert len(result.applied) + len(result.dropped) == len(ops)
    normalised = normalise_whitespace(archive)
    for applied in result.applied:
        record = store.get(applied.memory_id)
        assert normalise_whitespace(record.evidence) in normalised
    for dropped in result.dropped:
        assert dropped.code in {"evidence_not_found", "duplicate"}
    before = _counts(store)
    again = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:q",
                         archive_text=archive)
    assert again.replayed and _counts(store) == before


def test_evidence_in_a_part_another_run_consolidated_meanwhile_is_dropped(
    store: MemoryStore,
) -> None:
    messages = [(1, "we decided to use uv instead of pip"), (2, "always run the linters"),
                (3, "prefer tabs over spaces")]
    # Another run consolidated seq 1..2 after this run loaded its slice (seq 1..3).
    commit_batch(store, _batch([], key="other", cursor=2), principal_agent_id=AGENT,
                 actor="run:other", archive_text="")
    batch = _batch([_save("Use uv", "use uv instead of pip"),
                    _save("Prefer tabs", "prefer tabs over spaces"),
                    _save("Invented", "nowhere at all")], key="late", cursor=3)
    result = commit_batch(store, batch, principal_agent_id=AGENT, actor="run:late",
                          archive_messages=messages)
    assert [(d.index, d.code) for d in result.dropped] == [
        (0, "already_consolidated"), (2, "evidence_not_found")]
    assert [a.text for a in result.applied] == ["Prefer tabs"]
    assert result.previous_cursor == 2 and result.cursor == 3


def test_public_surface() -> None:
    import wardian.memory.consolidation as module

    assert sorted(module.__all__) == [
        "AppliedOp", "CheckedOp", "CommitResult", "DroppedOp", "EvidenceSlice",
        "batch_digest", "check_operations", "commit_batch", "evidence_in_archive",
        "evidence_slice", "find_duplicate", "get_cursor", "get_receipt",
        "normalise_whitespace", "rewind_cursor"]
