"""Claude Code session JSONL (`~/.claude/projects/<dir>/<sessionId>.jsonl`) → Conversation.

FORMATS.md "Claude Code": one record per line discriminated by `type`. Kept: `user`
(human text, tool results, injected/command/interrupt lines with their kind), `assistant`
(text blocks and summarised tool_use; `thinking` dropped; `AskUserQuestion` results are the
user's `answer`), `system/local_command` (as a
command), and `attachment/queued_command` (text typed while the agent was busy). Dropped:
`progress` (subagent chatter, hook progress), `summary`, `file-history-snapshot`,
`queue-operation` (dequeued text reappears as a user record), `ai-title`, `last-prompt`.
Records are kept in file order (the active-branch rebuild via `parentUuid` is not done:
sessions in the corpus are linear and slices start mid-chain).
"""

from __future__ import annotations

from typing import Any

from wardian.transcripts._build import Builder, block_text, json_objects
from wardian.transcripts.classify import classify_user_text, is_tool_rejection
from wardian.transcripts.models import Conversation

__all__ = ["parse_claude_code"]


def parse_claude_code(lines: list[str]) -> Conversation:
    """Normalise Claude Code JSONL lines; malformed lines are counted, never fatal."""
    conv = Conversation(provider="claude-code")
    out = Builder()
    models: list[str] = []
    for _, rec in json_objects(lines, conv):
        conv.session_id = conv.session_id or _str(rec.get("sessionId"))
        conv.cwd = conv.cwd or _str(rec.get("cwd"))
        kind = rec.get("type")
        ts = _str(rec.get("timestamp"))
        base = {"uuid": rec["uuid"]} if isinstance(rec.get("uuid"), str) else {}
        if rec.get("isSidechain"):
            base["sidechain"] = True
        try:
            if kind == "user":
                _user(out, rec, ts, base)
            elif kind == "assistant":
                model = _assistant(out, rec, ts, base)
                if model and model != "<synthetic>" and model not in models:
                    models.append(model)
            elif kind == "system" and rec.get("subtype") == "local_command":
                out.add("user", "command", block_text(rec.get("content")), ts, base)
            elif kind == "attachment":
                att = rec.get("attachment") or {}
                if isinstance(att, dict) and att.get("type") == "queued_command":
                    out.add("user", "queued", block_text(att.get("prompt")), ts, base)
        except (AttributeError, TypeError, KeyError):
            conv.malformed_lines += 1
    conv.messages = out.messages
    if models:
        conv.meta["models"] = models
    return conv


def _user(out: Builder, rec: dict[str, Any], ts: str | None, base: dict[str, Any]) -> None:
    msg = rec.get("message") or {}
    content = msg.get("content")
    is_meta = bool(rec.get("isMeta"))
    is_compact = bool(rec.get("isCompactSummary"))
    if isinstance(content, str):
        out.add(
            "user",
            classify_user_text(content, is_meta=is_meta, is_compact=is_compact),
            content,
            ts,
            base,
        )
        return
    for block in content or []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = str(block.get("text") or "")
            kind = classify_user_text(text, is_meta=is_meta, is_compact=is_compact)
            out.add("user", kind, text, ts, base)
        elif btype == "tool_result":
            text = block_text(block.get("content"))
            meta = {**base, "tool_use_id": block.get("tool_use_id")}
            if block.get("is_error"):
                meta["is_error"] = True
            if is_tool_rejection(text):
                out.tool_result(text, ts, "tool_rejection", meta)
            elif _is_answer(out, block):
                out.add("user", "answer", text, ts, meta)
            else:
                out.tool_result(text, ts, "tool_result", meta)
        elif btype == "image":
            out.add("user", "injected" if is_meta else "text", "[image]", ts, base)


def _assistant(
    out: Builder, rec: dict[str, Any], ts: str | None, base: dict[str, Any]
) -> str | None:
    msg = rec.get("message") or {}
    model = _str(msg.get("model"))
    meta = {**base}
    if msg.get("id"):
        meta["message_id"] = msg["id"]
    if model:
        meta["model"] = model
    synthetic = model == "<synthetic>" or bool(rec.get("isApiErrorMessage"))
    content = msg.get("content")
    if isinstance(content, str):
        out.add("assistant", "notice" if synthetic else "text", content, ts, meta)
        return model
    for block in content or []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            out.add(
                "assistant",
                "notice" if synthetic else "text",
                str(block.get("text") or ""),
                ts,
                meta,
            )
        elif btype == "tool_use":
            out.tool_call(
                str(block.get("name") or "tool"),
                block.get("input"),
                ts,
                {**meta, "call_id": block.get("id")},
            )
    return model


_QUESTION_TOOLS = frozenset({"AskUserQuestion"})


def _is_answer(out: Builder, block: dict[str, Any]) -> bool:
    """A successful result of the agent's question tool: the user's own answer."""
    name = out.call_names.get(str(block.get("tool_use_id")))
    return name in _QUESTION_TOOLS and not block.get("is_error")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
