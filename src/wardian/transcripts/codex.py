"""OpenAI Codex CLI rollouts → Conversation: the `{timestamp,type,payload}` envelope and the
legacy (~Sept 2025) bare format.

FORMATS.md "OpenAI Codex CLI". Kept: `response_item` messages (user/developer text classified;
AGENTS.md, `<environment_context>`, `<user_instructions>` and developer messages are
`injected`), `function_call`/`custom_tool_call`/`web_search_call` (summarised) and their
outputs (0.58 JSON `{output, metadata}` unwrapped; cut over 8 KiB; an approval the user
denied, "rejected by user", is a `tool_rejection`). `event_msg`
`user_message`/`agent_message` mirror the response items: they are used only when the same
text was not already taken from a response item (and vice versa). Dropped: `reasoning`,
`ghost_snapshot`, `token_count`, `turn_context` (its cwd/model go to the conversation).
"""

from __future__ import annotations

import json
from typing import Any

from wardian.transcripts._build import Builder, block_text, json_objects
from wardian.transcripts.classify import classify_user_text, is_tool_rejection
from wardian.transcripts.models import Conversation

__all__ = ["parse_codex"]

_DEDUP_WINDOW = 8


def parse_codex(lines: list[str]) -> Conversation:
    """Normalise Codex rollout lines (modern or legacy); malformed lines are counted."""
    conv = Conversation(provider="codex")
    out = Builder()
    recent: list[tuple[str, str, str]] = []  # (source, role, normalised text)
    models: list[str] = []
    legacy = False
    for index, rec in json_objects(lines, conv):
        try:
            if "payload" in rec and isinstance(rec.get("payload"), dict):
                _envelope(conv, out, rec, recent, models)
            elif index == 0 and "type" not in rec and "id" in rec:
                legacy = True
                conv.session_id = _str(rec.get("id"))
                conv.meta["started_at"] = _str(rec.get("timestamp"))
            elif rec.get("record_type") == "state":
                continue
            elif "type" in rec:
                legacy = True
                _item(conv, out, rec, None, recent)
        except (AttributeError, TypeError, KeyError):
            conv.malformed_lines += 1
    conv.messages = out.messages
    conv.meta["format"] = "codex-legacy" if legacy else "codex-rollout"
    if models:
        conv.meta["models"] = models
    return conv


def _envelope(
    conv: Conversation,
    out: Builder,
    rec: dict[str, Any],
    recent: list[tuple[str, str, str]],
    models: list[str],
) -> None:
    payload = rec["payload"]
    rtype = rec.get("type")
    ts = _str(rec.get("timestamp"))
    if rtype == "session_meta":
        conv.session_id = conv.session_id or _str(payload.get("id"))
        conv.cwd = conv.cwd or _str(payload.get("cwd"))
        if payload.get("cli_version"):
            conv.meta["cli_version"] = payload["cli_version"]
    elif rtype == "turn_context":
        conv.cwd = conv.cwd or _str(payload.get("cwd"))
        model = _str(payload.get("model"))
        if model and model not in models:
            models.append(model)
    elif rtype == "response_item":
        _item(conv, out, payload, ts, recent)
    elif rtype == "event_msg":
        ptype = payload.get("type")
        if ptype == "user_message":
            text = str(payload.get("message") or "")
            if not _mirrored(recent, "event", "user", text):
                out.add("user", classify_user_text(text), text, ts, {"source": "event_msg"})
        elif ptype == "agent_message":
            text = str(payload.get("message") or "")
            if not _mirrored(recent, "event", "assistant", text):
                out.add("assistant", "text", text, ts, {"source": "event_msg"})


def _item(
    conv: Conversation,
    out: Builder,
    item: dict[str, Any],
    ts: str | None,
    recent: list[tuple[str, str, str]],
) -> None:
    itype = item.get("type")
    if itype == "message":
        role = item.get("role")
        text = "\n".join(
            str(b.get("text") or "") for b in item.get("content") or [] if isinstance(b, dict)
        )
        if role == "assistant":
            if not _mirrored(recent, "item", "assistant", text):
                meta = {"phase": item["phase"]} if item.get("phase") else {}
                out.add("assistant", "text", text, ts, meta)
        elif role == "developer":
            out.add("user", "injected", text, ts, {"source_role": "developer"})
        elif role in ("user", "system"):
            kind = classify_user_text(text) if role == "user" else "injected"
            if kind == "text" and _mirrored(recent, "item", "user", text):
                return
            if kind == "injected" and conv.cwd is None and "<cwd>" in text:
                conv.cwd = text.split("<cwd>", 1)[1].split("</cwd>", 1)[0].strip() or None
            out.add("user", kind, text, ts)
    elif itype in ("function_call", "custom_tool_call"):
        args = item.get("arguments") if itype == "function_call" else item.get("input")
        out.tool_call(str(item.get("name") or "tool"), args, ts, {"call_id": item.get("call_id")})
    elif itype in ("function_call_output", "custom_tool_call_output"):
        text = _output_text(item.get("output"))
        kind = "tool_rejection" if is_tool_rejection(text) else "tool_result"
        out.tool_result(text, ts, kind, meta={"call_id": item.get("call_id")})
    elif itype == "web_search_call":
        out.tool_call("web_search", item.get("action"), ts)


def _output_text(output: Any) -> str:
    """Unwrap 0.58's JSON `{output, metadata}` and the legacy MCP `[{text}]` list."""
    if isinstance(output, str):
        stripped = output.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                data = json.loads(output)
            except ValueError:
                return output
            if isinstance(data, dict) and isinstance(data.get("output"), str):
                return str(data["output"])
            return block_text(data)
        return output
    return block_text(output)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _mirrored(recent: list[tuple[str, str, str]], source: str, role: str, text: str) -> bool:
    """True when the other source ("item" vs "event") already gave this text (consumed).

    Otherwise remember it, so its mirror from the other source is skipped later. Repeats
    from the same source (a user typing the same thing twice) are kept.
    """
    key = (role, _norm(text))
    for index, (src, rrole, rtext) in enumerate(recent):
        if src != source and (rrole, rtext) == key:
            del recent[index]
            return True
    recent.append((source, *key))
    del recent[:-_DEDUP_WINDOW]
    return False


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
