"""Split human messages into candidate segments (exact substrings) and reject the unsavable.

Heuristics (named, so the module docstring of the package can list them):

- *paste detection*: a message that is mostly code, log or stack-trace lines is skipped
  whole; a segment with a code fence, a stack-trace frame or a high symbol ratio is skipped.
- *segmentation*: sentence ends (``.``/``!``/``?`` + space), blank lines and line breaks not
  followed by indentation (wrapped lines stay together); a segment over `MAX_SEGMENT_CHARS`
  is cut again at clause words ("so", "then", "and then", "also") and short pieces merged.
- *question*: a segment ending in ``?`` (or starting with a question word and no directive).
- *one-off*: "just this once", "for now", "this time", "temporarily", "for this task",
  "do not X yet" (a hold until later, not a standing rule).
- *personal path*: a home-directory path (``/Users/…``, ``/home/…``, ``~/``) is about the
  user's machine, not the project.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

__all__ = [
    "MAX_SEGMENT_CHARS",
    "MIN_SEGMENT_CHARS",
    "Segment",
    "is_code_or_log",
    "is_one_off",
    "is_question",
    "mentions_home_path",
    "message_is_paste",
    "split_segments",
]

MIN_SEGMENT_CHARS = 12
"""Shorter segments ("yes", "proceed") carry nothing durable."""
MAX_SEGMENT_CHARS = 320
"""Longer segments are cut at clause words so evidence stays a readable excerpt."""
PASTE_DOCUMENT_CHARS = 1_200
PASTE_DOCUMENT_LINES = 12
"""A message this long with this many unindented lines is a pasted document."""
PASTE_CODE_LINE_RATIO = 0.4
"""A message with at least 5 lines, this share of them code/log-like, is a paste."""


@dataclass(frozen=True)
class Segment:
    """A candidate excerpt: `text == message_text[start:end]` always holds."""

    seq: int
    start: int
    end: int
    text: str
    index: int  # position of the segment within its message


_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[^\s(])|\n\s*\n|\n(?=[^\s])")
_CLAUSE = re.compile(
    r"\s(?=(?:so that's|so|then|and then|also|and also|in parallel|but)\s)", re.IGNORECASE
)
_CODE_LINE = re.compile(
    r"^\s*(?:at\s+\S+\s*\(|File \"|Traceback|\w+Error\b|[{}\[\]();]+\s*$|def |class |"
    r"import |from \S+ import|return\b|end\s*$|[$#>]\s*\w+.*\s[-|]|\d{2}:\d{2}:\d{2}|"
    r"[│└├─~^]+|\s{4,}\S)"
)
_TRACE = re.compile(
    r"(?:\bat \S+ \(\S+:\d+:\d+\)|\.\w{1,4}:\d+:\d+|Traceback \(most recent|"
    r"^\s*File \".*\", line \d+|\w+Error: |\w+Exception\b|:\d+:in [`'])",
    re.MULTILINE,
)
_QUESTION_START = re.compile(
    r"^(?:what|why|how|where|when|which|who|is|are|was|were|(?:do|does|did)(?! not\b)|can|"
    r"could|would|"
    r"will|shall|should we|should i|any idea|isn't|aren't|wdyt)\b",
    re.IGNORECASE,
)
_ONE_OFF = re.compile(
    r"\b(?:just this once|only this once|for now|this time|just for this|for this (?:task|"
    r"response|answer|one|run|session)|temporar(?:y|ily)|right now|for the moment|in this "
    r"response)\b|\b(?:do not|don'?t|dont|not) (?:\w+ ){1,3}yet\b",
    re.IGNORECASE,
)
_HOME_PATH = re.compile(r"(?:/Users/[^/\s]+/|/home/[^/\s]+/|~/|[A-Z]:\\Users\\)")


def message_is_paste(text: str) -> bool:
    """True when a message is mostly pasted code, logs or a stack trace, or is a pasted
    document (long, with many separate lines: an assignment, a spec, a README)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    logical = [ln for ln in lines if not ln[:1].isspace()]
    if len(text) >= PASTE_DOCUMENT_CHARS and len(logical) >= PASTE_DOCUMENT_LINES:
        return True
    if len(lines) < 5:
        return bool(_TRACE.search(text)) and len(text) > 200
    code = sum(1 for ln in lines if _CODE_LINE.match(ln))
    return code / len(lines) >= PASTE_CODE_LINE_RATIO


def is_code_or_log(text: str) -> bool:
    """True when a segment is code, log output or a stack-trace fragment."""
    if "```" in text or _TRACE.search(text):
        return True
    symbols = sum(1 for ch in text if ch in "{}[]();=<>$|\\")
    return len(text) > 0 and symbols / len(text) > 0.08


_TAG_QUESTION = re.compile(
    r",?\s*(?:right|correct|no|yes)\?(?:\s*\(.*\))?$", re.IGNORECASE | re.DOTALL
)


def is_question(text: str) -> bool:
    """True when a segment asks rather than states.

    A statement with a tag question ("…, right?") is a statement seeking confirmation,
    not a question.
    """
    stripped = text.strip()
    if _TAG_QUESTION.search(stripped) and not _QUESTION_START.match(stripped):
        return False
    stripped = stripped.rstrip(")\"' ")
    return stripped.endswith("?") or bool(_QUESTION_START.match(stripped))


def is_one_off(text: str) -> bool:
    """True when the segment limits itself to this one time."""
    return bool(_ONE_OFF.search(text))


def mentions_home_path(text: str) -> bool:
    """True when the segment names a path in someone's home directory."""
    return bool(_HOME_PATH.search(text))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t\r\n>*-•":
        start += 1
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return start, end


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut an over-long span at clause words, merging short neighbours back together."""
    if end - start <= MAX_SEGMENT_CHARS:
        return [(start, end)]
    cuts = [start] + [start + m.start() for m in _CLAUSE.finditer(text[start:end])] + [end]
    spans: list[tuple[int, int]] = []
    cur = cuts[0]
    for nxt in cuts[1:]:
        if nxt - cur >= MAX_SEGMENT_CHARS // 3 or nxt == end:
            spans.append((cur, nxt))
            cur = nxt
    out: list[tuple[int, int]] = []
    for a, b in spans:
        while b - a > MAX_SEGMENT_CHARS:  # no clause word: hard cut at a space
            cut = text.rfind(" ", a, a + MAX_SEGMENT_CHARS)
            cut = cut if cut > a else a + MAX_SEGMENT_CHARS
            out.append((a, cut))
            a = cut
        out.append((a, b))
    return out


def split_segments(seq: int, text: str) -> list[Segment]:
    """Split one message into trimmed segments; each is an exact substring of `text`."""
    bounds = [0] + [m.end() for m in _BOUNDARY.finditer(text)] + [len(text)]
    out: list[Segment] = []
    for a, b in itertools.pairwise(bounds):
        s, e = _trim(text, a, b)
        for ps, pe in _pieces(text, s, e):
            ps, pe = _trim(text, ps, pe)
            if pe - ps >= MIN_SEGMENT_CHARS:
                out.append(Segment(seq, ps, pe, text[ps:pe], len(out)))
    return out
