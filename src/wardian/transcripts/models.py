"""The one conversation format every transcript normaliser produces.

Contract "Transcripts" (contracts.md): `Message(seq, role, kind, text, timestamp, meta)` and
`Conversation(provider, session_id, cwd, source_path, source_sha256, malformed_lines,
messages)`. Plain dataclasses (no pydantic) keep this package light; `to_json`/`from_json`
give the dict form used in archives and in the curator payload.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "KINDS",
    "MAX_TOOL_OUTPUT_BYTES",
    "ROLES",
    "Conversation",
    "Message",
    "Role",
    "excerpt",
]

Role = Literal["user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("user", "assistant", "tool")

KINDS: tuple[str, ...] = (
    "text",  # human prose (role user) or assistant prose
    "tool_call",  # assistant asked for a tool: "Name(short args)"
    "tool_result",  # the tool's output (role tool), cut to an excerpt over 8 KiB
    "tool_rejection",  # the user refused a tool call (Claude Code boilerplate + reason,
    # Codex "rejected by user" output, Gemini cancelled call)
    "answer",  # the user's answer to the agent's question tool (Claude AskUserQuestion)
    "injected",  # isMeta / skill prompts / system reminders / AGENTS.md / environment
    "command",  # slash-command echo and local command output
    "interrupt",  # "[Request interrupted by user…]"
    "compaction",  # compaction prompt or continuation summary in the user role
    "queued",  # text typed while the agent was busy (Claude Code queued_command)
    "notice",  # client-generated notices (Gemini info, Claude `<synthetic>`)
)
"""Known message kinds; only user `text` is treated as the human speaking."""

MAX_TOOL_OUTPUT_BYTES = 8 * 1024
"""Tool output longer than this (UTF-8 bytes) is cut to an excerpt."""

_HEAD_BYTES = 6 * 1024
_TAIL_BYTES = 1 * 1024


def excerpt(text: str, limit_bytes: int = MAX_TOOL_OUTPUT_BYTES) -> tuple[str, int | None]:
    """Cut `text` to head + marker + tail when it is over `limit_bytes` UTF-8 bytes.

    Args:
        text: the full tool output.
        limit_bytes: the cap in bytes (default 8 KiB).

    Returns:
        (possibly cut text, original size in bytes if cut else None). The result is always
        at most `limit_bytes` bytes long.
    """
    raw = text.encode("utf-8")
    if len(raw) <= limit_bytes:
        return text, None
    head_n = min(_HEAD_BYTES, limit_bytes * 3 // 4)
    tail_n = min(_TAIL_BYTES, limit_bytes // 8)
    head = raw[:head_n].decode("utf-8", "ignore")
    tail = raw[-tail_n:].decode("utf-8", "ignore") if tail_n else ""
    cut = len(raw) - len(head.encode()) - len(tail.encode())
    return f"{head}\n[… {cut} bytes of tool output cut …]\n{tail}", len(raw)


@dataclass(frozen=True)
class Message:
    """One normalised conversation message.

    Attributes:
        seq: position in the conversation, 0..n-1.
        role: "user", "assistant" or "tool".
        kind: one of `KINDS` (unknown kinds are allowed when reading archives).
        text: the message text (tool calls summarised; tool output at most 8 KiB).
        timestamp: ISO-8601 UTC when the source had one, else None.
        meta: small source details (tool name, call id, uuid, model, truncated size…).
    """

    seq: int
    role: str
    kind: str
    text: str
    timestamp: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The dict form used in archives and in the curator payload."""
        return {
            "seq": self.seq,
            "role": self.role,
            "kind": self.kind,
            "text": self.text,
            "timestamp": self.timestamp,
            "meta": dict(self.meta),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Message:
        """Build a Message from `to_json` output (missing optional keys tolerated)."""
        return Message(
            seq=int(data["seq"]),
            role=str(data["role"]),
            kind=str(data.get("kind") or "text"),
            text=str(data.get("text") or ""),
            timestamp=data.get("timestamp"),
            meta=dict(data.get("meta") or {}),
        )


@dataclass
class Conversation:
    """A whole normalised transcript.

    Attributes:
        provider: "claude-code", "codex", "gemini", "opencode" or "generic".
        session_id: the tool's session id when recorded.
        cwd: the session's working directory when recorded.
        source_path: the file read (absolute), or None.
        source_sha256: hex SHA-256 of the file bytes, or None.
        malformed_lines: lines (or entries) that could not be parsed and were skipped.
        messages: the conversation, seq 0..n-1.
        meta: format details (e.g. {"format": "codex-legacy", "model": …}).
    """

    provider: str
    session_id: str | None = None
    cwd: str | None = None
    source_path: str | None = None
    source_sha256: str | None = None
    malformed_lines: int = 0
    messages: list[Message] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the whole conversation."""
        return {
            "provider": self.provider,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "source_path": self.source_path,
            "source_sha256": self.source_sha256,
            "malformed_lines": self.malformed_lines,
            "meta": dict(self.meta),
            "messages": [m.to_json() for m in self.messages],
        }
