"""Transcript normalisers, one format at a time, on small transcripts written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import invoke
from wardian.transcripts import (
    MAX_TOOL_OUTPUT_BYTES,
    Message,
    TranscriptFormatError,
    TranscriptNotFound,
    detect_format,
    load_transcript,
)


def _jsonl(path: Path, records: list[object], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _claude(kind: str, i: int, **kw: object) -> dict[str, object]:
    return {
        "parentUuid": None if i == 0 else f"u{i - 1}",
        "uuid": f"u{i}",
        "sessionId": "s-1",
        "cwd": "/repo",
        "timestamp": f"2026-01-01T00:00:{i:02d}Z",
        "version": "2.1.0",
        "type": kind,
        **kw,
    }


def _user(i: int, content: object, **kw: object) -> dict[str, object]:
    return _claude("user", i, message={"role": "user", "content": content}, **kw)


def _assistant(i: int, block: dict[str, object], model: str = "claude-x") -> dict[str, object]:
    msg = {"id": "m1", "model": model, "role": "assistant", "content": [block]}
    return _claude("assistant", i, message=msg)


def test_claude_code_kinds_tool_summary_and_cut(tmp_path: Path) -> None:
    big = "x" * (MAX_TOOL_OUTPUT_BYTES * 3)
    path = _jsonl(
        tmp_path / "s.jsonl",
        [
            _user(0, "Use pnpm, not npm."),
            _assistant(1, {"type": "thinking", "thinking": "hmm", "signature": "S"}),
            _assistant(
                2,
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "pnpm test", "timeout": 5},
                },
            ),
            _user(3, [{"type": "tool_result", "tool_use_id": "t1", "content": big}]),
            _user(4, "<command-name>/model</command-name>"),
            _user(5, "Skill prompt text", isMeta=True),
            _user(6, [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
            _user(
                7,
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "is_error": True,
                        "content": "The user doesn't want to proceed with this tool use.",
                    }
                ],
            ),
            _user(8, "<system-reminder>be nice</system-reminder>"),
            _user(
                9,
                "This session is being continued from a previous conversation.",
                isCompactSummary=True,
            ),
            {"type": "summary", "summary": "A title", "leafUuid": "u9"},
            _assistant(10, {"type": "text", "text": "No response requested."}, "<synthetic>"),
        ],
        extra_lines=("{not json", "[1, 2]"),
    )
    assert detect_format(path) == "claude-code"
    conv = load_transcript(path)
    assert conv.provider == "claude-code"
    assert conv.session_id == "s-1" and conv.cwd == "/repo"
    assert conv.malformed_lines == 2
    got = [(m.role, m.kind) for m in conv.messages]
    assert got == [
        ("user", "text"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("user", "command"),
        ("user", "injected"),
        ("user", "interrupt"),
        ("tool", "tool_rejection"),
        ("user", "injected"),
        ("user", "compaction"),
        ("assistant", "notice"),
    ]
    assert [m.seq for m in conv.messages] == list(range(len(conv.messages)))
    assert conv.messages[1].text == "Bash(pnpm test)"
    cut = conv.messages[2]
    assert len(cut.text.encode()) <= MAX_TOOL_OUTPUT_BYTES
    assert cut.meta["truncated_from_bytes"] == len(big)
    assert "bytes of tool output cut" in cut.text
    assert conv.source_sha256 and len(conv.source_sha256) == 64


def test_codex_rollout_dedups_event_mirrors(tmp_path: Path) -> None:
    def line(kind: str, payload: dict[str, object]) -> dict[str, object]:
        return {"timestamp": "2026-05-04T14:42:00Z", "type": kind, "payload": payload}

    def msg(role: str, text: str) -> dict[str, object]:
        block = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": block, "text": text}]}

    path = _jsonl(
        tmp_path / "rollout.jsonl",
        [
            line("session_meta", {"id": "c-1", "cwd": "/w", "cli_version": "0.128.0"}),
            line("turn_context", {"cwd": "/w", "model": "gpt-5.5"}),
            line("response_item", msg("developer", "<permissions instructions>x")),
            line("response_item", msg("user", "# AGENTS.md instructions for /w\n<INSTRUCTIONS>")),
            line("response_item", msg("user", "<environment_context><cwd>/w</cwd>")),
            line("response_item", msg("user", "run the tests")),
            line("event_msg", {"type": "user_message", "message": "run the tests"}),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": "pytest -q"}),
                    "call_id": "c1",
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": json.dumps({"output": "3 passed", "metadata": {"exit_code": 0}}),
                },
            ),
            line("event_msg", {"type": "agent_message", "message": "All green."}),
            line("response_item", msg("assistant", "All green.")),
            line("response_item", msg("user", "run the tests")),
        ],
        extra_lines=("garbage",),
    )
    assert detect_format(path) == "codex"
    conv = load_transcript(path)
    assert (conv.session_id, conv.cwd, conv.malformed_lines) == ("c-1", "/w", 1)
    assert conv.meta["format"] == "codex-rollout"
    texts = [(m.role, m.kind, m.text) for m in conv.messages]
    assert texts == [
        ("user", "injected", "<permissions instructions>x"),
        ("user", "injected", "# AGENTS.md instructions for /w\n<INSTRUCTIONS>"),
        ("user", "injected", "<environment_context><cwd>/w</cwd>"),
        ("user", "text", "run the tests"),
        ("assistant", "tool_call", "exec_command(pytest -q)"),
        ("tool", "tool_result", "3 passed"),
        ("assistant", "text", "All green."),
        ("user", "text", "run the tests"),  # typed again: kept
    ]


def test_codex_legacy_format(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "legacy.jsonl",
        [
            {"id": "l-1", "timestamp": "2025-09-10T18:58:00Z", "instructions": None, "git": {}},
            {"record_type": "state"},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<user_instructions>rules"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n"}
                ],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "file tree hidden by default"}],
            },
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "ls"]}),
                "call_id": "a",
            },
            {"type": "function_call_output", "call_id": "a", "output": "README.md"},
        ],
    )
    assert detect_format(path) == "codex"
    conv = load_transcript(path)
    assert conv.meta["format"] == "codex-legacy"
    assert (conv.session_id, conv.cwd) == ("l-1", "/p")
    assert [m.kind for m in conv.messages] == [
        "injected",
        "injected",
        "text",
        "tool_call",
        "tool_result",
    ]
    assert conv.messages[3].text == "shell(bash -lc ls)"
    assert all(m.timestamp is None for m in conv.messages)


def test_gemini_session_json(tmp_path: Path) -> None:
    doc = {
        "sessionId": "g-1",
        "projectHash": "abc",
        "messages": [
            {
                "id": "1",
                "timestamp": "2026-01-15T20:51:00Z",
                "type": "user",
                "content": "keep docs in docs/",
            },
            {
                "id": "2",
                "timestamp": "2026-01-15T20:51:05Z",
                "type": "gemini",
                "content": "",
                "model": "gemini-2.5-flash",
                "toolCalls": [
                    {
                        "id": "c",
                        "name": "write_file",
                        "args": {"file_path": "docs/a.md"},
                        "result": [
                            {
                                "functionResponse": {
                                    "id": "c",
                                    "name": "write_file",
                                    "response": {"output": "ok"},
                                }
                            }
                        ],
                    }
                ],
            },
            {
                "id": "3",
                "timestamp": "2026-01-15T20:51:09Z",
                "type": "info",
                "content": "update available",
            },
            "not an object",
        ],
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert detect_format(path) == "gemini"
    conv = load_transcript(path)
    assert (conv.provider, conv.session_id, conv.malformed_lines) == ("gemini", "g-1", 1)
    assert [(m.role, m.kind, m.text) for m in conv.messages] == [
        ("user", "text", "keep docs in docs/"),
        ("assistant", "tool_call", "write_file(docs/a.md)"),
        ("tool", "tool_result", "ok"),
        ("assistant", "notice", "update available"),
    ]


def test_generic_jsonl(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "g.jsonl",
        [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "Use tabs."}]},
            {"role": "assistant", "content": "OK."},
            {"role": "tool", "content": "y" * (MAX_TOOL_OUTPUT_BYTES + 10)},
            {"role": "robot", "content": "?"},
        ],
        extra_lines=("{",),
    )
    assert detect_format(path) == "generic"
    conv = load_transcript(path)
    assert conv.malformed_lines == 2
    assert [(m.role, m.kind) for m in conv.messages] == [
        ("user", "injected"),
        ("user", "text"),
        ("assistant", "text"),
        ("tool", "tool_result"),
    ]
    assert len(conv.messages[3].text.encode()) <= MAX_TOOL_OUTPUT_BYTES


def test_fmt_override_and_errors(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "g.jsonl", [{"role": "user", "content": "hi there"}])
    assert load_transcript(path, fmt="generic").messages[0].text == "hi there"
    with pytest.raises(TranscriptFormatError):
        load_transcript(path, fmt="nope")
    with pytest.raises(TranscriptNotFound):
        load_transcript(tmp_path / "missing.jsonl")
    odd = tmp_path / "odd.txt"
    odd.write_text("hello\nworld\n", encoding="utf-8")
    with pytest.raises(TranscriptFormatError):
        detect_format(odd)


def test_message_json_round_trip() -> None:
    msg = Message(3, "user", "text", "hello", "2026-01-01T00:00:00Z", {"uuid": "u"})
    assert Message.from_json(msg.to_json()) == msg
    assert Message.from_json({"seq": 0, "role": "tool", "text": "x"}).kind == "text"


def test_unrecognised_file_says_what_was_expected(tmp_path: Path) -> None:
    """Not a transcript: name the accepted formats and show the first line; no `fmt=`, which
    only a Python caller can pass."""
    notes = tmp_path / "notes.md"
    notes.write_text("# Release notes\n\n- pinned the tag\n", encoding="utf-8")
    with pytest.raises(TranscriptFormatError) as caught:
        load_transcript(notes)
    assert str(caught.value) == (
        f"{notes}: not a Claude Code, Codex, Gemini CLI or generic {{role, content}} JSONL "
        "transcript (first line: '# Release notes')")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(TranscriptFormatError, match=r"JSONL transcript \(the file is empty\)"):
        detect_format(empty)
    long = tmp_path / "long.txt"
    long.write_text("x" * 500, encoding="utf-8")
    with pytest.raises(TranscriptFormatError, match=r"\(first line: 'x{80}…'\)$"):
        detect_format(long)


def test_cli_archive_that_is_not_a_transcript(tmp_path: Path) -> None:
    """Through the real CLI: a run on a markdown file is refused up front (exit 2, no run
    recorded), saying what was expected."""
    cli = CliRunner()
    notes = tmp_path / "notes.md"
    notes.write_text("# Release notes\n", encoding="utf-8")
    assert invoke(cli, "agent", "add", "a", "--provider", "codex").exit_code == 0
    result = invoke(
        cli, "automation", "run", "start", "memory-consolidation", "--agent", "a",
        "--assignments", '{"curator": {"target_type": "temporary_provider", '
        '"provider": "builtin"}}', "--archive", str(notes), "--wait")
    assert result.exit_code == 2
    assert invoke(cli, "automation", "runs", "--json").stdout.strip() == "[]"
    assert (f"{notes}: not a Claude Code, Codex, Gemini CLI or generic {{role, content}} "
            "JSONL transcript (first line: '# Release notes')") in result.output
    assert "fmt=" not in result.output
