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
    "filePath",
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
MAX_STATE_CHARS = 4_000
"""A task-list or question tool call is kept whole up to this many characters."""
STATE_TOOLS = (
    "TodoWrite", "todowrite", "update_plan", "AskUserQuestion", "ask_user", "question")
"""Tools whose arguments are session state a curator reads (the agent's task list, its plan
steps, the question it asked the user): rendered one item per line, not summarised."""
_TODO_TOOLS = ("TodoWrite", "todowrite")
"""The `STATE_TOOLS` whose task list is under `todos` (Claude Code's, opencode's)."""


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


def state_text(name: str, args: Any) -> str | None:
    """The whole task list / plan / question of a `STATE_TOOLS` call, one item per line.

    ``TodoWrite`` (opencode ``todowrite``) ``{todos: [{content, status}]}`` and Codex
    ``update_plan {plan: [{step, status}], explanation}`` become ``Name:\n- [status] item``;
    ``AskUserQuestion`` (opencode ``question``) ``{questions: [{question, options: [{label,
    description}]}]}`` becomes
    ``AskUserQuestion:\n- question\n  - label: description``. Item texts are kept verbatim
    (a curator quotes them as evidence). None when the arguments have another shape.
    """
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    lines: list[str] = []
    items = args.get("todos") if name in _TODO_TOOLS else args.get("plan")
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                text = item.get("content") or item.get("step")
                if isinstance(text, str) and text.strip():
                    lines.append(f"- [{item.get('status') or 'pending'}] {text.strip()}")
        if isinstance(args.get("explanation"), str) and args["explanation"].strip():
            lines.insert(0, args["explanation"].strip())
        return f"{name}:\n" + "\n".join(lines) if lines or items == [] else None
    questions = args.get("questions")
    if isinstance(questions, list):
        for q in questions:
            if not isinstance(q, dict) or not isinstance(q.get("question"), str):
                continue
            lines.append(f"- {q['question'].strip()}")
            for opt in q.get("options") or []:
                if isinstance(opt, dict) and isinstance(opt.get("label"), str):
                    desc = opt.get("description")
                    lines.append(f"  - {opt['label']}" + (f": {desc}" if desc else ""))
        return f"{name}:\n" + "\n".join(lines) if lines else None
    return None


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
        self.call_names: dict[str, str] = {}
        """Tool name by call id, so a result can be read as what its call was."""

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
        """Append a tool call: ``Name(short args)``, or `state_text` for `STATE_TOOLS`."""
        call_id = (meta or {}).get("call_id")
        if isinstance(call_id, str):
            self.call_names[call_id] = name
        state = state_text(name, args) if name in STATE_TOOLS else None
        if state is not None and len(state) > MAX_STATE_CHARS:
            state = state[: MAX_STATE_CHARS - 1] + "…"
        self.add(
            "assistant",
            "tool_call",
            state or f"{name}({short_args(args)})",
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
