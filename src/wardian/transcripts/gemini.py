"""Gemini CLI session JSON (`~/.gemini/tmp/<hash>/chats/session-*.json`) → Conversation.

FORMATS.md "Gemini CLI": one JSON object with `messages[]` of type `user`, `gemini` or
`info`. User text is classified like other user-role text; gemini `content` is assistant
text; inline `toolCalls[]` become a summarised tool call plus its `functionResponse` output
(cut over 8 KiB; a call the user cancelled is a `tool_rejection`); `info` entries are
`notice`s; `thoughts` and `tokens` are dropped.
A malformed entry (not an object) is counted and skipped.
"""

from __future__ import annotations

from typing import Any

from wardian.transcripts._build import Builder, block_text
from wardian.transcripts.classify import classify_user_text
from wardian.transcripts.models import Conversation

__all__ = ["parse_gemini"]


def parse_gemini(doc: Any) -> Conversation:
    """Normalise a parsed Gemini session document."""
    conv = Conversation(provider="gemini")
    out = Builder()
    if not isinstance(doc, dict):
        conv.malformed_lines += 1
        return conv
    conv.session_id = doc.get("sessionId") if isinstance(doc.get("sessionId"), str) else None
    if isinstance(doc.get("projectHash"), str):
        conv.meta["project_hash"] = doc["projectHash"]
    models: list[str] = []
    for entry in doc.get("messages") or []:
        if not isinstance(entry, dict):
            conv.malformed_lines += 1
            continue
        ts = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
        mtype = entry.get("type")
        text = block_text(entry.get("content"))
        meta = {"id": entry["id"]} if isinstance(entry.get("id"), str) else {}
        if mtype == "user":
            out.add("user", classify_user_text(text), text, ts, meta)
        elif mtype == "gemini":
            model = entry.get("model")
            if isinstance(model, str) and model not in models:
                models.append(model)
            out.add("assistant", "text", text, ts, meta)
            for call in entry.get("toolCalls") or []:
                if not isinstance(call, dict):
                    conv.malformed_lines += 1
                    continue
                name = str(call.get("name") or "tool")
                cts = call.get("timestamp") if isinstance(call.get("timestamp"), str) else ts
                out.tool_call(name, call.get("args"), cts, {"call_id": call.get("id")})
                if call.get("status") == "cancelled":
                    out.tool_result(
                        "Tool call cancelled by the user.",
                        cts,
                        "tool_rejection",
                        meta={"call_id": call.get("id"), "tool": name},
                    )
                    continue
                out.tool_result(
                    _result_text(call.get("result")),
                    cts,
                    meta={"call_id": call.get("id"), "tool": name},
                )
        elif mtype in ("info", "error", "warning"):
            out.add("assistant", "notice", text, ts, meta)
    conv.messages = out.messages
    if models:
        conv.meta["models"] = models
    return conv


def _result_text(result: Any) -> str:
    parts: list[str] = []
    for item in result or []:
        if not isinstance(item, dict):
            continue
        response = (item.get("functionResponse") or {}).get("response") or {}
        if isinstance(response, dict):
            value = response.get("output", response.get("error"))
            parts.append(block_text(value))
    return "\n".join(p for p in parts if p)
