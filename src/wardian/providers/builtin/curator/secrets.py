"""The one place the curator asks "does this look like a secret?".

Uses detect-secrets' maintained plugins: every default plugin except the two high-entropy
ones (their ad-hoc line mode flags ordinary English words), plus the Base64 entropy
plugin's own Shannon-entropy measure applied only to long token-shaped words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

__all__ = ["ENTROPY_LIMIT", "MIN_TOKEN_CHARS", "looks_secret", "secret_scanning"]

MIN_TOKEN_CHARS = 20
"""Only words at least this long are entropy-checked."""
ENTROPY_LIMIT = 4.0
"""Shannon entropy (bits/char) above which a long mixed token counts as a secret."""

_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{" + str(MIN_TOKEN_CHARS) + ",}")
_ENTROPY_PLUGINS = ("Base64HighEntropyString", "HexHighEntropyString")
_PLAIN_SECRET = re.compile(
    r"\b(?:password|passwd|pwd|passphrase|passcode|api[_ -]?key|secret(?:[_ -]?key)?|"
    r"access[_ -]?token|auth[_ -]?token)\b\s*(?:is|was|=|:|to)\s*[\"'`]?"
    r"(?!(?:in|on|at|the|a|an|set|stored|kept|saved|managed|required|not|now|still|"
    r"configured|available|missing|empty|wrong|correct|rotated|changed|here|there)\b)"
    r"([^\s\"'`]{4,})",
    re.IGNORECASE,
)
"""A plain password or key given in prose ("the password is X", "passwd=X"): detect-secrets'
keyword plugin looks for code-like assignments and misses these."""


@lru_cache(maxsize=1)
def _plugin_names() -> tuple[str, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    names = {cls.__name__ for cls in classes}
    return tuple(sorted(n for n in names if n not in _ENTROPY_PLUGINS))


@contextmanager
def secret_scanning() -> Iterator[None]:
    """Configure detect-secrets once for a batch of `looks_secret` calls."""
    from detect_secrets.settings import transient_settings

    with transient_settings({"plugins_used": [{"name": n} for n in _plugin_names()]}):
        yield


def looks_secret(text: str) -> bool:
    """True when `text` holds something secret-shaped (call inside `secret_scanning()`).

    Args:
        text: one candidate sentence (single or multi-line).
    """
    from detect_secrets.core.scan import scan_line
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    if _PLAIN_SECRET.search(text):
        return True
    for line in text.splitlines() or [text]:
        if any(True for _ in scan_line(line)):
            return True
        for token in _TOKEN.findall(line):
            if not (re.search(r"\d", token) and re.search(r"[A-Za-z]", token)):
                continue
            if "/" in token.strip("/") and token.count("/") >= 2:
                continue  # a path, not a key
            if Base64HighEntropyString().calculate_shannon_entropy(token) > ENTROPY_LIMIT:
                return True
    return False
