"""Gemini CLI 0.61 session JSONL (`chats/session-<time>-<id>.jsonl`): a metadata line, message
lines (a message written again under the same id replaces the earlier one), ``{"$set": …}``
metadata updates (``$set.messages`` replaces every message) and ``{"$rewindTo": id}``.

The lines follow what the real 0.61 host wrote against the scripted endpoint (tests/hosts)
and its ``loadConversationRecord``; the texts are invented.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wardian.transcripts import detect_format, load_transcript

META = {"sessionId": "60aef343-9a75-4b31-af32-d7e0e8baf33c", "projectHash": "b1ec" * 16,
        "startTime": "2026-12-05T12:00:48.143Z", "lastUpdated": "2026-12-05T12:00:48.143Z",
        "kind": "main"}
CONTEXT: dict[str, Any] = {"id": "d049", "timestamp": "2026-12-05T12:00:48.143Z", "type": "user",
           "content": [{"text": "<session_context>\nThis is the Gemini CLI. We are setting up "
                                "the context for our chat.\n</session_context>"}]}
CALL: dict[str, Any] = {"id": "run_shell_command_1", "name": "run_shell_command",
        "args": {"command": "ruff check ."},
        "result": [{"functionResponse": {"id": "run_shell_command_1",
                                         "name": "run_shell_command",
                                         "response": {"output": "All checks passed!"}}}],
        "status": "success", "timestamp": "2026-12-05T12:00:48.459Z"}


def _user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-12-05T12:00:48.211Z", "type": "user",
            "content": [{"text": text}]}


def _gemini(mid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-12-05T12:00:48.335Z", "type": "gemini",
            "content": text, "thoughts": [], "model": "gemini-2.5-pro",
            "tokens": {"input": 10, "output": 5, "total": 15}, **extra}


def _write(path: Path, records: list[Any], *, extra: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _session(tmp_path: Path) -> Path:
    answer = _gemini("g1", "")
    return _write(tmp_path / "session-2026-12-05T12-00-60aef343.jsonl", [
        META,
        {"$set": {"messages": [CONTEXT], "lastUpdated": "2026-12-05T12:00:48.143Z"}},
        _user("u1", "From now on always run the linter with ruff before committing"),
        {"$set": {"lastUpdated": "2026-12-05T12:00:48.211Z"}},
        answer,  # written first without its tool call, then again under the same id with it
        {"$set": {"lastUpdated": "2026-12-05T12:00:48.335Z"}},
        {**answer, "toolCalls": [CALL]},
        {"id": "u2", "timestamp": "2026-12-05T12:00:48.460Z", "type": "user",
         "content": [{"functionResponse": CALL["result"][0]["functionResponse"]}]},
        _gemini("g2", "Ruff passes; I will run it before every commit."),
        {"$set": {"lastUpdated": "2026-12-05T12:00:48.468Z"}},
    ])


def test_the_jsonl_session_is_detected_and_read(tmp_path: Path) -> None:
    path = _session(tmp_path)
    assert detect_format(path) == "gemini"
    conv = load_transcript(path)
    assert (conv.provider, conv.session_id, conv.malformed_lines) == (
        "gemini", META["sessionId"], 0)
    assert conv.meta["project_hash"] == META["projectHash"]
    assert [(m.role, m.kind, m.text) for m in conv.messages] == [
        ("user", "injected", CONTEXT["content"][0]["text"]),
        ("user", "text", "From now on always run the linter with ruff before committing"),
        ("assistant", "tool_call", "run_shell_command(ruff check .)"),
        ("tool", "tool_result", "All checks passed!"),
        ("assistant", "text", "Ruff passes; I will run it before every commit."),
    ]
    assert conv.meta["models"] == ["gemini-2.5-pro"]


def test_set_messages_replaces_and_rewind_drops_the_tail(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [
        META,
        _user("u1", "first try"),
        _gemini("g1", "an answer that is rewound"),
        {"$rewindTo": "g1"},
        _gemini("g2", "the answer kept"),
        {"$set": {"summary": "a session"}},
    ], extra=("{not json", "[1, 2]"))
    conv = load_transcript(path)
    assert [m.text for m in conv.messages] == ["first try", "the answer kept"]
    assert conv.malformed_lines == 2
    replaced = _write(tmp_path / "r.jsonl", [
        META, _user("u1", "dropped by the $set"),
        {"$set": {"messages": [_user("u9", "the only message")]}},
    ])
    assert [m.text for m in load_transcript(replaced).messages] == ["the only message"]
    unknown = _write(tmp_path / "w.jsonl", [META, _user("u1", "all gone"), {"$rewindTo": "x"},
                                            _user("u2", "after")])
    assert [m.text for m in load_transcript(unknown).messages] == ["after"]


def test_the_hook_context_prepended_to_a_prompt_is_not_the_user_speaking(tmp_path: Path) -> None:
    """Gemini ``-p`` puts a SessionStart hook's additionalContext in front of the prompt in
    one text part: Wardian's own recall must not read as something the user said."""
    recall = ("<hook_context># Wardian memory · agent ada\n- stable: Always run ruff\n"
              "</hook_context>")
    path = _write(tmp_path / "h.jsonl", [META, _user("u1", f"{recall}\n\nsay hi")])
    conv = load_transcript(path)
    assert [(m.role, m.kind, m.text) for m in conv.messages] == [
        ("user", "injected", recall), ("user", "text", "say hi")]
    only = _write(tmp_path / "o.jsonl", [META, _user("u1", recall)])
    assert [(m.kind, m.text) for m in load_transcript(only).messages] == [("injected", recall)]


def test_the_metadata_line_alone_is_an_empty_session(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.jsonl", [META])
    assert detect_format(path) == "gemini"
    conv = load_transcript(path)
    assert conv.messages == [] and conv.malformed_lines == 0


def test_the_older_single_document_still_reads(tmp_path: Path) -> None:
    doc = {**META, "messages": [_user("u1", "keep docs in docs/"), _gemini("g1", "Noted.")]}
    path = tmp_path / "session-old.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert detect_format(path) == "gemini"
    assert [m.text for m in load_transcript(path).messages] == ["keep docs in docs/", "Noted."]
