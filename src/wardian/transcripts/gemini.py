"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.json` / `.jsonl`) →
Conversation.

Two layouts, one conversation:

* the single document (FORMATS.md "Gemini CLI", CLI ~0.23): one JSON object with
  `messages[]`;
* the session JSONL (CLI 0.61): a first line of metadata (`sessionId`, `projectHash`,
  `startTime`, `kind`), then one line per record, replayed in order the way the CLI reads
  its own file: a *message* (an object with a string `id`) is added, or replaces the
  earlier message of the same id in its place; ``{"$set": {...}}`` merges metadata, and
  its `messages` list, when present, replaces every message; ``{"$rewindTo": ID}`` drops
  message ID and every later one (all of them when ID is unknown). Lines that are not JSON
  objects are counted in `malformed_lines`.

Messages are of type `user`, `gemini` or `info`. User text is classified like other
user-role text (a `<session_context>` block is `injected`); a SessionStart hook's
`<hook_context>…</hook_context>` that ``gemini -p`` puts in front of the prompt becomes an
`injected` message of its own before the user's text. A user message holding only
`functionResponse` parts (0.61 repeats each tool result there) yields nothing: the result
is read from its call. gemini `content` is assistant text; inline `toolCalls[]` become a
summarised tool call plus its `functionResponse` output (cut over 8 KiB; a call the user
cancelled is a `tool_rejection`); `info` entries are `notice`s; `thoughts` and `tokens` are
dropped. A malformed entry (not an object) is counted and skipped.
"""

from __future__ import annotations

import json
from typing import Any

from wardian.transcripts._build import Builder, block_text
from wardian.transcripts.classify import classify_user_text
from wardian.transcripts.models import Conversation

__all__ = ["is_gemini_metadata", "parse_gemini", "parse_gemini_jsonl"]

_HOOK_OPEN, _HOOK_CLOSE = "<hook_context>", "</hook_context>"


def is_gemini_metadata(rec: dict[str, Any]) -> bool:
    """Whether a JSONL record is a Gemini session's metadata line (string `sessionId` and
    `projectHash`, no record `type`)."""
    return (isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str)
            and "type" not in rec)


def parse_gemini_jsonl(lines: list[str]) -> Conversation:
    """Normalise the lines of a Gemini session JSONL (module docstring: the replay rules)."""
    malformed = 0
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}  # insertion order = conversation order
    for line in lines:
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            malformed += 1
            continue
        if not isinstance(rec, dict):
            malformed += 1
            continue
        if isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in ids else 0
            for mid in ids[cut:]:
                del messages[mid]
        elif isinstance(rec.get("id"), str):
            messages[rec["id"]] = rec
        elif isinstance(rec.get("$set"), dict):
            update = rec["$set"]
            if isinstance(update.get("messages"), list):
                messages = {m["id"]: m for m in update["messages"]
                            if isinstance(m, dict) and isinstance(m.get("id"), str)}
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif is_gemini_metadata(rec):
            meta.update({k: v for k, v in rec.items() if k != "messages"})
            for m in rec.get("messages") or []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    messages[m["id"]] = m
        else:
            malformed += 1
    conv = parse_gemini({**meta, "messages": list(messages.values())})
    conv.malformed_lines += malformed
    if isinstance(meta.get("kind"), str):
        conv.meta["kind"] = meta["kind"]
    return conv


def _user(out: Builder, text: str, ts: str | None, meta: dict[str, Any]) -> None:
    """Add a user text, a leading `<hook_context>` block split off as `injected`."""
    stripped = text.lstrip()
    if stripped.startswith(_HOOK_OPEN) and _HOOK_CLOSE in stripped:
        end = stripped.index(_HOOK_CLOSE) + len(_HOOK_CLOSE)
        out.add("user", "injected", stripped[:end], ts, meta)
        text = stripped[end:].strip()
    out.add("user", classify_user_text(text), text, ts, meta)


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
            _user(out, text, ts, meta)
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
