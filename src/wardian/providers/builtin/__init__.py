"""The `builtin` provider: embedded, offline, deterministic (model ``curator-rules``).

The adapter lives in `wardian.providers.builtin.adapter`; the curator it calls is Wardian's
memory logic and lives in its own package, `wardian.curator`.
"""

from __future__ import annotations

__all__ = ["BUILTIN_EFFORTS", "BUILTIN_MODEL"]

BUILTIN_MODEL = "curator-rules"
"""The builtin provider's only model."""

BUILTIN_EFFORTS: tuple[str, ...] = ()
"""The builtin provider takes no effort level."""
