"""Read ``CLAUDE.md`` / ``AGENTS.md`` / ``GEMINI.md``-style Markdown into durable bullets.

Agents' instruction files keep conventions as Markdown list items under headings. Each
*durable* bullet becomes one candidate record: its text (inline markup that only styles
is removed; code spans stay), the exact source line as evidence, and its 1-based line.

Not durable, and skipped with the reason counted: list items inside fenced code, HTML
comments or front matter; task items (``- [ ]`` / ``- [x]``: work, not knowledge); items
that are only a link (tables of contents); lead-ins that end with ``:`` (their sub-items
carry the content); items of fewer than two words; items over the record's text cap
(never cut silently). A bullet's continuation lines (indented, not a new item) are part
of its text; nested items are bullets of their own.

Pure: no database, no files (the caller reads the text). Spec: CLI.md ``garden memory import``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from wardian.memory.models import MAX_EVIDENCE_CHARS, MAX_TEXT_CHARS

__all__ = ["Bullet", "ParsedInstructions", "parse_instructions"]

_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(?P<body>\S.*)$")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(?P<title>.*?)[ \t#]*$")
_TASK = re.compile(r"^\[[ xX]\][ \t]+")
_ONLY_LINK = re.compile(r"^\[[^\]]*\]\([^)]*\)[.;,]?$|^<[^>]+>$|^https?://\S+$")
_STYLE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?!\w)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


@dataclass(frozen=True)
class Bullet:
    """One durable list item.

    Attributes:
        line: 1-based line of the item's marker.
        text: the record text (continuations joined with spaces, styling removed).
        evidence: the source line as written (trailing whitespace removed).
        heading: the nearest heading above it, or None.
    """

    line: int
    text: str
    evidence: str
    heading: str | None


@dataclass
class ParsedInstructions:
    """What `parse_instructions` found: the durable bullets and why others were skipped."""

    bullets: list[Bullet] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def _plain(text: str) -> str:
    """Inline markup that only styles removed (bold, italics, link targets)."""
    text = _LINK.sub(r"\1", text)
    previous = None
    while previous != text:
        previous = text
        text = _STYLE.sub(lambda m: m.group(2) or m.group(3) or "", text)
    return " ".join(text.split())


def parse_instructions(text: str) -> ParsedInstructions:
    """The durable bullets of a Markdown instruction file (see the module doc).

    Args:
        text: the file's text (any newline convention; a BOM is ignored).
    """
    lines = text.lstrip("\ufeff").splitlines()
    out = ParsedInstructions()
    heading: str | None = None
    fence: str | None = None
    in_comment = False
    index = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for end in range(1, len(lines)):
            if lines[end].strip() in {"---", "..."}:
                index = end + 1
                break
    while index < len(lines):
        line = lines[index]
        index += 1
        fenced = _FENCE.match(line)
        if fence is not None:
            if fenced and fenced.group(1)[0] == fence[0] and len(fenced.group(1)) >= len(fence):
                fence = None
            elif _ITEM.match(line):
                out.skipped["in code"] += 1
            continue
        if fenced:
            fence = fenced.group(1)
            continue
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            if _ITEM.match(line):
                out.skipped["in a comment"] += 1
            continue
        title = _HEADING.match(line)
        if title:
            heading = _plain(title.group("title")) or None
            continue
        item = _ITEM.match(line)
        if not item:
            continue
        depth = len(item.group("indent").expandtabs(4))
        parts = [item.group("body")]
        while index < len(lines):
            follow = lines[index]
            if not follow.strip() or _ITEM.match(follow) or _FENCE.match(follow) \
                    or _HEADING.match(follow):
                break
            if len(follow) - len(follow.lstrip()) <= depth:
                break
            parts.append(follow.strip())
            index += 1
        body = " ".join(parts).strip()
        reason = _skip_reason(body)
        if reason:
            out.skipped[reason] += 1
            continue
        plain = _plain(body)
        evidence = line.rstrip()
        if len(plain) > MAX_TEXT_CHARS or len(evidence) > MAX_EVIDENCE_CHARS:
            out.skipped["over the text limit"] += 1
            continue
        number = index - len(parts) + 1
        out.bullets.append(Bullet(number, plain, evidence, heading))
    return out


def _skip_reason(body: str) -> str | None:
    if _TASK.match(body):
        return "a task item"
    if _ONLY_LINK.match(body.strip()):
        return "only a link"
    plain = _plain(body)
    if plain.endswith(":"):
        return "a lead-in"
    if len(re.findall(r"\w+", plain)) < 2:
        return "fewer than two words"
    return None
