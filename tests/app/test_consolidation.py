"""The built-in consolidation actions as functions: archive.load from a transcript file,
memory.snapshot, memory.commit (principal, evidence check, replay) and memory.draft_plan
(a schema-v1 plan the maintenance loader accepts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wardian.app.consolidation import (
    archive_load,
    build_plan,
    commit_curator_batch,
    draft_plan,
    memory_snapshot,
    parse_curator_batch,
)
from wardian.engine.actions import known_actions
from wardian.errors import ValidationError
from wardian.memory.consolidation import get_cursor
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore


def _dbs() -> dict[str, Any]:
    """The current home's databases, as the action wrapper passes them."""
    from wardian.config import open_state_db

    return {"state": open_state_db(), "memory": open_memory_db()}

AGENT = "11111111-1111-4111-8111-111111111111"


def _claude_line(kind: str, text: str, n: int) -> str:
    message: dict[str, object]
    if kind == "user":
        message = {"role": "user", "content": text}
    else:
        message = {"role": "assistant", "model": "claude-x", "id": f"m{n}",
                   "content": [{"type": "text", "text": text}]}
    return json.dumps({
        "type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
        "sessionId": "s1", "timestamp": "2026-11-29T10:00:00Z", "cwd": "/repo",
        "message": message,
    })


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    lines = [
        _claude_line("user", "From now on, always use pnpm instead of npm in this repo.", 0),
        _claude_line("assistant", "Understood, I'll use pnpm.", 1),
        _claude_line("user", "Thanks, that's all for today.", 2),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_archive_load_from_a_transcript_file(transcript: Path) -> None:
    out = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo",
                       transcript_path=str(transcript))
    assert out["source"] == "file" and out["cursor"] is None
    assert out["count"] == 3 and out["first_seq"] == 0 and out["last_seq"] == 2
    assert "always use pnpm instead of npm" in out["text"]
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]


def test_snapshot_lists_active_records_of_the_workspace() -> None:
    store = MemoryStore(open_memory_db())
    kept = store.save(AGENT, "Use pnpm", evidence="e", scope=Scope("workspace", "/repo"),
                      actor="t")
    store.save(AGENT, "Elsewhere", evidence="e", scope=Scope("workspace", "/other"), actor="t")
    gone = store.save(AGENT, "Gone", evidence="e", scope=Scope.agent(), actor="t")
    store.remove(AGENT, gone.id, actor="t")
    snap = memory_snapshot(**_dbs(), agent_id=AGENT, workspace="/repo")
    (record,) = snap["records"]
    assert {k: record[k] for k in ("id", "revision_id", "kind", "scope", "text")} == {
        "id": kept.id, "revision_id": kept.current_revision_id, "kind": "stable",
        "scope": {"kind": "workspace", "path": "/repo"}, "text": "Use pnpm",
    }
    # each record's age and last revision time (ISO-8601 UTC, whole days to taken_at)
    assert record["created_at"] == kept.created_at and record["updated_at"] == kept.updated_at
    assert record["created_at"].endswith("Z") and record["age_days"] == 0
    assert record["updated_days"] == 0 and record["flagged"] is None
    assert "taken_at" not in snap  # only the whole memory's snapshot says when and the
    whole = memory_snapshot(**_dbs(), agent_id=AGENT, workspace=None)  # review days (a review's)
    assert whole["taken_at"].endswith("Z") and whole["current_review_days"] == 14
    assert [r["text"] for r in whole["records"]] == ["Elsewhere", "Use pnpm"]


def test_commit_checks_evidence_and_replays(transcript: Path) -> None:
    archive = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo",
                           transcript_path=str(transcript))
    ops = parse_curator_batch({"operations": [
        {"op": "save", "text": "Use pnpm, not npm, in this repo",
         "evidence": "always use pnpm instead of npm in this repo."},
        {"op": "save", "text": "Made up", "evidence": "the user prefers yarn"},
    ]})
    first = commit_curator_batch(memory=open_memory_db(),
                                 run_id="r1", agent_id=AGENT, workspace="/repo",
                                 operations=ops, archive=archive, idempotency_key=None)
    assert first["counts"] == {"save": 1, "update": 0, "remove": 0, "dropped": 1}
    assert first["idempotency_key"] == "run:r1"
    assert first["dropped"][0]["code"] == "evidence_not_found"
    again = commit_curator_batch(memory=open_memory_db(),
                                 run_id="r2", agent_id=AGENT, workspace="/repo",
                                 operations=ops, archive=archive, idempotency_key="run:r1")
    assert again["replayed"] is True
    store = MemoryStore(open_memory_db())
    records = store.list(AGENT)
    assert len(records) == 1
    assert records[0].sources[0].locator == "run:r1"
    assert get_cursor(store, AGENT) is None  # a transcript file never moves the cursor


def test_parse_curator_batch_rejects_bad_answers() -> None:
    assert parse_curator_batch(None) == []
    with pytest.raises(ValidationError):
        parse_curator_batch('{"operations": [{"op": "save"}]}')
    with pytest.raises(ValidationError):
        parse_curator_batch("not json")


def test_draft_plan_is_a_valid_maintenance_plan(transcript: Path, wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    current = store.save(AGENT, "Migrating to pnpm", evidence="e", kind="current",
                         scope=Scope("workspace", "/repo"), actor="t")
    stale = store.save(AGENT, "Old", evidence="e", scope=Scope.agent(), actor="t")
    text = transcript.read_text()
    archive = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo",
                           transcript_path=str(transcript))
    ops = parse_curator_batch({"operations": [
        {"op": "save", "text": "Use pnpm", "evidence": "always use pnpm instead of npm"},
        {"op": "update", "memory_id": current.id[:8], "text": "Use pnpm everywhere",
         "kind": "stable", "evidence": "always use pnpm"},
        {"op": "remove", "memory_id": stale.id, "evidence": "that's all for today",
         "reason": "stale"},
        {"op": "save", "text": "Invented", "evidence": "nowhere in the text"},
    ]})
    out = draft_plan(memory=open_memory_db(),
                     run_id="r9", agent_id=AGENT, workspace="/repo", operations=ops,
                     archive=archive, idempotency_key="session-close:i:b")
    assert out["operations"] == 3 and [d["code"] for d in out["dropped"]] == [
        "evidence_not_found"]
    path = Path(out["path"])
    assert path == wardian_home / "plans" / "r9.json"
    plan = json.loads(path.read_text())
    assert [op["op"] for op in plan["operations"]] == ["create", "revise", "retire"]
    assert plan["operations"][1]["expected_revision_id"] == current.current_revision_id
    assert plan["operations"][1]["scope"] == {"kind": "workspace", "path": "/repo"}
    assert plan["idempotency_key"] == "session-close:i:b"
    from wardian.memory.maintenance.plan import load_plan_file

    loaded = load_plan_file(path)
    assert loaded.agent_id == AGENT
    assert "always use pnpm" in text


def test_draft_plan_with_nothing_to_review_writes_no_file(wardian_home: Path) -> None:
    plan, dropped = build_plan(memory=open_memory_db(),
                               run_id="r", agent_id=AGENT, workspace="/repo", operations=[],
                               archive={"text": ""}, idempotency_key=None)
    assert plan is None and dropped == []
    out = draft_plan(memory=open_memory_db(),
                     run_id="r", agent_id=AGENT, workspace="/repo", operations=[],
                     archive={"text": ""}, idempotency_key=None)
    assert out["path"] is None and not (wardian_home / "plans").exists()


def test_archive_load_reads_after_the_cursor_and_commit_advances_it(transcript: Path) -> None:
    from wardian.config import open_state_db
    from wardian.runtime.archives import ArchiveStore

    archives = ArchiveStore(open_state_db())
    first = archives.import_transcript(AGENT, transcript, event_id="e1")
    out = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo")
    assert out["source"] == "archive" and out["after_seq"] is None
    assert (out["first_seq"], out["last_seq"], out["cursor"]) == (1, 3, 3)
    commit_curator_batch(memory=open_memory_db(),
                         run_id="r1", agent_id=AGENT, workspace="/repo", operations=[],
                         archive=out, idempotency_key="k1")
    second_session = transcript.with_name("second-session.jsonl")
    second_session.write_bytes(transcript.read_bytes())
    archives.import_transcript(AGENT, second_session, event_id="e2")
    later = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo")
    assert later["after_seq"] == 3 and (later["first_seq"], later["last_seq"]) == (4, 6)
    bounded = archive_load(**_dbs(),
                           agent_id=AGENT, agent_name="dev", workspace="/repo", upto_seq=4)
    assert bounded["last_seq"] == 4 and bounded["count"] == 1
    assert first.message_count == 3


def test_the_engine_registry_finds_the_consolidation_actions() -> None:
    from wardian.engine.actions import get_action

    assert {"archive.load", "memory.snapshot", "memory.commit",
            "memory.draft_plan"} <= set(known_actions())
    assert callable(get_action("memory.commit"))


def _builtin_run(agent_id: str, payload: dict[str, object], key: str | None,
                 inputs: dict[str, object] | None = None) -> str:
    from wardian.config import open_state_db
    from wardian.engine.executor import execute_run
    from wardian.engine.runs import RunStore

    runs = RunStore(open_state_db())
    run, _ = runs.create_run(
        blueprint_id="memory-consolidation", agent_id=agent_id,
        assignments={"curator": {"target_type": "temporary_provider", "provider": "builtin",
                                 "model": "curator-rules"}},
        inputs=inputs or {}, invocation={"trigger": "session-close", "payload": payload},
        idempotency_key=key, workspace="/repo",
    )
    final = execute_run(run.id)
    assert final.status == "succeeded", final.error
    return run.id


def _outputs(run_id: str) -> dict[str, tuple[str, Any]]:
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore

    return {a.step_id: (a.status, a.output) for a in RunStore(open_state_db()).attempts(run_id)}


def test_an_empty_slice_skips_the_curator_and_commits_an_empty_batch() -> None:
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry

    agent = AgentRegistry(open_state_db()).add("quiet", provider="claude", workspace="/repo")
    run_id = _builtin_run(agent.id, {"agent_name": "quiet"}, "session-close:i:e")
    steps = _outputs(run_id)
    assert steps["curate"][0] == "skipped"
    status, commit = steps["commit"]
    assert status == "succeeded" and isinstance(commit, dict)
    assert commit["applied"] == [] and commit["idempotency_key"] == "session-close:i:e"
    store = MemoryStore(open_memory_db())
    assert store.conn.execute("SELECT COUNT(*) FROM consolidation_receipts").fetchone()[0] == 1


def test_a_session_close_run_reads_only_its_own_session(transcript: Path) -> None:
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.archives import ArchiveStore

    agent = AgentRegistry(open_state_db()).add("dev", provider="claude", workspace="/repo")
    archives = ArchiveStore(open_state_db())
    one = archives.import_transcript(agent.id, transcript, event_id="e1")
    second_session = transcript.with_name("second-session.jsonl")
    second_session.write_bytes(transcript.read_bytes())
    two = archives.import_transcript(agent.id, second_session, event_id="e2")
    first = _builtin_run(agent.id, {"archive_seq_range": [one.first_seq, one.last_seq]},
                         "session-close:i:e1")
    archive = _outputs(first)["archive"][1]
    assert isinstance(archive, dict)
    assert (archive["first_seq"], archive["last_seq"]) == (1, 3)
    second = _builtin_run(agent.id, {"archive_seq_range": [two.first_seq, two.last_seq]},
                          "session-close:i:e2")
    archive = _outputs(second)["archive"][1]
    assert isinstance(archive, dict)
    assert (archive["after_seq"], archive["first_seq"], archive["last_seq"]) == (3, 4, 6)
    store = MemoryStore(open_memory_db())
    assert get_cursor(store, agent.id) == 6


def test_public_surface() -> None:
    import wardian.app.consolidation as services
    import wardian.app.consolidation_actions as actions

    assert sorted(services.__all__) == [
        "MAX_SLICE_CHARS", "archive_load", "bound_slice", "build_plan",
        "commit_curator_batch", "draft_plan", "evidence_in_archives",
        "expand_archive_output", "join_messages", "memory_snapshot", "parse_curator_batch",
        "shorten_archive_output"]
    assert sorted(actions.__all__) == ["ACTIONS"]
    assert set(actions.ACTIONS) <= set(known_actions())


def test_review_plan_drops_what_a_commit_would_drop_as_duplicate(wardian_home: Path) -> None:
    store = MemoryStore(open_memory_db())
    kept = store.save(AGENT, "Use pnpm in this repo.", evidence="e",
                      scope=Scope("workspace", "/repo"), actor="t")
    ops = parse_curator_batch({"operations": [
        {"op": "save", "text": "use pnpm  in this repo.", "evidence": "use pnpm"},
        {"op": "save", "text": "Run make lint before commits.", "evidence": "make lint"},
        {"op": "save", "text": "Run make lint before commits.", "evidence": "make lint"},
    ]})
    plan, dropped = build_plan(memory=open_memory_db(),
                               run_id="r", agent_id=AGENT, workspace="/repo", operations=ops,
                               archive={"text": "use pnpm, and make lint"},
                               idempotency_key=None)
    assert plan is not None
    assert [op["text"] for op in plan["operations"]] == ["Run make lint before commits."]
    assert [(d["index"], d["code"]) for d in dropped] == [(0, "duplicate"), (2, "duplicate")]
    assert kept.short_id in dropped[0]["reason"]
