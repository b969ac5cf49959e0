"""A long word costs the light tokenizer work in proportion to its length, not its square
(`wardian.memory.embedding`; operator trial of 2026-12-01: `memory save` of one
3,000-character word took 9 s of CPU and a recall with a 16,000-character word ran for
minutes), and the faster merge gives exactly the packaged tokenizer's ids (issue 19)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from wardian.memory.embedding import MAX_WORD_CHARS, Embedder, model_files

pytestmark = pytest.mark.skipif(model_files() is None, reason="wordllama is not installed")


class _Counting:
    """The embedder's vocabulary, counting the lookups made through it."""

    def __init__(self, inner: object) -> None:
        self.inner, self.lookups = inner, 0

    def get(self, piece: str, /) -> int | None:
        self.lookups += 1
        return self.inner.get(piece)  # type: ignore[attr-defined,no-any-return]


def _made_up_word(rng: random.Random, length: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-./" + "éüßø✓漢"
    return "".join(rng.choice(alphabet) for _ in range(length))


def _counted(tmp_path: Path) -> tuple[Embedder, _Counting]:
    embedder = Embedder.load(cache_dir=tmp_path)
    assert embedder is not None
    counting = _Counting(embedder._ids)
    embedder._ids = counting
    return embedder, counting


def test_lookups_grow_linearly_with_a_words_length(tmp_path: Path) -> None:
    embedder, counting = _counted(tmp_path)
    rng = random.Random(7)
    word = _made_up_word(rng, MAX_WORD_CHARS - 1)
    assert embedder.tokenise(word)
    # Every character, every neighbouring pair and two new pairs per merge: a few per
    # character. The pairwise rescan after each merge made it ~n*n/2 (over 30,000 here).
    assert counting.lookups <= 8 * len(word)


def test_a_word_past_the_cap_costs_no_more_than_one_at_the_cap(tmp_path: Path) -> None:
    embedder, counting = _counted(tmp_path)
    rng = random.Random(11)
    head = _made_up_word(rng, MAX_WORD_CHARS)
    embedder.tokenise(head)
    at_cap = counting.lookups
    counting.lookups = 0
    huge = head + _made_up_word(rng, 100_000)
    # The word is cut at the cap: the same ids as its first MAX_WORD_CHARS characters.
    assert embedder.tokenise(huge) == embedder.tokenise(head)
    assert counting.lookups <= at_cap
    assert embedder.embed(f"keep {huge} tidy") is not None


def test_the_heap_merge_gives_the_packaged_tokenizers_ids(
        light_and_reference: tuple[Embedder, Any]) -> None:
    embedder, reference = light_and_reference
    rng = random.Random(2026)
    # Runs of one letter exercise ties between equal pairs (the leftmost merges first).
    words = ["aaaaaaaaaaaaaaaaaaaa", "ababababababab", "zzzzzzqqqqqzzzz",
             "Mississippi-mississippi", "x" * (MAX_WORD_CHARS - 1)]
    words += [_made_up_word(rng, rng.randint(1, 120)) for _ in range(300)]
    for word in words:
        expected = reference.encode(word, add_special_tokens=False).ids
        assert embedder.tokenise(word) == expected, word
