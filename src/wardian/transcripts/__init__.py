"""Transcript normalisers: Claude Code, Codex (rollout and legacy), Gemini CLI, opencode
(sessions exported from its database by `wardian.transcripts.opencode`) and generic
`{role, content}` JSONL → one conversation format (`Conversation` of `Message`s).

A low-level package beside `memory`: it imports nothing above `wardian.config`.
Contract "Transcripts" (contracts.md); formats per ../shared/corpus/transcripts/FORMATS.md.
"""

from __future__ import annotations

from wardian.transcripts.classify import classify_user_text
from wardian.transcripts.errors import TranscriptFormatError, TranscriptNotFound
from wardian.transcripts.loader import FORMATS, detect_format, load_transcript, parse_text
from wardian.transcripts.models import (
    KINDS,
    MAX_TOOL_OUTPUT_BYTES,
    Conversation,
    Message,
)

__all__ = [
    "FORMATS",
    "KINDS",
    "MAX_TOOL_OUTPUT_BYTES",
    "Conversation",
    "Message",
    "TranscriptFormatError",
    "TranscriptNotFound",
    "classify_user_text",
    "detect_format",
    "load_transcript",
    "parse_text",
]
