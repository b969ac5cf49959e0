"""The `builtin` adapter: runs the deterministic curator in-process, no network, no model.

It answers `wardian.curator.curate(payload)`, or `wardian.curator.review.review(payload)`
when the request's output schema is the memory review (``wardian:memory-review``, told by
its title `wardian.memory.review.REVIEW_SCHEMA_TITLE`); a curator or reviewer that cannot
be imported or fails is an error, never an empty answer. The answer is validated against the
request's output schema like every other provider's.

Spec: DESIGN.md "Blueprints, runs, providers".
"""

from __future__ import annotations

import json
import threading
from typing import Any

from wardian.providers._common import parse_output
from wardian.providers.base import ModelInfo, ProviderAdapter, ProviderRequest, ProviderResult
from wardian.providers.builtin import BUILTIN_MODEL
from wardian.providers.errors import ModelUnavailable, OutputInvalid, UnsupportedEffort

__all__ = ["BuiltinAdapter"]


def _curate(payload: dict[str, Any]) -> dict[str, Any]:
    # Imported here: the curator pulls in rapidfuzz and detect-secrets. A broken curator
    # must fail the step, never answer an empty batch as if nothing were worth keeping.
    from wardian.curator import curate

    result = curate(payload)
    if not isinstance(result, dict):
        raise OutputInvalid("the builtin curator did not return an object", provider="builtin")
    return result


def _review(payload: dict[str, Any]) -> dict[str, Any]:
    from wardian.curator.review import review

    result = review(payload)
    if not isinstance(result, dict):
        raise OutputInvalid("the builtin reviewer did not return an object", provider="builtin")
    return result


def _is_review(schema: dict[str, Any] | None) -> bool:
    from wardian.memory.review import REVIEW_SCHEMA_TITLE

    return isinstance(schema, dict) and schema.get("title") == REVIEW_SCHEMA_TITLE


class BuiltinAdapter(ProviderAdapter):
    """The embedded default provider (model ``curator-rules``, no effort)."""

    name = "builtin"
    supports_effort = False
    supports_output_schema = True

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
        """Curate (or, for the memory review's output schema, review) `request.payload`
        deterministically.

        Raises:
            ModelUnavailable: a model other than ``curator-rules`` was assigned.
            UnsupportedEffort (exit 2): an effort was assigned.
            OutputInvalid: the batch does not match `request.output_schema`.
        """
        if request.model not in (None, BUILTIN_MODEL):
            raise ModelUnavailable(
                f"the builtin provider has only the model {BUILTIN_MODEL!r}, "
                f"not {request.model!r}", provider=self.name,
            )
        if request.effort:
            raise UnsupportedEffort(self.name, BUILTIN_MODEL, request.effort, [])
        answer = _review if _is_review(request.output_schema) else _curate
        document = answer(dict(request.payload))
        text = json.dumps(document, ensure_ascii=False, sort_keys=True)
        output = parse_output(text, request.output_schema, check=request.check_output,
                              provider=self.name)
        return ProviderResult(text=text, output=output if output is not None else document,
                              model=BUILTIN_MODEL, usage=None, transcript=None)

    def discover_models(self, timeout_s: float = 30.0) -> list[ModelInfo]:
        """The static catalog: one model, ``curator-rules``, no effort levels."""
        return [ModelInfo(id=BUILTIN_MODEL, efforts=[], is_default=True, source="builtin")]
