"""The output schema registry: names a role step can use as ``output: {"$ref": NAME}``.

A registered output schema is a JSON Schema (sent to the provider as the answer's schema)
plus, optionally, a `check` — the function that decides whether an answer is accepted, when
the owner of the document has a stricter or more exact model of it than the JSON Schema
(the curator batch: memory's pydantic model). The engine checks a role step's answer once,
when it accepts the provider's result (`OutputSchema.check_value`).

**Who registers.** The parts that own a document register it through the one plugin
registry (``registry.add_output_schema`` in a ``wardian.plugins`` entry point,
`wardian.plugins`); memory's (``wardian:curator-batch``, ``wardian:memory-review``) come
through `wardian.builtin_plugin`, since memory sits below this package and must not import
it. The plugins' schemas are copied in on the first `get_output_schema` /
`known_output_schemas`, once per process; hot paths that resolve no output reference import
nothing more. Tests register their own schemas and unregister them
(`unregister_output_schema`).

Spec: docs/blueprint-guide.md (a schema registry in `blueprints` that memory registers
`wardian:curator-batch` into).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from wardian.errors import UsageError, ValidationError

__all__ = [
    "OutputCheck",
    "OutputSchema",
    "check_json_schema",
    "get_output_schema",
    "json_path",
    "known_output_schemas",
    "plugin_errors",
    "register_output_schema",
    "standard_json_schema",
    "unregister_output_schema",
]

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*:[a-z][a-z0-9_.-]*$")
"""A registered name: ``namespace:name`` (lowercase), e.g. ``wardian:curator-batch``."""

class OutputCheck(Protocol):
    """``check(answer)``: returns when the answer is accepted; raises `ValidationError` (with
    ``path`` as a JSON path such as ``$['operations'][0]['text']``) when it is not."""

    def __call__(self, value: Any, /) -> None:
        """Accept `value` or raise `ValidationError`."""


def json_path(parts: Any) -> str:
    """``$['a'][0]`` for the path parts ``('a', 0)`` (how answer errors name a place)."""
    return "$" + "".join(f"[{p!r}]" for p in parts)


@dataclass(frozen=True)
class OutputSchema:
    """One registered output schema.

    Attributes:
        name: the ``$ref`` name, ``namespace:name``.
        description: one line, shown where known names are listed.
        schema_json: the JSON Schema as JSON text (`schema` returns a fresh copy).
        check: decides whether an answer is accepted; None = the JSON Schema decides.
    """

    name: str
    description: str
    schema_json: str
    check: OutputCheck | None = None

    def schema(self) -> dict[str, Any]:
        """The JSON Schema, a fresh copy per caller (callers may change it)."""
        value: dict[str, Any] = json.loads(self.schema_json)
        return value

    def check_value(self, value: Any) -> None:
        """Accept or reject an answer (`check`, else the JSON Schema).

        Raises:
            ValidationError: the answer does not match; ``path`` is its JSON path.
        """
        if self.check is not None:
            self.check(value)
        else:
            check_json_schema(value, self.schema())


def check_json_schema(value: Any, schema: Mapping[str, Any]) -> None:
    """Check `value` against a JSON Schema (the check of inline ``output`` schemas).

    Raises:
        ValidationError: the first violation; ``path`` is its JSON path.
    """
    import jsonschema

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        raise ValidationError(exc.message, path=json_path(exc.absolute_path)) from None


_REGISTRY: dict[str, OutputSchema] = {}
_loaded = False
_loading = False  # true while the thread holding `_load_lock` calls the entry points
_lock = threading.Lock()  # guards _REGISTRY
_load_lock = threading.RLock()
# serialises discovery: other threads wait for the whole registry; re-entrant, so a plugin
# that looks names up while it registers (same thread) sees what is registered so far


def standard_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` without OpenAPI's ``discriminator`` keyword (``{"propertyName": …}``), which
    pydantic writes beside the ``oneOf`` of a tagged union: it is not JSON Schema, and a
    strict validator (Claude Code's ``--json-schema``) refuses the whole schema for it.
    The union's ``const`` tags still tell its members apart, so every document valid
    before is valid after and no other is. A property *named* ``discriminator`` (a key of
    ``properties``) is kept."""
    def clean(value: Any, *, in_properties: bool = False) -> Any:
        if isinstance(value, Mapping):
            return {k: clean(v, in_properties=k in ("properties", "patternProperties")
                             and not in_properties)
                    for k, v in value.items()
                    if in_properties or not (k == "discriminator" and isinstance(v, Mapping)
                                             and "propertyName" in v)}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return dict(clean(schema))


def register_output_schema(
    name: str,
    *,
    schema: Mapping[str, Any],
    description: str,
    check: OutputCheck | None = None,
    replace: bool = False,
) -> OutputSchema:
    """Register `schema` as ``output: {"$ref": name}``.

    Args:
        name: ``namespace:name`` (lowercase letters, digits, ``_``, ``-``; ``.`` after the
            colon).
        schema: a JSON-serialisable JSON Schema (what providers are asked to answer).
        description: one line saying what the document is.
        check: the answer check (see `OutputCheck`); None = the JSON Schema decides.
        replace: replace an existing registration of `name` (tests wrap a check this way).

    Returns:
        The registered `OutputSchema`.

    Raises:
        UsageError: a malformed name, a schema that is not JSON, or `name` is taken and
            `replace` is false.
    """
    if not NAME_RE.match(name):
        raise UsageError(f"output schema name {name!r} is not of the form namespace:name",
                         hint="use lowercase letters, digits, '_' or '-', e.g. team:summary")
    try:
        text = json.dumps(standard_json_schema(schema), sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"output schema {name!r} is not JSON-serialisable: {exc}") from None
    entry = OutputSchema(name=name, description=description, schema_json=text, check=check)
    with _lock:
        if name in _REGISTRY and not replace:
            raise UsageError(f"output schema {name!r} is already registered",
                             hint="pass replace=True to replace it")
        _REGISTRY[name] = entry
    return entry


def unregister_output_schema(name: str) -> None:
    """Remove `name` (tests unregister what they register). No error if absent."""
    with _lock:
        _REGISTRY.pop(name, None)


def _load_plugins() -> None:
    """Copy every plugin's output schemas into the registry, once (`wardian.plugins`)."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:
            return
        _loading = True
        try:
            from wardian.plugins import loaded, resolve

            for name, entry in loaded().output_schemas.items():
                register_output_schema(name, schema=resolve(entry.schema),
                                       description=entry.description,
                                       check=resolve(entry.check), replace=True)
            _loaded = True
        finally:
            _loading = False


def plugin_errors() -> list[str]:
    """What every plugin had refused or failed to load, one sentence each."""
    from wardian.plugins import loaded

    return list(loaded().errors)


def known_output_schemas() -> dict[str, str]:
    """Every registered name -> its description, sorted by name (discovers plugins first)."""
    _load_plugins()
    with _lock:
        return {name: _REGISTRY[name].description for name in sorted(_REGISTRY)}


def get_output_schema(name: str) -> OutputSchema:
    """The output schema registered as `name` (discovers plugins first).

    Raises:
        KeyError: no such name (`validate_file` reports it as a problem at the ``$ref``,
            with the known names and the nearest one).
    """
    _load_plugins()
    with _lock:
        return _REGISTRY[name]
