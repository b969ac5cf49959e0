"""What a schema error would otherwise hide: the rest of the file's problems.

pydantic stops inside a model at its first failing field: a model's own consistency check
(``Step``'s "exactly one of action or role", ``InputSpec``'s "min <= max") runs only when
every field of it is valid, and a blueprint that fails the schema cannot be cross-checked
as a model. Two helpers let `wardian.blueprints.validate` report every problem of a file
in one pass:

* `hidden_model_errors` validates each failing step and input again with its broken
  fields set aside (dropped, or replaced by a placeholder of the right type where their
  presence matters) and returns the consistency errors that then appear;
* `partial_blueprint` builds a model (unvalidated, ``model_construct``) from every part
  of the document that has the right shape, so references and templates of the sound
  steps are checked too. A step keeps its position (marks and step order stay right).
  A ``roles`` or ``inputs`` section that is not a mapping is taken to declare every name
  (`AnyName`), so its one error is not repeated at every reference to it.

Spec: docs/blueprint-guide.md (validation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["AnyName", "hidden_model_errors", "partial_blueprint"]


class AnyName(dict[str, Any]):
    """An empty mapping that claims to hold every name: a broken section's stand-in."""

    def __contains__(self, key: object) -> bool:
        return True

_STEP_PLACEHOLDERS: dict[str, Any] = {
    "id": "step", "action": "action", "with": {}, "role": "role", "prompt": "prompt",
    "output": {}, "payload": {},
}
"""Step fields whose presence a step's kind check reads: a broken value is replaced by a
valid one of the same kind instead of being dropped (a dropped prompt would report a
"role step without prompt" that is not there)."""


def _failing_fields(errors: Iterable[Any], base: tuple[Any, ...]) -> set[str]:
    """The first key under `base` of every error located below it."""
    out: set[str] = set()
    for err in errors:
        loc = tuple(err["loc"])
        if len(loc) > len(base) and loc[: len(base)] == base:
            out.add(str(loc[len(base)]))
    return out


def hidden_model_errors(data: dict[str, Any], errors: Sequence[Any]) -> list[Any]:
    """The consistency errors of steps and inputs that `errors` (pydantic's, for `data`)
    kept from running, as pydantic error dicts located at the step or input.

    Args:
        data: the blueprint document.
        errors: ``ValidationError.errors()`` of validating `data` as a `Blueprint`.
    """
    import pydantic

    from wardian.blueprints.schema import InputSpec, Step

    found: list[Any] = []
    steps = data.get("steps")
    for index, raw in enumerate(steps if isinstance(steps, list) else []):
        bad = _failing_fields(errors, ("steps", index))
        if not isinstance(raw, dict) or not bad:
            continue
        trimmed = {k: v for k, v in raw.items() if k not in bad}
        trimmed.update({k: _STEP_PLACEHOLDERS[k] for k in bad if k in _STEP_PLACEHOLDERS})
        found += _own_errors(Step, trimmed, ("steps", index), pydantic)
    inputs = data.get("inputs")
    for name, raw in (inputs.items() if isinstance(inputs, dict) else []):
        bad = _failing_fields(errors, ("inputs", name))
        if not isinstance(raw, dict) or not bad or bad & {"type", "choices"}:
            continue  # the consistency check is about the type and choices themselves
        found += _own_errors(InputSpec, {k: v for k, v in raw.items() if k not in bad},
                             ("inputs", name), pydantic)
    return found


def _own_errors(model: Any, raw: dict[str, Any], at: tuple[Any, ...],
                pydantic: Any) -> list[dict[str, Any]]:
    try:
        model.model_validate(raw)
    except pydantic.ValidationError as exc:
        return [{**err, "loc": at} for err in exc.errors(include_url=False)
                if not err["loc"] and err["type"] == "wardian"]
    return []


def partial_blueprint(data: dict[str, Any]) -> Any:
    """A `Blueprint` built without validation from every part of `data` with the right
    shape (every step, at its position; role and input names), for cross-checking a file
    that failed the schema; None when `data` has no list of steps."""
    import pydantic

    from wardian.blueprints.schema import Blueprint, Meta, PromptFile, Step

    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        return None
    roles = data.get("roles")
    inputs = data.get("inputs")
    steps = []
    for index, raw in enumerate(raw_steps):
        try:
            steps.append(Step.model_validate(raw))
            continue
        except pydantic.ValidationError:
            pass
        item = raw if isinstance(raw, dict) else {}

        def pick(key: str, kind: type | tuple[type, ...], item: dict[str, Any] = item) -> Any:
            value = item.get(key)
            return value if isinstance(value, kind) else None

        prompt = pick("prompt", (str, dict))
        if isinstance(prompt, dict):
            prompt = (PromptFile.model_construct(file=prompt["file"])
                      if isinstance(prompt.get("file"), str) else None)
        step_id = pick("id", str) or f"#{index}"  # never a valid id: no clash, no match
        steps.append(Step.model_construct(
            id=step_id, when=pick("when", str), timeout=None, retry=None,
            action=pick("action", str), with_=pick("with", dict), role=pick("role", str),
            prompt=prompt, output=pick("output", dict), payload=pick("payload", dict)))
    meta = data.get("blueprint")
    minimum = meta.get("min_wardian") if isinstance(meta, dict) else None
    meta_model = Meta.model_construct(id="partial", name="", description="", version=1,
                                      min_wardian=minimum if isinstance(minimum, str)
                                      else None)
    return Blueprint.model_construct(
        blueprint=meta_model,
        roles={str(k): v if isinstance(v, str) else "" for k, v in roles.items()}
        if isinstance(roles, dict) else {} if roles is None else AnyName(),
        inputs={str(k): None for k in inputs} if isinstance(inputs, dict)
        else {} if inputs is None else AnyName(),
        triggers=[], steps=steps)
