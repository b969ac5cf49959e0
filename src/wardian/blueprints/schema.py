"""The blueprint format as pydantic v2 models (``extra="forbid"`` everywhere).

A blueprint file has five top-level keys::

    blueprint: {id, name, description, version, min_wardian?}
    roles:     {NAME: description}
    inputs:    {NAME: {type, default?, min?, max?, choices?, description?, secret?}}
    triggers:  [session-close | schedule | manual]
    steps:     [{id, when?, timeout?, retry?, action + with? | role + prompt + output + payload?}]

Custom validators raise `PydanticCustomError` with ``expected``/``found`` context so the
translation in `validate.py` can say what was expected and what was found.

Spec: docs/blueprint-guide.md.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "DURATION_RE",
    "NAME_RE",
    "SLUG_RE",
    "Blueprint",
    "InputSpec",
    "Meta",
    "PromptFile",
    "Retry",
    "Step",
    "coerce_input",
    "parse_duration",
]

SLUG_RE = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
"""Role and input names: usable as ``roles.NAME`` / ``inputs.NAME`` in templates."""
DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
TRIGGERS = ("session-close", "schedule", "manual")
INPUT_TYPES = ("string", "integer", "number", "boolean", "enum", "duration")


def _custom(expected: str, found: str, what: str = "invalid value") -> PydanticCustomError:
    return PydanticCustomError(
        "wardian", "{what}; expected {expected}, found {found}",
        {"what": what, "expected": expected, "found": found},
    )


def describe(value: Any) -> str:
    """Describe a YAML value for messages: ``'abc' (string)``, ``5 (integer)``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (boolean)"
    if isinstance(value, int):
        return f"{value} (integer)"
    if isinstance(value, float):
        return f"{value} (number)"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"{shown!r} (string)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def parse_duration(text: str) -> float:
    """Parse ``500ms``, ``30s``, ``5m``, ``1h`` or ``1d`` into seconds.

    Raises:
        ValueError: not a duration.
    """
    match = DURATION_RE.match(str(text).strip())
    if not match:
        raise ValueError(f"not a duration: {text!r} (use e.g. 30s, 5m, 1h)")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def _duration(value: Any) -> str:
    if not isinstance(value, str) or not DURATION_RE.match(value):
        raise _custom("a duration such as 30s, 5m or 1h", describe(value))
    return value


Duration = Annotated[str, Field(json_schema_extra={"pattern": DURATION_RE.pattern})]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Meta(_Model):
    """The `blueprint:` metadata block."""

    id: str = Field(description="Slug: lowercase letters, digits, '-' and '_'.",
                    json_schema_extra={"pattern": SLUG_RE.pattern})
    name: str
    description: str = ""
    version: int = Field(ge=1)
    min_wardian: str | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _slug(cls, value: Any) -> Any:
        if not isinstance(value, str) or not SLUG_RE.match(value):
            raise _custom("a slug of lowercase letters, digits, '-' or '_' starting with a letter",
                          describe(value))
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _custom("an integer version such as 1", describe(value))
        return value


class InputSpec(_Model):
    """One typed input: `type`, optional `default`, bounds, `choices`, `secret`."""

    type: Literal["string", "integer", "number", "boolean", "enum", "duration"]
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: list[str | int | float] | None = None
    description: str = ""
    secret: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> InputSpec:
        if self.type == "enum" and not self.choices:
            raise _custom("'choices' with at least one value for an enum input", "no choices",
                          what="enum input without choices")
        if self.type != "enum" and self.choices is not None:
            raise _custom("'choices' only on an input of type enum", f"type {self.type!r}",
                          what="choices on a non-enum input")
        if (self.min is not None or self.max is not None) and self.type not in (
            "integer", "number", "duration", "string"
        ):
            raise _custom("min/max only on integer, number, duration or string inputs",
                          f"type {self.type!r}", what="bounds on an input without order")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise _custom("min <= max", f"min {self.min:g} > max {self.max:g}",
                          what="empty range")
        if self.default is not None:
            try:
                coerce_input(self, self.default, from_text=False)
            except ValueError as exc:
                raise _custom(str(exc), describe(self.default), what="invalid default") from None
        return self


def coerce_input(spec: InputSpec, value: Any, *, from_text: bool) -> Any:
    """Check and convert one input value against its spec.

    Args:
        spec: the declared input.
        value: the value given (a string when `from_text`, e.g. from ``--input k=v``).
        from_text: accept textual forms (``"3"`` for an integer, ``"true"`` for a boolean).

    Returns:
        The value as its declared type (durations stay strings such as ``"5m"``).

    Raises:
        ValueError: a phrase saying what was expected.
    """
    kind = spec.type
    out: Any
    if kind == "boolean":
        if isinstance(value, bool):
            out = value
        elif from_text and str(value).lower() in {"true", "false", "1", "0", "yes", "no"}:
            out = str(value).lower() in {"true", "1", "yes"}
        else:
            raise ValueError("a boolean (true or false)")
        return out
    if kind == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            out = value
        elif from_text and re.fullmatch(r"-?\d+", str(value).strip()):
            out = int(str(value).strip())
        else:
            raise ValueError("an integer")
    elif kind == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            out = value
        else:
            try:
                out = float(str(value)) if from_text else None
            except ValueError:
                out = None
            if out is None:
                raise ValueError("a number")
    elif kind == "duration":
        if not isinstance(value, str) or not DURATION_RE.match(value.strip()):
            raise ValueError("a duration such as 30s, 5m or 1h")
        out = value.strip()
    elif kind == "enum":
        choices = spec.choices or []
        matched = [c for c in choices if c == value or (from_text and str(c) == str(value))]
        if not matched:
            raise ValueError("one of " + ", ".join(repr(c) for c in choices))
        return matched[0]
    else:  # string
        if not isinstance(value, str):
            if not from_text:
                raise ValueError("a string")
            value = str(value)
        out = value
    measure = (len(out) if kind == "string" else parse_duration(out) if kind == "duration"
               else out)
    unit = " characters" if kind == "string" else " seconds" if kind == "duration" else ""
    if spec.min is not None and measure < spec.min:
        raise ValueError(f"a value >= {spec.min:g}{unit}")
    if spec.max is not None and measure > spec.max:
        raise ValueError(f"a value <= {spec.max:g}{unit}")
    return out


class Retry(_Model):
    """`retry:` — up to `attempts` tries; waits `backoff`, doubling, capped at `max_backoff`."""

    attempts: int = Field(default=1, ge=1, le=100)
    backoff: Duration = "0s"
    max_backoff: Duration | None = None

    _check_backoff = field_validator("backoff", "max_backoff", mode="before")(
        lambda cls, v: v if v is None else _duration(v)
    )

    @field_validator("attempts", mode="before")
    @classmethod
    def _attempts(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100:
            raise _custom("an integer from 1 to 100", describe(value))
        return value


class PromptFile(_Model):
    """`prompt: {file: NAME.j2}` — a template file in the blueprint's own folder."""

    file: str


class Step(_Model):
    """One step: an action step (`action` + `with`) or a role step (`role` + `prompt` +
    `output` + optional `payload`)."""

    id: str = Field(json_schema_extra={"pattern": SLUG_RE.pattern})
    when: str | None = None
    timeout: Duration | None = None
    retry: Retry | None = None
    action: str | None = None
    with_: dict[str, Any] | None = Field(default=None, alias="with")
    role: str | None = None
    prompt: str | PromptFile | None = None
    output: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _slug(cls, value: Any) -> Any:
        if not isinstance(value, str) or not SLUG_RE.match(value):
            raise _custom("a step id of lowercase letters, digits, '-' or '_' starting with a "
                          "letter", describe(value))
        return value

    _check_timeout = field_validator("timeout", mode="before")(
        lambda cls, v: v if v is None else _duration(v)
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        if self.action is None and self.role is None:
            raise _custom("exactly one of 'action' or 'role'", "neither",
                          what="step has no action or role")
        if self.action is not None and self.role is not None:
            raise _custom("exactly one of 'action' or 'role'", "both",
                          what="step has both action and role")
        if self.action is not None:
            extra = [k for k in ("prompt", "output", "payload") if getattr(self, k) is not None]
            if extra:
                raise _custom("'with' on an action step", f"'{extra[0]}'",
                              what=f"'{extra[0]}' belongs to role steps")
        else:
            if self.with_ is not None:
                raise _custom("'prompt', 'output' and 'payload' on a role step", "'with'",
                              what="'with' belongs to action steps")
            if self.prompt is None:
                raise _custom("'prompt' (inline template or {file: NAME.j2})", "no prompt",
                              what="role step without prompt")
            if self.output is None:
                from wardian.blueprints.output_schemas import known_output_schemas

                refs = " or ".join(f"{{$ref: {n}}}" for n in known_output_schemas())
                raise _custom(f"'output' (a JSON Schema{' or ' + refs if refs else ''})",
                              "no output", what="role step without output schema")
        return self

    def timeout_s(self) -> float | None:
        """The step timeout in seconds, or None."""
        return parse_duration(self.timeout) if self.timeout else None


Trigger = Literal["session-close", "schedule", "manual"]


def _default_triggers() -> list[Trigger]:
    return ["manual"]


class Blueprint(_Model):
    """A whole blueprint file (the definition; a run is an instance of it)."""

    blueprint: Meta
    roles: dict[str, str] = Field(
        default_factory=dict, json_schema_extra={"propertyNames": {"pattern": NAME_RE.pattern}})
    inputs: dict[str, InputSpec] = Field(
        default_factory=dict, json_schema_extra={"propertyNames": {"pattern": NAME_RE.pattern}})
    triggers: list[Trigger] = Field(default_factory=_default_triggers)
    steps: list[Step] = Field(min_length=1)

    @property
    def id(self) -> str:
        """The blueprint id (``blueprint.id``)."""
        return self.blueprint.id
