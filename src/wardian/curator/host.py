"""The host's own model as the curator: which model of a provider's catalog curates.

`choose_host_model` picks one model of the agent's provider's refreshed catalog — a small
one by default — with its effort; `wardian.app.session_close.curator_assignment` turns it
into an ordinary ``temporary_provider`` assignment for the ``curator`` role (exact model,
no fallback: an adapter fails the step when the host answers with another model). The
builtin rules curator is `BUILTIN_ASSIGNMENT`.

Spec: "Optional consolidation"; DESIGN.md "The builtin provider", "Blueprints, runs,
providers" (model catalog).
"""

from __future__ import annotations

import re
from typing import Any

from wardian.errors import UsageError
from wardian.providers.base import ModelInfo

__all__ = ["BUILTIN_ASSIGNMENT", "EFFORT_ORDER", "SMALL_MARKERS", "choose_host_model"]

BUILTIN_ASSIGNMENT: dict[str, Any] = {
    "target_type": "temporary_provider",
    "provider": "builtin",
    "model": "curator-rules",
}
"""The builtin rules curator's assignment."""

SMALL_MARKERS = ("haiku", "mini", "flash", "small", "lite", "nano")
"""Words of a model id naming a small, cheap model, most preferred first (whole words of the
id split at ``- _ . / :``, so ``gemini`` is not ``mini``)."""

EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""Effort levels from least to most; ``low`` is chosen when the model offers it."""

_ID_WORD = re.compile(r"[-_./:\[\]]+")


def _rank(model: ModelInfo) -> int:
    words = set(_ID_WORD.split(model.id.lower()))
    return next((k for k, marker in enumerate(SMALL_MARKERS) if marker in words),
                len(SMALL_MARKERS))


def _effort(model: ModelInfo) -> str | None:
    if not model.efforts:
        return None
    if "low" in model.efforts:
        return "low"
    known = [e for e in EFFORT_ORDER if e in model.efforts]
    return known[0] if known else (model.default_effort or model.efforts[0])


def choose_host_model(models: list[ModelInfo]) -> tuple[str, str | None]:
    """(model id, effort or None): the smallest model by `SMALL_MARKERS` (catalog order breaks
    ties); with none small, the provider's default model, else the first. Effort: ``low``
    when offered, else the least offered level, None when the model takes no effort.

    Raises:
        UsageError: `models` is empty.
    """
    if not models:
        raise UsageError("the model catalog lists no model",
                         hint="refresh it with `wardian agent models --provider P --refresh`")
    ranked = sorted(range(len(models)), key=lambda k: (_rank(models[k]), k))
    best = models[ranked[0]]
    if _rank(best) == len(SMALL_MARKERS):
        best = next((m for m in models if m.is_default), models[0])
    return best.id, _effort(best)
