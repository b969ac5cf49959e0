"""Correct plain typos in record text ("anythning" → "anything", "liek" → "like").

A lower-case word of the record is corrected only when all of these hold:

- it is at least `MIN_TYPO_CHARS` letters and not an English word (pyspellchecker's
  English word-frequency list, which ships inside that package and loads offline);
- nothing else in the session (the agent's prose, tool calls and output) uses it: project
  names, identifiers and jargon the session uses ("jgive", "args", "repo") stay as written;
- exactly one common English word (at least `MIN_WORD_FREQUENCY`) is one edit away, tried
  in order: a letter added ("filterd" → "filtered"), two neighbours swapped ("liek" →
  "like"), then a letter dropped ("anythning" → "anything").

Deterministic: the same text and session give the same result. The evidence keeps the
user's words verbatim; only the record text is corrected.

A typo that is itself an English word (a "real-word" error: "alloy" typed for "allow") is
left as written, on purpose. Telling it from a meant word needs the sentence's grammar or
word pairs, which this rules curator does not have: the one signal it has, a rare word
with a far more common neighbour one edit away, picks the typo "alloy" → "allow" but just
as readily turns meant words into wrong ones ("node 20 or newer" → "or never", "prose" →
"prove", "coding" → "coming", "tasked" → "talked": on the shared corpus and the blind sets
it was wrong four times for each right one). A wrong correction silently changes what a
rule says; a kept typo reads badly but means what the user wrote, and the verbatim
evidence beside it shows the words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

__all__ = ["MIN_TYPO_CHARS", "MIN_WORD_FREQUENCY", "correct", "is_english_word", "session_words"]

MIN_TYPO_CHARS = 4
"""Shorter words ("n", "ow") are too ambiguous to correct."""
LONG_WORD_CHARS = 8
"""A word this long may have a stray letter anywhere ("anythning")."""
MIN_WORD_FREQUENCY = 5_000
"""A correction must be at least this common in the English word-frequency list."""

_WORD = re.compile(r"(?<![\w./@#`'’-])[a-z]+(?![\w/@#`'’-]|\.\w)")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_LETTER_RUN = re.compile(r"[a-z]+")
_VOWEL = re.compile(r"[aeiouy]")
"""A word without a vowel is a tool name or an abbreviation ("pnpm"), not a typo."""


@lru_cache(maxsize=1)
def _frequency() -> Any:
    from spellchecker import SpellChecker  # slow to load: only when a record needs it

    return SpellChecker(language="en", distance=1).word_frequency


MIN_ENGLISH_FREQUENCY = 50
"""A word this common in the English word-frequency list is a word, not a name."""


def is_english_word(word: str) -> bool:
    """True when lower-cased `word` is in the English word-frequency list at least
    `MIN_ENGLISH_FREQUENCY` times ("green", "optional", "moment"); names and jargon
    ("dayjs", "httpx", "toml") are not."""
    return bool(_frequency()[word.lower()] >= MIN_ENGLISH_FREQUENCY)


def session_words(texts: Iterable[str]) -> frozenset[str]:
    """The lower-cased words of `texts` (everything in the session but the user's words)."""
    words: set[str] = set()
    for text in set(texts):  # an agent repeating itself adds no words
        words.update(_LETTER_RUN.findall(text.lower()))
    return frozenset(words)


def _edits(word: str) -> tuple[set[str], set[str], set[str]]:
    """(letter added, neighbours swapped, letter dropped) variants of `word`, never touching
    its first letter (people rarely mistype it; "args" is not "rags"). A letter is dropped
    only when it doubles a neighbour ("ammend") or the word is long (`LONG_WORD_CHARS`):
    dropping one from a short unknown word is how names turn into words ("redis")."""
    splits = [(word[:i], word[i:]) for i in range(1, len(word) + 1)]
    added = {a + c + b for a, b in splits for c in _LETTERS}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1} - {word}
    dropped = {
        a + b[1:]
        for a, b in splits
        if b and (len(word) >= LONG_WORD_CHARS or b[0] == a[-1] or b[1:2] == b[0])
    }
    return added, swapped, dropped


def _fix(word: str, known: frozenset[str]) -> str:
    if len(word) < MIN_TYPO_CHARS or word in known or not _VOWEL.search(word):
        return word
    freq = _frequency()
    if freq[word] > 0:
        return word
    for group in _edits(word):
        found = sorted(c for c in group if freq[c] >= MIN_WORD_FREQUENCY)
        if found:
            return found[0] if len(found) == 1 else word
    return word


_OPENING = re.compile(r"^([A-Z])([a-z]+)(?=[\s,;:.!?]|$)")
"""The record's first word, capitalised by the rewriter ("Nevre push…"): checked as the
lower-case word the user typed."""


def correct(text: str, known: frozenset[str]) -> str:
    """`text` with its plain typos corrected; `known`: `session_words` of the session."""
    text = _OPENING.sub(
        lambda m: _fix((m.group(1) + m.group(2)).lower(), known).capitalize(), text
    )
    return _WORD.sub(lambda m: _fix(m.group(0), known), text)


