"""`load_transcript` and `detect_format`: read a transcript file of any supported format.

Formats: "claude-code" (Claude Code JSONL), "codex" (Codex rollout JSONL, modern envelope or
legacy bare items), "gemini" (Gemini CLI session: one JSON document, or the session JSONL
whose first line is its metadata), "opencode" (an opencode session exported from its
database by `wardian.transcripts.opencode.export_session`) and "generic"
(`{role, content}` JSONL). Detection looks at the first parseable lines only.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from wardian.transcripts.claude_code import parse_claude_code
from wardian.transcripts.codex import parse_codex
from wardian.transcripts.errors import TranscriptFormatError, TranscriptNotFound
from wardian.transcripts.gemini import is_gemini_metadata, parse_gemini, parse_gemini_jsonl
from wardian.transcripts.generic import parse_generic
from wardian.transcripts.models import Conversation
from wardian.transcripts.opencode import parse_opencode

__all__ = ["FORMATS", "detect_format", "load_transcript", "parse_text"]

FORMATS: tuple[str, ...] = ("claude-code", "codex", "gemini", "opencode", "generic")
_SNIFF_LINES = 50
_CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "ai-title",
        "last-prompt",
        "attachment",
    }
)
_CODEX_ENVELOPE = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})
_CODEX_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
    }
)


def _sniff_record(rec: dict[str, Any], index: int) -> str | None:
    if isinstance(rec.get("opencode_session"), dict) or "opencode_part" in rec:
        return "opencode"
    rtype = rec.get("type")
    if rtype in _CODEX_ENVELOPE and isinstance(rec.get("payload"), dict):
        return "codex"
    if rec.get("record_type") == "state":
        return "codex"
    if index == 0 and rtype is None and "id" in rec and ("instructions" in rec or "git" in rec):
        return "codex"
    if rtype in _CLAUDE_TYPES and (
        "sessionId" in rec or "uuid" in rec or "leafUuid" in rec or "messageId" in rec
    ):
        return "claude-code"
    if rtype in _CODEX_ITEMS and "sessionId" not in rec:
        return "codex"
    if isinstance(rec.get("role"), str) and "content" in rec:
        return "generic"
    if isinstance(rec.get("messages"), list) and ("sessionId" in rec or "projectHash" in rec):
        return "gemini"
    if is_gemini_metadata(rec):
        return "gemini"
    return None


def detect_text_format(text: str) -> str | None:
    """The format of transcript `text`, or None when no known shape is recognised."""
    stripped = text.lstrip()
    if not stripped:
        return None
    first_line = stripped.split("\n", 1)[0]
    try:
        json.loads(first_line)
    except ValueError:
        if stripped.startswith("{"):
            try:
                doc = json.loads(text)
            except ValueError:
                doc = None
            if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
                return "gemini"
    for index, line in enumerate(stripped.splitlines()[:_SNIFF_LINES]):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            found = _sniff_record(rec, index)
            if found:
                return found
    return None


def detect_format(path: str | Path) -> str:
    """Detect the transcript format of the file at `path`.

    Returns:
        one of `FORMATS`.

    Raises:
        TranscriptNotFound: the file cannot be read.
        TranscriptFormatError: no known format was recognised (the message names the
            accepted formats and shows the first line); `load_transcript` takes ``fmt=``
            to skip detection.
    """
    text, _ = _read(Path(path))
    return _detect_or_raise(text, Path(path))


_EXPECTED = "not a Claude Code, Codex, Gemini CLI or generic {role, content} JSONL transcript"
_SHOWN_CHARS = 80
"""How much of the first line an unrecognised-format error shows, in characters."""


def _detect_or_raise(text: str, path: Path) -> str:
    """The detected format of `text`; else say what was expected and show the first line.

    The message is for whoever gave the file (a CLI user cannot pass ``fmt=``).
    """
    found = detect_text_format(text)
    if found is None:
        first = next((line.strip() for line in text.splitlines() if line.strip()), None)
        if first is None:
            seen = "the file is empty"
        else:
            cut = first[:_SHOWN_CHARS] + ("…" if len(first) > _SHOWN_CHARS else "")
            seen = f"first line: {cut!r}"
        raise TranscriptFormatError(f"{_EXPECTED} ({seen})", source=str(path))
    return found


def parse_text(text: str, fmt: str) -> Conversation:
    """Normalise transcript `text` already known to be in format `fmt`.

    Raises:
        TranscriptFormatError: `fmt` is not one of `FORMATS`.
    """
    if fmt == "gemini":
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            return parse_gemini(doc)  # the single document
        if doc is not None and not isinstance(doc, dict):
            return Conversation(provider="gemini", malformed_lines=1)
        return parse_gemini_jsonl(text.splitlines())
    lines = text.splitlines()
    if fmt == "claude-code":
        return parse_claude_code(lines)
    if fmt == "codex":
        return parse_codex(lines)
    if fmt == "opencode":
        return parse_opencode(lines)
    if fmt == "generic":
        return parse_generic(lines)
    raise TranscriptFormatError(
        f"unknown transcript format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}"
    )


def load_transcript(path: str | Path, fmt: str | None = None) -> Conversation:
    """Read and normalise one transcript file (read-only).

    Args:
        path: the transcript file.
        fmt: one of `FORMATS`, or None to auto-detect.

    Returns:
        the Conversation, with `source_path` (absolute) and `source_sha256` set.
        Malformed lines are counted in `malformed_lines`, never fatal.

    Raises:
        TranscriptNotFound: the file cannot be read.
        TranscriptFormatError: `fmt` is not one of `FORMATS`, or (with ``fmt=None``) no
            known format was detected; pass ``fmt=`` one of `FORMATS` to skip detection.
    """
    p = Path(path)
    text, digest = _read(p)
    conv = parse_text(text, fmt or _detect_or_raise(text, p))
    conv.source_path = str(p.resolve())
    conv.source_sha256 = digest
    return conv


def _read(path: Path) -> tuple[str, str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptNotFound(
            f"cannot read transcript {path}: {exc.strerror or exc}",
            hint="check the path",
        ) from exc
    return data.decode("utf-8", "replace"), hashlib.sha256(data).hexdigest()
