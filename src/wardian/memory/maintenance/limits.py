"""Plan limits shared by the loader and the draft command (kept free of pydantic so the
agent-facing `memory draft-plan` starts fast). Spec "Plan structure and constraints"."""

from __future__ import annotations

__all__ = ["MAX_OPERATIONS", "MAX_PLAN_BYTES"]

MAX_PLAN_BYTES = 1024 * 1024
"""The largest accepted plan file, in bytes (1 MiB)."""
MAX_OPERATIONS = 100
"""The most operations one plan may hold (at least 1)."""
