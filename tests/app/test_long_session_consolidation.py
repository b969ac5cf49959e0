"""A session longer than the curator's prompt can hold is consolidated, not failed: the
slice is cut to whole messages within the bound, the run records an event naming what was
left for the next run (messages, characters, seqs), the cursor moves only past what was
read, and the next run reads the rest. A single message longer than the bound is shortened
with the event saying so. Before, such a session failed every later consolidation of the
agent (the prompt render's cap), silently. Made-up sessions; the builtin curator; the real
engine, SQLite files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wardian.app.consolidation import MAX_SLICE_CHARS
from wardian.config import open_state_db
from wardian.engine.executor import execute_run
from wardian.engine.runs import RunStore
from wardian.memory.consolidation import get_cursor
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.archives import ArchiveStore

FILLER = ("The orchard sync job walked the quince directory again and printed its usual "
          "progress lines for every shard it touched. ")


def _session(path: Path, turns: list[tuple[str, str]], session: str) -> Path:
    lines = []
    for n, (role, text) in enumerate(turns):
        message: dict[str, Any] = (
            {"role": "user", "content": text} if role == "user"
            else {"role": "assistant", "model": "claude-x", "id": f"{session}-m{n}",
                  "content": [{"type": "text", "text": text}]})
        lines.append(json.dumps({
            "type": role, "uuid": f"{session}-u{n}",
            "parentUuid": f"{session}-u{n - 1}" if n else None, "sessionId": session,
            "timestamp": "2026-12-06T10:00:00Z", "cwd": "/repo", "message": message}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(agent_id: str, key: str, seqs: tuple[int | None, int | None]
         ) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    runs = RunStore(open_state_db())
    run, _ = runs.create_run(
        blueprint_id="memory-consolidation", agent_id=agent_id,
        assignments={"curator": {"target_type": "temporary_provider", "provider": "builtin",
                                 "model": "curator-rules"}},
        inputs={"mode": "commit"}, idempotency_key=key, workspace="/repo",
        invocation={"trigger": "session-close", "payload": {"archive_seq_range": list(seqs)}})
    final = execute_run(run.id)
    events = runs.events(run.id)
    outputs = {a.step_id: a.output for a in runs.attempts(run.id)}
    return final, events, outputs


def test_an_over_long_session_is_cut_and_the_rest_is_read_next(
        tmp_path: Path, wardian_home: Path) -> None:
    agent = AgentRegistry(open_state_db()).add("dev", provider="claude", workspace="/repo")
    chatter = FILLER * 40  # ~5 KB a message
    turns = [("user", "From now on, always run the linter with ruff before you commit here.")]
    while sum(len(t) for _, t in turns) < 3 * MAX_SLICE_CHARS:
        turns += [("assistant", chatter), ("user", "Go on with the next shard please.")]
    turns.append(("user", "We decided to keep the API versioned under /v2 from now on."))
    archives = ArchiveStore(open_state_db())
    conversation = archives.import_transcript(
        agent.id, _session(tmp_path / "long.jsonl", turns, "long"), event_id="e1")
    seqs = (conversation.first_seq, conversation.last_seq)

    final, events, outputs = _run(agent.id, "session-close:i:e1", seqs)
    assert final.status == "succeeded", final.error
    cut = [e for e in events if e["kind"] == "action.archive.slice_cut"]
    assert len(cut) == 1, [e["kind"] for e in events]
    detail = cut[0]["data"]
    read_to = outputs["archive"]["last_seq"]
    assert detail["read_through_seq"] == read_to < conversation.last_seq
    assert detail["left_messages"] > 0 and detail["left_chars"] > 0
    assert detail["bound_chars"] == MAX_SLICE_CHARS
    assert len(outputs["archive"]["text"]) <= MAX_SLICE_CHARS
    store = MemoryStore(open_memory_db())
    assert get_cursor(store, agent.id) == read_to
    texts = [r.text for r in store.list(agent.id)]
    assert any("ruff" in t for t in texts), texts

    # the next runs read on from the cursor, to the end of the session
    for n in range(2, 8):
        final, events, outputs = _run(agent.id, f"session-close:i:e1:{n}", seqs)
        assert final.status == "succeeded", final.error
        store = MemoryStore(open_memory_db())
        cursor = get_cursor(store, agent.id)
        if cursor == conversation.last_seq:
            break
    assert cursor == conversation.last_seq
    store = MemoryStore(open_memory_db())
    texts = [r.text for r in store.list(agent.id)]
    assert any("/v2" in t for t in texts), texts


def test_one_message_past_the_bound_is_shortened_with_the_event(
        tmp_path: Path, wardian_home: Path) -> None:
    agent = AgentRegistry(open_state_db()).add("dev", provider="claude", workspace="/repo")
    turns = [("user", "From now on, always run the linter with ruff before you commit here."),
             ("assistant", FILLER * (2 * MAX_SLICE_CHARS // len(FILLER)))]
    archives = ArchiveStore(open_state_db())
    conversation = archives.import_transcript(
        agent.id, _session(tmp_path / "huge.jsonl", turns, "huge"), event_id="e1")
    final, events, outputs = _run(agent.id, "session-close:i:e1",
                                  (conversation.first_seq, conversation.last_seq))
    assert final.status == "succeeded", final.error
    (cut,) = [e["data"] for e in events if e["kind"] == "action.archive.slice_cut"]
    assert cut["shortened_seq"] == conversation.last_seq
    assert cut["shortened_from_chars"] > MAX_SLICE_CHARS
    assert len(outputs["archive"]["text"]) <= MAX_SLICE_CHARS
    store = MemoryStore(open_memory_db())
    assert get_cursor(store, agent.id) == conversation.last_seq
