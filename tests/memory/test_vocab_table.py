"""The memory-mapped vocabulary table of `wardian.memory.embedding` answers exactly as the
dict it was built from (issue 19: the embedder probes it instead of loading 32,000 pieces
per process), and a damaged table is rebuilt instead of trusted."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from wardian.memory.embedding import Embedder, _load_vocab, _VocabTable, model_files


def _made_up_vocab(size: int) -> dict[str, int]:
    rng = random.Random(7)
    alphabet = "abcdeféßøπ✓\u2581<>0x_"
    vocab: dict[str, int] = {}
    while len(vocab) < size:
        vocab["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))] = len(vocab)
    return vocab


def test_the_table_answers_as_the_dict(tmp_path: Path) -> None:
    vocab = _made_up_vocab(3000)
    path = tmp_path / "v.table"
    path.write_bytes(_VocabTable.build(vocab))
    table = _VocabTable(path)
    assert all(table.get(piece) == ident for piece, ident in vocab.items())
    rng = random.Random(8)
    for _ in range(3000):
        probe = "".join(rng.choice("abcdefgéz\u2581") for _ in range(rng.randint(0, 10)))
        assert table.get(probe) == vocab.get(probe), probe
    assert table.get("\udcff") is None  # a lone surrogate is no piece either


def _tokenizer_file(tmp_path: Path, vocab: dict[str, int]) -> Path:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"vocab": vocab}}), encoding="utf-8")
    return path


def test_a_damaged_table_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    vocab = _made_up_vocab(200)
    source = _tokenizer_file(tmp_path, vocab)
    cache = tmp_path / "cache"
    first = _load_vocab(source, cache)
    assert isinstance(first, dict)  # parsed, and the table written for the next process
    [table] = cache.glob("wordllama-vocab-*.table")
    assert isinstance(_load_vocab(source, cache), _VocabTable)
    whole = table.read_bytes()
    for damage in (b"", b"WVOCAB1\0" + b"\xff" * 4, b"not a table at all, no",
                   whole[:-3], whole + b"\0"):
        table.write_bytes(damage)
        again = _load_vocab(source, cache)
        assert isinstance(again, dict) and again == vocab
        assert isinstance(_load_vocab(source, cache), _VocabTable)


@pytest.mark.skipif(model_files() is None, reason="wordllama is not installed")
def test_the_packaged_vocabulary_tokenises_the_same_from_the_table(tmp_path: Path) -> None:
    files = model_files()
    assert files is not None
    vocab = json.loads(files[1].read_text(encoding="utf-8"))["model"]["vocab"]
    parsed = Embedder(*files, cache_dir=None)  # the dict, straight from the JSON
    Embedder(*files, cache_dir=tmp_path)  # writes the table
    mapped = Embedder(*files, cache_dir=tmp_path)
    assert isinstance(mapped._ids, _VocabTable)
    assert all(mapped._ids.get(piece) == ident for piece, ident in vocab.items())
    rng = random.Random(9)
    words = ["".join(rng.choice("aeioustrnlkmpçø✓-_/.0123") for _ in range(rng.randint(1, 14)))
             for _ in range(400)]
    text = " ".join(words)
    assert mapped.tokenise(text) == parsed.tokenise(text)
    assert mapped.embed(text) == parsed.embed(text)
