"""Shared helpers for the normalisers: a message builder and tool-call summaries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from wardian.transcripts.models import Conversation, Message, excerpt

_ARG_KEYS = (
    "command",
    "cmd",
    "file_path",
    "path",
    "absolute_path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "skill",
)
MAX_ARGS_CHARS = 200
"""Tool-call arguments are summarised to at most this many characters."""


def json_objects(lines: list[str], conv: Conversation) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object line as (line index, object); blank lines are skipped, and lines
    that are not JSON objects are counted in `conv.malformed_lines` (never fatal)."""
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            conv.malformed_lines += 1
            continue
        if not isinstance(rec, dict):
            conv.malformed_lines += 1
            continue
        yield index, rec


def short_args(args: Any) -> str:
    """A one-line summary of tool arguments (a known key's value, else compact JSON)."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return _clip(args)
    if isinstance(args, dict):
        for key in _ARG_KEYS:
            value = args.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value.strip():
                return _clip(value)
        try:
            return _clip(json.dumps(args, ensure_ascii=False, sort_keys=True))
        except (TypeError, ValueError):
            return _clip(str(args))
    return _clip("" if args is None else str(args))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ARGS_CHARS else text[: MAX_ARGS_CHARS - 1] + "…"


def block_text(content: Any) -> str:
    """Flatten a tool-result/message content (string, list of blocks, dict) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict):
                if isinstance(item.get("text"), str):
                    parts.append(item["text"])
                elif item.get("type") == "image":
                    parts.append("[image]")
            elif isinstance(item, str):
                parts.append(item)
        return "\n".join(parts)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        if isinstance(content.get("output"), str):
            return str(content["output"])
        return json.dumps(content, ensure_ascii=False, sort_keys=True)
    return str(content)


class Builder:
    """Collects messages in order and numbers them 0..n-1."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def add(
        self,
        role: str,
        kind: str,
        text: str,
        timestamp: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Append one message (empty text is dropped)."""
        if not text or not text.strip():
            return
        self.messages.append(
            Message(len(self.messages), role, kind, text, _ts(timestamp), dict(meta or {}))
        )

    def tool_call(
        self, name: str, args: Any, timestamp: str | None, meta: dict[str, Any] | None = None
    ) -> None:
        """Append a summarised tool call: ``Name(short args)``."""
        self.add(
            "assistant",
            "tool_call",
            f"{name}({short_args(args)})",
            timestamp,
            {"tool": name, **(meta or {})},
        )

    def tool_result(
        self,
        text: str,
        timestamp: str | None,
        kind: str = "tool_result",
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Append a tool result, cut to an excerpt when over 8 KiB."""
        cut, original = excerpt(text)
        extra = dict(meta or {})
        if original is not None:
            extra["truncated_from_bytes"] = original
        self.add("tool", kind, cut, timestamp, extra)


def _ts(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
