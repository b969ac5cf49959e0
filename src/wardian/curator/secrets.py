"""The curator asks the shared scanner "does this look like a secret?".

The one secret scanner of every write path lives in `wardian.memory.secret_scan`
(detect-secrets plugins, token formats it lacks, password assignments, long random
tokens); the curator uses the same one, so what it proposes is what a commit accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from wardian.memory.secret_scan import ENTROPY_LIMIT, MIN_TOKEN_CHARS, contains_secret

__all__ = ["ENTROPY_LIMIT", "MIN_TOKEN_CHARS", "looks_secret", "secret_scanning"]


@contextmanager
def secret_scanning() -> Iterator[None]:
    """Kept for callers that batch `looks_secret` calls; the shared scanner needs no setup."""
    yield


def looks_secret(text: str) -> bool:
    """True when `text` holds something secret-shaped (`wardian.memory.secret_scan.scan`).

    Args:
        text: one candidate sentence (single or multi-line).
    """
    return contains_secret(text)
