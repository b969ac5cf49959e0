"""What the `builtin` provider can answer: registered output schema name -> the function
that answers a step with that output from the step's payload (the curator batch by the
rules curator, the memory review by the rules reviewer).

The builtin provider has no model: it can produce only the output schemas it implements,
each by a deterministic function of the step's ``payload``. This table is the one place
that says which: the adapter answers by it, and the assignment checks
(`wardian.engine.assignments`) and ``blueprint validate --assignments`` read it through
`ProviderAdapter.answerable_outputs`, so a role step whose output the builtin cannot
produce is refused before a run starts, never at run time.

Adding one is one registration: ``register_builtin_answer("wardian:NAME", function)`` (a
built-in answer goes in `BUILTIN_ANSWERS` below).

Spec: DESIGN.md "Blueprints, runs, providers" (the builtin provider).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BUILTIN_ANSWERS", "builtin_answer", "builtin_output_schemas",
           "register_builtin_answer", "unregister_builtin_answer"]

BuiltinAnswer = Callable[[dict[str, Any]], dict[str, Any]]
"""``answer(payload) -> output``: the step's rendered payload in, its JSON answer out."""


def _curate(payload: dict[str, Any]) -> dict[str, Any]:
    # Imported here: the curator pulls in rapidfuzz and detect-secrets.
    from wardian.curator import curate

    return curate(payload)


def _review(payload: dict[str, Any]) -> dict[str, Any]:
    # The rules reviewer of the memory-review blueprint (the curator's own update rules).
    from wardian.curator.review import review

    return review(payload)


BUILTIN_ANSWERS: dict[str, BuiltinAnswer] = {
    "wardian:curator-batch": _curate,
    "wardian:memory-review": _review,
}
"""The answers the builtin provider ships with (output schema name -> function)."""

_answers: dict[str, BuiltinAnswer] = dict(BUILTIN_ANSWERS)
_lock = threading.Lock()


def register_builtin_answer(output_ref: str, answer: BuiltinAnswer) -> None:
    """Let the builtin provider answer steps whose ``output`` is ``{$ref: output_ref}``
    with ``answer(payload)`` (replacing an earlier registration of that name)."""
    with _lock:
        _answers[output_ref] = answer


def unregister_builtin_answer(output_ref: str) -> None:
    """Remove `output_ref` from what the builtin provider answers (tests unregister what
    they register). No error when absent."""
    with _lock:
        _answers.pop(output_ref, None)


def builtin_output_schemas() -> list[str]:
    """The output schema names the builtin provider answers, sorted. Read-only."""
    with _lock:
        return sorted(_answers)


def builtin_answer(output_ref: str | None) -> BuiltinAnswer | None:
    """The function answering `output_ref`, or None when the builtin provider cannot."""
    if output_ref is None:
        return None
    with _lock:
        return _answers.get(output_ref)
