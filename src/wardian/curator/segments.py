"""Split human messages into candidate segments (exact substrings) and reject the unsavable.

Heuristics (named, so the module docstring of the package can list them):

- *paste detection*: a message that is mostly code, log or stack-trace lines is skipped
  whole; a segment with a code fence, a stack-trace frame or a high symbol ratio is skipped.
- *segmentation*: sentence ends (``.``/``!``/``?`` + space), blank lines and line breaks not
  followed by indentation (wrapped lines stay together); a segment over `MAX_SEGMENT_CHARS`
  is cut again at clause words ("so", "then", "and then", "also") and short pieces merged.
- *dictation*: a long segment with almost no punctuation (spoken and transcribed, or typed
  as one breathless line) is cut into clauses (`split_run_on`): at discourse words ("so",
  "then", "because", "also"…), before each new "we will…" and where transcription glued two
  sentences together ("documentsThen") or a new subject with its modal ("…to try others
  will try it"); a "which…" clause stays with the noun it describes.
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
    "is_for_the_present",
    "is_one_off",
    "is_one_time",
    "is_question",
    "mentions_home_path",
    "message_is_paste",
    "pasted_spans",
    "split_run_on",
    "split_segments",
]

MIN_SEGMENT_CHARS = 12
"""Shorter segments ("yes", "proceed") carry nothing durable."""
MAX_SEGMENT_CHARS = 320
"""Longer segments are cut at clause words so evidence stays a readable excerpt."""
RUN_ON_MIN_CHARS = 240
"""A segment at least this long…"""
RUN_ON_CHARS_PER_MARK = 100
"""…with fewer than one punctuation mark per this many characters is dictation."""
RUN_ON_MAX_CLAUSE_CHARS = 200
"""A "which…" clause is joined to the clause before it while both fit in this length."""
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


_COMPARATIVES = (
    "more", "less", "fewer", "older", "newer", "better", "worse", "later", "earlier", "rather",
    "other", "bigger", "smaller", "faster", "slower", "longer", "shorter", "higher", "lower",
    "larger", "greater",
)
_NOT_THAN = "".join(f"(?<!\\b{word} )" for word in _COMPARATIVES)
"""A "then" after a comparative is a "than" ("rather then on the total"): no clause starts."""
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[^\s(])|\n\s*\n|\n(?=[^\s])")
_CLAUSE = re.compile(
    r"\s(?=(?:so that's|so|" + _NOT_THAN + r"then|and then|also|and also|in parallel|but)\s)",
    re.IGNORECASE,
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
_PRESENT = re.compile(
    # a limit tied to the present: "not now", "don't deploy it now", "today", "this week",
    # "until friday", "during the freeze" (not "from now on", which starts a rule)
    r"\bnot (?:now|yet|today|tonight|this week(?:end)?)\b"
    r"|\b(?:do not|don'?t|dont|no\b(?! longer))\b[^.,;!?]{0,40}?\bnow\b(?! on\b)"
    r"|\b(?:today|tonight|tomorrow|at the moment)\b"
    r"|\bthis (?:week(?:end)?|morning|afternoon|evening|sprint|month)\b"
    r"|\buntil (?:(?:next )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week)"
    r"|tomorrow|the (?:release|freeze|demo|launch)|(?:the )?\d{1,2}(?:st|nd|rd|th)?\b|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
    r"|\b(?:during|in) (?:the )?(?:\w+ )?freeze\b"
    r"|\bif (?:you|the agent) (?:really )?(?:must|have to)\b|\bif need be\b",
    re.IGNORECASE,
)
_HOME_PATH = re.compile(r"(?:/Users/[^/\s]+/|/home/[^/\s]+/|~/|[A-Z]:\\Users\\)")


_FENCE = re.compile(r"```")
_PASTE_INTRO = re.compile(
    r"\b(?:here'?s|here is|here are|i get|i got|got|gives?|says?|said|prints?|printed|shows?|"
    r"output|logs?|errors?|warnings?|trace|readme|contributing|excerpt)\b[^\n]{0,40}:\s*$",
    re.IGNORECASE,
)
"""A line that introduces a paste ("CI said this on my last push, fyi:", "here's the log:")."""
_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\[?\d\d:\d\d:\d\d|"
    r"(?:WARN(?:ING)?|INFO|DEBUG|ERROR|TRACE|FATAL|CRITICAL|note|help|warning|error|hint|"
    r"info|debug)(?:\[[\w-]+\])?:\s|\w+(?:Warning|Error|Exception)\b)"
)
"""A line with a log level or timestamp prefix, or a warning/error class name."""


def pasted_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of `text` that are pasted material, not the user's own words: code
    fences, the block of lines after a line introducing a paste ("here's the output:"),
    and runs of two or more log-prefixed lines (a level, a timestamp)."""
    spans: list[tuple[int, int]] = []
    fences = [m.start() for m in _FENCE.finditer(text)]
    for i in range(0, len(fences), 2):
        end = fences[i + 1] + 3 if i + 1 < len(fences) else len(text)
        spans.append((fences[i], end))
    lines: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.split("\n"):
        lines.append((pos, pos + len(line), line))
        pos += len(line) + 1
    for n, (_, _, line) in enumerate(lines):
        if not _PASTE_INTRO.search(line) or n + 1 >= len(lines):
            continue
        k = n + 1
        while k < len(lines) and not lines[k][2].strip():
            k += 1
        last = k
        while last < len(lines) and lines[last][2].strip():
            last += 1
        if k < last:
            spans.append((lines[k][0], lines[last - 1][1]))
    run: list[tuple[int, int, str]] = []
    for item in [*lines, (len(text), len(text), "")]:
        if _LOG_LINE.match(item[2]):
            run.append(item)
            continue
        if len(run) >= 2:
            spans.append((run[0][0], run[-1][1]))
        run = []
    return spans


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
    """True when the segment limits itself to this one time or to the present
    (`is_for_the_present`)."""
    return is_one_time(text) or is_for_the_present(text)


def is_one_time(text: str) -> bool:
    """True when the segment limits itself to this one time ("just this once", "for now",
    "don't X yet")."""
    return bool(_ONE_OFF.search(text))


def is_for_the_present(text: str) -> bool:
    """True when the segment ties itself to the present: "not now", "don't X now", "today",
    "this week", "until friday", "during the freeze" — an instruction for this session, not
    a rule ("from now on" starts a rule; an open problem said "today" is still open)."""
    return bool(_PRESENT.search(text))


def mentions_home_path(text: str) -> bool:
    """True when the segment names a path in someone's home directory."""
    return bool(_HOME_PATH.search(text))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t\r\n>*-•":
        start += 1
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return start, end


_SOFT_CUT = re.compile(r",\s|\s[-–—]\s")
"""Where an over-long sentence without clause words is cut: after a comma or a spaced dash
(not between "put the" and "timestamps")."""


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
        while b - a > MAX_SEGMENT_CHARS:  # no clause word: cut at a comma or dash, else a space
            marks = [m.end() for m in _SOFT_CUT.finditer(text, a + MAX_SEGMENT_CHARS // 2,
                                                          a + MAX_SEGMENT_CHARS)]
            cut = marks[-1] if marks else text.rfind(" ", a, a + MAX_SEGMENT_CHARS)
            cut = cut if cut > a else a + MAX_SEGMENT_CHARS
            out.append((a, cut))
            a = cut
        out.append((a, b))
    return out


def split_segments(seq: int, text: str) -> list[Segment]:
    """Split one message into trimmed segments; each is an exact substring of `text`.

    A dictated run-on sentence (`is_run_on`) is cut into its clauses (`split_run_on`).
    """
    bounds = [0] + [m.end() for m in _BOUNDARY.finditer(text)] + [len(text)]
    out: list[Segment] = []
    for a, b in itertools.pairwise(bounds):
        s, e = _trim(text, a, b)
        spans = _clauses(text, s, e) if is_run_on(text[s:e]) else [(s, e)]
        for cs, ce in spans:
            for ps, pe in _pieces(text, cs, ce):
                ps, pe = _trim(text, ps, pe)
                if pe - ps >= MIN_SEGMENT_CHARS:
                    out.append(Segment(seq, ps, pe, text[ps:pe], len(out)))
    return out


_RUN_ON_CUT = re.compile(
    r"(?-i:(?<=[a-z])(?=[A-Z][a-z]))"  # transcription glued two sentences: "docsThen we"
    r"|(?<!\bwill)(?<!'ll)\s+(?=(?:so that'?s|so|" + _NOT_THAN + r"then|and then|also|and also|"
    r"in parallel|but|because|which|and as|and there|and the|that'?s where|till|until|we will|"
    r"we'll|we’ll|we are going to|(?:and )?(?:um+|uh+|erm))\s)",
    re.IGNORECASE,
)
_NEW_SUBJECT = re.compile(
    r"(?<=[a-z])\s+(?=(?:others|they|he|she|people|users|everyone|everybody|someone|nobody)"
    r"\s+(?:will|would|can|could|should|must|are going to|is going to)\s)",
    re.IGNORECASE,
)
"""Dictation gluing a second sentence on with its own subject and no mark ("…on staging to
try others will try it"): the new subject with its modal starts a clause…"""
_JOINS_CLAUSE = frozenset(
    re.findall(
        r"\S+",
        "that which who whom whose if when whenever where while because since as so and or but "
        "then than unless until till once whether before after though although what how why "
        "think know hope guess believe said say sure mean means hear heard",
    )
)
"""…unless the word before it already joins or embeds that clause ("…so others will…",
"…hope others will…")."""
_TRAILING_JOIN = re.compile(r"\s+(?:and|or|but|so|then)$", re.IGNORECASE)
_RELATIVE = re.compile(r"^which\b", re.IGNORECASE)
_MARKS = re.compile(r"[.,;:!?()]")


def is_run_on(text: str) -> bool:
    """True for a long segment with almost no punctuation (dictation, one breathless line)."""
    return (
        len(text) >= RUN_ON_MIN_CHARS
        and len(_MARKS.findall(text)) * RUN_ON_CHARS_PER_MARK < len(text)
    )


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The clauses of the run-on ``text[start:end]`` (see `split_run_on`)."""
    piece = text[start:end]
    subjects = {
        m.end()
        for m in _NEW_SUBJECT.finditer(piece)
        if piece[: m.start()].rsplit(None, 1)[-1].lower() not in _JOINS_CLAUSE
    }
    cuts = sorted({0, len(piece), *subjects, *(m.start() if m.end() == m.start() else m.end()
                                              for m in _RUN_ON_CUT.finditer(piece))})
    spans: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(cuts):
        a, b = _trim(text, start + a, start + b)
        tail = _TRAILING_JOIN.search(text, a, b)
        if tail is not None:  # "…the photo upload and" + "we will…": the "and" joins
            b = tail.start()
        if b <= a:
            continue
        if spans and _RELATIVE.match(text[a:b]) and b - spans[-1][0] <= RUN_ON_MAX_CLAUSE_CHARS:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans


def split_run_on(text: str) -> list[str]:
    """The clauses of a dictated run-on sentence (`is_run_on`), or ``[text]`` for any other.

    Cuts at discourse words ("so", "then", "because", "also", "till"…), before each new
    "we will…", before a new subject with its modal ("others will…", `_NEW_SUBJECT`), and
    where transcription glued two sentences ("docsThen we"); a clause
    opening with "which" describes the clause before it and is joined to it while the pair
    fits in `RUN_ON_MAX_CLAUSE_CHARS`.
    """
    if not is_run_on(text):
        return [text]
    return [text[a:b] for a, b in _clauses(text, 0, len(text))]
