"""Similarity between candidates and active records (rapidfuzz), with named thresholds.

Texts are normalised first: the category label ("Convention: ") is dropped, text is
lower-cased, punctuation removed, and common stop words and the rewriter's "the user" /
"the agent" dropped, so the comparison is over content words.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

__all__ = [
    "DUPLICATE_MAX_NEW_WORDS",
    "DUPLICATE_SCORE",
    "REMOVE_TOPIC_SCORE",
    "UPDATE_SCORE",
    "is_duplicate",
    "new_words",
    "normalise",
    "same_subject",
    "similarity",
    "topic_overlap",
]

DUPLICATE_SCORE = 90.0
"""token_set_ratio >= this, and at most `DUPLICATE_MAX_NEW_WORDS` content words the record
lacks: the candidate restates the record → skipped."""
SAME_SUBJECT_SCORE = 60.0
"""token_set_ratio >= this between two statements of one session that open on the same named
thing (`same_subject`): the user said it again in other words → one record."""
DUPLICATE_MAX_NEW_WORDS = 1
"""A near-identical candidate adding more new content words than this refines the record."""
UPDATE_SCORE = 70.0
"""token_set_ratio in [UPDATE_SCORE, DUPLICATE_SCORE): same subject, new content → `update`."""
REMOVE_TOPIC_SCORE = 60.0
"""partial/token_set ratio >= this between a `current` record and a completion statement
→ the checkpoint is shown finished → `remove`."""

_LABEL = re.compile(r"^[A-Z][a-z]+(?: [a-z]+)?: ")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "so",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "we",
        "our",
        "us",
        "user",
        "agent",
        "users",
        "agents",
        "should",
        "must",
        "will",
        "would",
        "can",
        "could",
        "do",
        "does",
        "did",
        "not",
        "no",
        "yes",
        "then",
        "than",
        "as",
        "if",
        "when",
        "also",
        "just",
        "please",
        "pls",
        "i",
        "you",
        "me",
        "my",
        "your",
    ]
)
_WORD = re.compile(r"[a-z0-9_./@#+-]+")


def normalise(text: str) -> str:
    """Lower-cased content words of `text`, label and stop words removed, original order."""
    text = _LABEL.sub("", text.strip()).lower()
    words = [w.strip(".-/") for w in _WORD.findall(text)]
    return " ".join(w for w in words if w and w not in _STOP)


def similarity(a: str, b: str) -> float:
    """token_set_ratio (0..100) of two already-normalised texts (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return float(fuzz.token_set_ratio(a, b))


def new_words(candidate: str, record: str) -> int:
    """How many content words of normalised `candidate` the normalised `record` lacks."""
    have = set(record.split())
    return sum(1 for w in dict.fromkeys(candidate.split()) if w not in have)


def is_duplicate(candidate: str, record: str) -> bool:
    """The candidate restates the record (both normalised): similar and adds nothing."""
    return (
        similarity(candidate, record) >= DUPLICATE_SCORE
        and new_words(candidate, record) <= DUPLICATE_MAX_NEW_WORDS
    )


def topic_overlap(a: str, b: str) -> float:
    """max(token_set_ratio, partial_ratio) (0..100) of two normalised texts."""
    if not a or not b:
        return 0.0
    return float(max(fuzz.token_set_ratio(a, b), fuzz.partial_ratio(a, b)))


_IDENTIFIER = re.compile(r"[_./#@-]|\d")


def same_subject(candidate: str, other: str) -> bool:
    """Two normalised statements of one session restate one request about one named thing.

    True when both open on the same identifier-like word (``apply_patch``, ``db/seeds.rb``,
    ``fw-005``: it holds ``_ . / - # @`` or a digit) and their token_set_ratio is at least
    `SAME_SUBJECT_SCORE`. Plain words ("use", "run") never count: "Use pnpm…" and "Use
    ruff…" are two rules.
    """
    a, b = candidate.split()[:1], other.split()[:1]
    if not a or a != b or not _IDENTIFIER.search(a[0]):
        return False
    return similarity(candidate, other) >= SAME_SUBJECT_SCORE
