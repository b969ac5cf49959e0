"""Negation- and word-order-aware comparison of two statements: does one contradict the other?

A statement is read as what it *prefers* and what it *rejects* (content words):

- "Use X, not Y" / "X instead of Y" / "X rather than Y" / "X over Y": prefers X, rejects Y;
- a clause led by "never", "don't", "do not", "no", "avoid", "stop", "without": rejects its
  words; any other clause prefers its words.

Two statements contradict when one prefers a key word the other rejects ("Never use npm" vs
"Use npm for installs"; "Use tabs, not spaces" vs "Use spaces, not tabs"), unless each
narrows the conflicting words with its own ("never rebase shared branches" vs "always rebase
your own feature branches": two subjects). Key words are
content words other than generic verbs ("use", "run", "make"…), so "Do not use yarn" does
not contradict "Use pnpm". Bag-of-words similarity cannot see either difference: both pairs
have the same words.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Stance", "contradicts", "stance"]

_NEGATOR = re.compile(
    r"^(?:never|don'?t|dont|do not|does not|doesn'?t|no|not|avoid|stop|without|nothing|"
    r"shouldn'?t|should not|must not|mustn'?t|can'?t|cannot|won'?t|will not|no longer)\b",
    re.IGNORECASE,
)
_CONTRAST = re.compile(
    r"\s*(?:,\s*|\s)(?:not|instead of|rather than|over|and not|but not|never)\s+",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"\s*(?:[,;:.!?]|\bbut\b|\band\b|\bthen\b)\s*", re.IGNORECASE)
_LEAD = re.compile(r"^(?:(?:ok(?:ay)?|yes|so|also|and|but|please|pls)\b[,.!]*\s+"
                   r"|(?:no|nope)\b(?:\s*[,.!]+\s*|\s*[\-–]\s+))+", re.IGNORECASE)
"""Interjections before a statement; the "no" of "no tabs" or "no-one" is its negation."""
_WORD = re.compile(r"[a-z0-9_./@#+-]+")
_GENERIC_WORDS = (
    "use using used uses run running make keep do does did go put add get set have has be is "
    "are was were the a an to of in on at for with from by it this that these those we our "
    "you your i my me they them always should must will would can could please pls just "
    "only also all any every each when if then than as so there here instead rather over "
    "not no never dont don't avoid stop without user agent"
)
_GENERIC = frozenset(_GENERIC_WORDS.split())


@dataclass(frozen=True)
class Stance:
    """What a statement prefers and rejects (key content words, lower-case)."""

    prefers: frozenset[str]
    rejects: frozenset[str]


def _keys(text: str) -> set[str]:
    return {w.strip(".-/") for w in _WORD.findall(text.lower())} - _GENERIC - {""}


@functools.lru_cache(maxsize=16_384)
def stance(text: str) -> Stance:
    """Read `text` as preferred and rejected key words (see the module docstring). Cached
    per text (a memory review compares each record with several others)."""
    prefers: set[str] = set()
    rejects: set[str] = set()
    body = _LEAD.sub("", text.strip())
    body = re.sub(r"^[A-Z][a-z]+(?: [a-z]+)?: ", "", body)  # a category label, if any
    for clause in _CLAUSE.split(body):
        clause = _LEAD.sub("", clause.strip())
        if not clause:
            continue
        parts = _CONTRAST.split(clause, maxsplit=1)
        if len(parts) == 2 and not _NEGATOR.match(clause):
            prefers |= _keys(parts[0])
            rejects |= _keys(parts[1])
        elif _NEGATOR.match(clause):
            rejects |= _keys(_NEGATOR.sub("", clause, count=1))
        else:
            prefers |= _keys(clause)
    return Stance(frozenset(prefers - rejects), frozenset(rejects))


SAME_SUBJECT = 0.5
"""Shared key words / the smaller statement's key words: at least this to be one subject."""


def contradicts(a: str, b: str) -> bool:
    """True when both are about one subject (`SAME_SUBJECT`) and one prefers a key word the
    other rejects."""
    sa, sb = stance(a), stance(b)
    ka, kb = sa.prefers | sa.rejects, sb.prefers | sb.rejects
    if not ka or not kb or len(ka & kb) / min(len(ka), len(kb)) < SAME_SUBJECT:
        return False
    a_rejects, a_prefers = sa.rejects & sb.prefers, sa.prefers & sb.rejects
    if not (a_rejects or a_prefers):
        return False
    if bool(a_rejects) != bool(a_prefers):
        # the side of each statement that holds the conflicting words; a word only one
        # statement has on that side narrows it: "never rebase shared branches" and
        # "always rebase your own feature branches" both narrow "rebase", two subjects
        side_a, side_b = (sa.rejects, sb.prefers) if a_rejects else (sa.prefers, sb.rejects)
        if (ka - kb) & side_a and (kb - ka) & side_b:
            return False
    return True
