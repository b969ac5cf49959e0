"""The `builtin` adapter: answers in-process, deterministically, no network, no model.

It answers only the output schemas it implements (`wardian.providers.builtin.answers`:
``wardian:curator-batch`` by `wardian.curator.curate(payload)`, ``wardian:memory-review``
by `wardian.curator.review.review(payload)`), chosen by the request's
``output_ref``; any other output is `OutputUnsupported` (the assignment checks refuse it
before a run). An answer function that cannot be imported or fails is an error, never an
empty batch. The answer is validated against the request's output schema like every other
provider's.

Spec: DESIGN.md "Blueprints, runs, providers".
"""

from __future__ import annotations

import json
import threading
from typing import Any

from wardian.providers._common import parse_output
from wardian.providers.base import ModelInfo, ProviderAdapter, ProviderRequest, ProviderResult
from wardian.providers.builtin import BUILTIN_MODEL
from wardian.providers.errors import (
    ModelUnavailable,
    OutputInvalid,
    OutputUnsupported,
    UnsupportedEffort,
)

__all__ = ["BuiltinAdapter"]


def _answer(request: ProviderRequest) -> dict[str, Any]:
    from wardian.providers.builtin.answers import builtin_answer, builtin_output_schemas

    answer = builtin_answer(request.output_ref)
    if answer is None:
        raise OutputUnsupported("builtin", request.output_ref, builtin_output_schemas())
    # A broken answer must fail the step, never answer an empty batch as if nothing were
    # worth keeping.
    result = answer(dict(request.payload))
    if not isinstance(result, dict):
        raise OutputInvalid("the builtin answer is not an object", provider="builtin")
    return result


class BuiltinAdapter(ProviderAdapter):
    """The embedded default provider (model ``curator-rules``, no effort)."""

    name = "builtin"
    supports_effort = False
    supports_output_schema = True

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Answer `request.payload` deterministically, by the function registered for
        `request.output_ref`.

        Raises:
            ModelUnavailable: a model other than ``curator-rules`` was assigned.
            UnsupportedEffort (exit 2): an effort was assigned.
            OutputUnsupported (exit 2): no answer is registered for `request.output_ref`
                (an inline schema, or a name the builtin does not implement).
            OutputInvalid: the answer does not match `request.output_schema`.
        """
        if request.model not in (None, BUILTIN_MODEL):
            raise ModelUnavailable(
                f"the builtin provider has only the model {BUILTIN_MODEL!r}, "
                f"not {request.model!r}", provider=self.name,
            )
        if request.effort:
            raise UnsupportedEffort(self.name, BUILTIN_MODEL, request.effort, [])
        document = _answer(request)
        text = json.dumps(document, ensure_ascii=False, sort_keys=True)
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(text=text, output=output if output is not None else document,
                              model=BUILTIN_MODEL, usage=None, transcript=None)

    def answerable_outputs(self) -> list[str] | None:
        """Only the output schemas registered in `wardian.providers.builtin.answers`."""
        from wardian.providers.builtin.answers import builtin_output_schemas

        return builtin_output_schemas()

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """The static catalog: one model, ``curator-rules``, no effort levels."""
        return [ModelInfo(id=BUILTIN_MODEL, efforts=[], is_default=True, source="builtin")]
