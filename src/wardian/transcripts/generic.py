"""Generic `{role, content}` JSONL → Conversation.

One JSON object per line with `role` (user, assistant, tool; system/developer are kept as
injected user-role text) and `content` (a string, or a list of `{type: text, text}`
blocks); optional `timestamp`. User text is classified like every other format's.
"""

from __future__ import annotations

from wardian.transcripts._build import Builder, block_text, json_objects
from wardian.transcripts.classify import classify_user_text
from wardian.transcripts.models import Conversation

__all__ = ["parse_generic"]


def parse_generic(lines: list[str]) -> Conversation:
    """Normalise generic JSONL lines; lines without a known role are counted as malformed."""
    conv = Conversation(provider="generic")
    out = Builder()
    for _, rec in json_objects(lines, conv):
        if not isinstance(rec.get("role"), str):
            conv.malformed_lines += 1
            continue
        role = rec["role"]
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        text = block_text(rec.get("content"))
        if role == "user":
            out.add("user", classify_user_text(text), text, ts)
        elif role == "assistant":
            out.add("assistant", "text", text, ts)
        elif role == "tool":
            out.tool_result(text, ts)
        elif role in ("system", "developer"):
            out.add("user", "injected", text, ts, {"source_role": role})
        else:
            conv.malformed_lines += 1
    conv.messages = out.messages
    return conv
