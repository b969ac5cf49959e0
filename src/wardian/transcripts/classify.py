"""Classify user-role text: the human speaking, or something injected in the user role.

Coding-agent CLIs put much that is not human input into the user role: slash-command
echoes, skill prompts, system reminders, instruction files (AGENTS.md, CLAUDE.md,
`<user_instructions>`), environment blocks, compaction prompts, interrupt markers and tool
rejections (see ../shared/corpus/transcripts/FORMATS.md). They stay in the conversation with
a `kind` so a curator can ignore them.
"""

from __future__ import annotations

import re

__all__ = ["TOOL_REJECTION_MARKERS", "classify_user_text", "is_tool_rejection"]

_INTERRUPT = re.compile(r"^\s*\[Request interrupted by user[^\]]*\]\s*$")
_COMMAND_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_INJECTED_PREFIXES = (
    "<local-command-caveat>",
    "<system-reminder>",
    "<user_instructions>",
    "<environment_context>",
    "<session_context>",
    "<hook_context>",
    "<permissions instructions>",
    "<skills_instructions>",
    "<task-notification>",
    "<user-prompt-submit-hook>",
    "# AGENTS.md instructions for",
    "# CLAUDE.md",
    "<INSTRUCTIONS>",
    "Caveat: The messages below were generated",
    "Base directory for this skill:",
)
_COMPACTION_PREFIXES = (
    "This session is being continued from a previous conversation",
    "Your task is to create a detailed summary of the conversation",
)
TOOL_REJECTION_MARKERS = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action",
    "User rejected tool use",
)
_REFUSED_OUTPUT = re.compile(
    r"^\W*(?:exec command|command|patch|tool call|apply_patch)?\s*(?:was )?"
    r"(?:rejected|denied|declined|aborted) by (?:the )?user\b",
    re.IGNORECASE,
)
"""A short tool output saying the user refused the call (Codex approval denial)."""
"""Texts Claude Code writes into an error tool_result when the user refuses a tool call."""


def is_tool_rejection(text: str) -> bool:
    """True when a tool result is the CLI's "user refused this tool call" boilerplate."""
    if any(marker in text for marker in TOOL_REJECTION_MARKERS):
        return True
    return len(text) < 200 and bool(_REFUSED_OUTPUT.match(text))


def classify_user_text(text: str, *, is_meta: bool = False, is_compact: bool = False) -> str:
    """Return the kind of a user-role text: "text" when a human typed it, else why not.

    Args:
        text: the message text.
        is_meta: the source flagged it as injected (Claude Code `isMeta`).
        is_compact: the source flagged it as a compaction summary (`isCompactSummary`).

    Returns:
        "interrupt", "command", "compaction", "injected", "tool_rejection" or "text".
    """
    stripped = text.lstrip()
    if is_compact or stripped.startswith(_COMPACTION_PREFIXES):
        return "compaction"
    if _INTERRUPT.match(text):
        return "interrupt"
    if stripped.startswith(_COMMAND_PREFIXES):
        return "command"
    if is_meta or stripped.startswith(_INJECTED_PREFIXES):
        return "injected"
    if is_tool_rejection(stripped):
        return "tool_rejection"
    return "text"
