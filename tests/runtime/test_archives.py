"""Conversation archives: import from real transcripts, global per-agent seq, idempotency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.archives import ArchiveStore, TranscriptUnreadable


def _generic(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_generic_counts_malformed_and_numbers_globally(tmp_path: Path) -> None:
    store = ArchiveStore(open_state_db())
    t1 = _generic(tmp_path / "a.jsonl", [
        json.dumps({"role": "user", "content": "we use ruff, not flake8"}),
        "{not json",
        json.dumps({"role": "assistant", "content": "noted"}),
    ])
    m1 = store.import_transcript("agent-1", t1, event_id="ev-1", provider="generic",
                                 session_id="s1", boundary="clear")
    assert (m1.message_count, m1.malformed_lines) == (2, 1)
    assert (m1.first_seq, m1.last_seq) == (1, 2)
    assert m1.source_sha256 and len(m1.source_sha256) == 64
    assert m1.session_id == "s1" and m1.boundary == "clear"
    t2 = _generic(tmp_path / "b.jsonl", [json.dumps({"role": "user", "content": "second"})])
    m2 = store.import_transcript("agent-1", t2, event_id="ev-2")
    assert (m2.first_seq, m2.last_seq) == (3, 3)
    other = store.import_transcript("agent-2", t2, event_id="ev-3")
    assert other.first_seq == 1
    # idempotent per event
    again = store.import_transcript("agent-1", t1, event_id="ev-1")
    assert again.id == m1.id and store.last_seq("agent-1") == 3
    sl = store.slice("agent-1", 1)
    assert [m.seq for m in sl] == [2, 3]
    assert sl[1].text == "second" and sl[1].meta["conversation_id"] == m2.id
    assert [m.seq for m in store.slice("agent-1", None)] == [1, 2, 3]
    assert store.get(m1.id[:8]).id == m1.id
    assert [c.id for c in store.list(agent_id="agent-1")] == [m2.id, m1.id] or \
        {c.id for c in store.list(agent_id="agent-1")} == {m1.id, m2.id}


def test_a_conversation_id_prefix_matches_in_either_case(tmp_path: Path, backend: str
                                                         ) -> None:
    store = ArchiveStore(open_state_db())
    t = _generic(tmp_path / "a.jsonl", [json.dumps({"role": "user", "content": "hello"})])
    made = store.import_transcript("agent-1", t, event_id="ev-1", provider="generic")
    assert store.get(made.id[:8].upper()).id == made.id
    assert store.get(made.id.upper()).id == made.id


def test_a_transcript_closed_twice_is_archived_once(tmp_path: Path) -> None:
    """The same file for two events (a /clear seen by the hook, then the launch's exit; a
    resumed session): the second import adds only what the transcript gained."""
    store = ArchiveStore(open_state_db())
    lines = [json.dumps({"role": "user", "content": "use ruff"}),
             json.dumps({"role": "assistant", "content": "ok"})]
    path = _generic(tmp_path / "t.jsonl", lines)
    first = store.import_transcript("a", path, event_id="e1", provider="generic")
    same = store.import_transcript("a", path, event_id="e2", provider="generic")
    assert (same.message_count, same.first_seq, same.source_offset) == (0, None, 2)
    _generic(path, [*lines, json.dumps({"role": "user", "content": "and mypy"})])
    grown = store.import_transcript("a", path, event_id="e3", provider="generic")
    assert (grown.message_count, grown.first_seq, grown.source_offset) == (1, 3, 2)
    assert [m.text for m in store.slice("a")] == ["use ruff", "ok", "and mypy"]
    assert [m.meta["index"] for m in store.messages(grown.id)] == [2]
    # another agent's archive is its own
    assert store.import_transcript("b", path, event_id="e4").message_count == 3
    # a different file at the same path is imported whole
    _generic(path, [json.dumps({"role": "user", "content": "another session"}),
                    json.dumps({"role": "assistant", "content": "hi"}),
                    json.dumps({"role": "user", "content": "x"}),
                    json.dumps({"role": "user", "content": "y"})])
    other = store.import_transcript("a", path, event_id="e5", provider="generic")
    assert (other.message_count, other.source_offset, other.first_seq) == (4, 0, 4)
    assert first.message_count == 2 and store.last_seq("a") == 7


def test_conversation_show_explains_an_import_with_nothing_new(cli: CliRunner,
                                                               tmp_path: Path) -> None:
    from tests.conftest import invoke

    store = ArchiveStore(open_state_db())
    path = _generic(tmp_path / "t.jsonl", [json.dumps({"role": "user", "content": "hi"})])
    store.import_transcript("a", path, event_id="e1", provider="generic")
    same = store.import_transcript("a", path, event_id="e2", provider="generic")
    res = invoke(cli, "conversation", "show", same.id)
    assert res.exit_code == 0, res.output
    assert "earlier imports hold the transcript's first 1" in res.stdout
    assert same.imported_at not in res.stdout  # human output is local time


def test_unreadable_and_missing(tmp_path: Path) -> None:
    store = ArchiveStore(open_state_db())
    with pytest.raises(TranscriptUnreadable):
        store.import_transcript("a", tmp_path / "nope.jsonl", event_id="e")
    bad = tmp_path / "bin.jsonl"
    bad.write_bytes(b"\x00\xff\xfe garbage")
    with pytest.raises(TranscriptUnreadable):
        store.import_transcript("a", bad, event_id="e")
    assert store.list() == []


def test_real_claude_code_transcript(corpus_dir: Path) -> None:
    path = corpus_dir / "claude-code" / "spotter-phx-server-short.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    store = ArchiveStore(open_state_db())
    man = store.import_transcript("agent-1", path, event_id="ev", provider="claude-code")
    assert man.provider == "claude-code" and man.message_count > 0
    msgs = store.messages(man.id)
    assert len(msgs) == man.message_count and msgs[0].seq == 1
    assert sum(man.counts.values()) == man.message_count


def test_the_file_decides_its_format_not_the_agents_provider(tmp_path: Path) -> None:
    """A Codex rollout (or a generic JSONL) closed for a `claude` agent was parsed as Claude
    Code and archived as 0 messages without any error; the content's format wins."""
    def line(kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": "2026-11-29T10:00:00.000Z", "type": kind,
                           "payload": payload})

    def msg(role: str, text: str) -> dict[str, object]:
        kind = "input_text" if role == "user" else "output_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    rollout = _generic(tmp_path / "rollout.jsonl", [
        line("session_meta", {"id": "c-1", "cwd": "/w", "cli_version": "0.128.0"}),
        line("response_item", msg("user", "we use ruff, not flake8")),
        line("response_item", msg("assistant", "Noted.")),
    ])
    store = ArchiveStore(open_state_db())
    codex = store.import_transcript("a", rollout, event_id="e1", provider="claude")
    assert codex.message_count == 2, codex
    generic = _generic(tmp_path / "g.jsonl", [json.dumps({"role": "user", "content": "hi"})])
    assert store.import_transcript("a", generic, event_id="e2",
                                   provider="claude").message_count == 1
