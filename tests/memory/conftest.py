"""Fixtures shared by the memory tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wardian.memory.embedding import Embedder, model_files


@pytest.fixture
def light_and_reference(tmp_path: Path) -> tuple[Embedder, Any]:
    """The light tokenizer (`Embedder`, its vocabulary cache in `tmp_path`) and the packaged
    model's own `tokenizers.Tokenizer`, to compare ids; skips without `tokenizers`."""
    tokenizers = pytest.importorskip("tokenizers")
    files = model_files()
    assert files is not None
    embedder = Embedder.load(cache_dir=tmp_path)
    assert embedder is not None
    return embedder, tokenizers.Tokenizer.from_file(str(files[1]))
