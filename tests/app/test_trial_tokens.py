"""`usage_tokens`: the tokens a host reported, read from each adapter's usage shape."""

from __future__ import annotations

from typing import Any

import pytest

from wardian.app.trial import usage_tokens


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        # Claude Code: cache reads and writes are input too
        ({"input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 100,
          "cache_creation_input_tokens": 8, "modelUsage": {"x": {"inputTokens": 999}}},
         {"input": 120, "output": 40}),
        # Codex: cached input is part of input already
        ({"input_tokens": 2476, "cached_input_tokens": 2048, "output_tokens": 122},
         {"input": 2476, "output": 122}),
        # opencode
        ({"tokens": {"input": 300, "output": 20, "reasoning": 5}, "cost": 0.01},
         {"input": 300, "output": 20}),
        (None, None),
        ({"duration_ms": 12}, None),
        ({"input_tokens": "many", "output_tokens": -1}, None),
        ([1, 2], None),
    ],
)
def test_usage_tokens(usage: Any, tokens: dict[str, int] | None) -> None:
    assert usage_tokens(usage) == tokens
