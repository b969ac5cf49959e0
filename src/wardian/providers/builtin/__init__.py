"""The `builtin` provider: embedded, offline, deterministic (model ``curator-rules``).

The adapter lives in `wardian.providers.builtin.adapter`; the curator it calls lives in
`wardian.providers.builtin.curator` (owned by the curator issue).
"""

from __future__ import annotations

__all__ = ["BUILTIN_EFFORTS", "BUILTIN_MODEL"]

BUILTIN_MODEL = "curator-rules"
"""The builtin provider's only model."""

BUILTIN_EFFORTS: tuple[str, ...] = ()
"""The builtin provider takes no effort level."""
