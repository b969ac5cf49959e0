"""The `builtin` provider: embedded, offline, deterministic (model ``curator-rules``).

The adapter lives in `wardian.providers.builtin.adapter`; what it can answer (output
schema name -> function) in `wardian.providers.builtin.answers`. The curator it calls is
Wardian's memory logic and lives in its own package, `wardian.curator`.
"""

from __future__ import annotations

from wardian.providers.builtin.answers import (
    builtin_output_schemas,
    register_builtin_answer,
    unregister_builtin_answer,
)

__all__ = ["BUILTIN_EFFORTS", "BUILTIN_MODEL", "builtin_output_schemas",
           "register_builtin_answer", "unregister_builtin_answer"]

BUILTIN_MODEL = "curator-rules"
"""The builtin provider's only model."""

BUILTIN_EFFORTS: tuple[str, ...] = ()
"""The builtin provider takes no effort level."""
