"""Assignments: which provider/model/effort (or which agent's) each blueprint role uses.

``{"<role>": {"target_type": "temporary_provider", "provider": P, "model"?: M,
"effort"?: E}}`` or ``{"<role>": {"target_type": "agent", "agent": NAME_OR_ID}}``.
Every error starts with where it came from and the role, then says what was expected, what
was found and how to fix it, e.g. ``--assignments: curator.target_type: expected
'temporary_provider' or 'agent', found 'person'``. pydantic's and json's errors are
translated here, once, chained with ``from``. Nothing here assumes a provider: a role
without an assignment is the caller's error to report.

Spec: DESIGN.md "Blueprints, runs, providers" (model catalog: validation when an invoker is
added/enabled and a run starts).
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic import ValidationError as PydanticError
from pydantic_core import ErrorDetails

from wardian.errors import NotFoundError, UsageError, ValidationError, WardianError

if TYPE_CHECKING:
    from wardian._db import StateDB

__all__ = [
    "AgentAssignment",
    "AgentLookup",
    "Assignment",
    "TemporaryProviderAssignment",
    "parse_assignments",
    "resolve_assignment",
    "validate_assignments",
]

_Name = Annotated[str, Field(min_length=1, max_length=200)]


class TemporaryProviderAssignment(BaseModel):
    """Run the role on `provider` with exactly `model` and `effort` (each optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target_type: Literal["temporary_provider"]
    provider: _Name
    model: _Name | None = None
    effort: _Name | None = None


class AgentAssignment(BaseModel):
    """Run the role with the provider, model and effort of an existing agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target_type: Literal["agent"]
    agent: _Name


Assignment = Annotated[
    TemporaryProviderAssignment | AgentAssignment, Field(discriminator="target_type")
]
"""One role's assignment (discriminated by ``target_type``)."""

_MAP = TypeAdapter(dict[str, Assignment])
_TARGETS: dict[str, type[BaseModel]] = {
    "temporary_provider": TemporaryProviderAssignment,
    "agent": AgentAssignment,
}
_EXPECTED_TARGETS = "expected 'temporary_provider' or 'agent'"
_EXAMPLE = '{"<role>": {"target_type": "temporary_provider", "provider": "<provider>"}}'


def _example(role: str | None) -> str:
    """An example assignment for `role`, for hints."""
    return _EXAMPLE.replace("<role>", role) if role else _EXAMPLE


def _show(value: Any) -> str:
    """`value` as a message shows it: strings quoted like 'this', the rest as JSON."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _translate(error: ErrorDetails, origin: str | None) -> ValidationError:
    """One pydantic error about the assignments document, in our words."""
    loc = tuple(error["loc"])
    role = str(loc[0]) if loc else None
    target = str(loc[1]) if len(loc) > 1 and loc[1] in _TARGETS else None
    fields = [str(p) for p in loc[2 if target else 1:]]
    path = ".".join(p for p in [role, *fields] if p) or None
    kind, found = error["type"], error.get("input")
    article = f"an {target}" if target == "agent" else f"a {target}"
    if kind == "union_tag_invalid":
        value = found.get("target_type") if isinstance(found, dict) else found
        return ValidationError(f"{_EXPECTED_TARGETS}, found {_show(value)}",
                               path=f"{role}.target_type", source=origin)
    if kind == "union_tag_not_found":
        return ValidationError(f"missing; {_EXPECTED_TARGETS}", path=f"{role}.target_type",
                               source=origin, hint=f"e.g. {_example(role)}")
    if kind in ("model_attributes_type", "dict_type"):
        return ValidationError(f"expected an object with a target_type, found {_show(found)}",
                               path=path, source=origin, hint=f"e.g. {_example(role)}")
    if kind == "missing" and target:
        if fields[-1] == "provider":
            from wardian.providers.registry import known_providers

            hint = f"known providers: {', '.join(known_providers())}"
        else:
            hint = "an agent name or id; see `wardian agent list`"
        return ValidationError(f"missing; {article} assignment needs {fields[-1]}",
                               path=path, source=origin, hint=hint)
    if kind == "extra_forbidden" and target:
        allowed = list(_TARGETS[target].model_fields)
        guess = difflib.get_close_matches(fields[-1], allowed, n=1, cutoff=0.6)
        return ValidationError(
            f"unknown field; {article} assignment takes {', '.join(allowed)}", path=path,
            source=origin, hint=f"did you mean {guess[0]!r}?" if guess else None)
    if kind == "string_type":
        return ValidationError(f"expected a string, found {_show(found)}", path=path,
                               source=origin)
    if kind == "string_too_short":
        return ValidationError("must not be empty", path=path, source=origin)
    if kind == "string_too_long":
        return ValidationError(f"longer than {error.get('ctx', {}).get('max_length')} "
                               "characters", path=path, source=origin)
    return ValidationError(f"{error['msg']}, found {_show(found)}", path=path, source=origin)


def parse_assignments(
    source: str | dict[str, Any], *, origin: str | None = None
) -> dict[str, TemporaryProviderAssignment | AgentAssignment]:
    """Parse assignments from JSON text or an already-decoded dict.

    Args:
        source: JSON text or a dict ``{role: assignment}``.
        origin: where it came from (``--assignments``, a file); every message starts with it.

    Raises:
        ValidationError (exit 2): not JSON (with line and column), not an object, or a
            field error whose path starts with the role (``curator.target_type``).
    """
    if isinstance(source, str):
        try:
            document = json.loads(source)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                source=origin, hint=f"expected {_EXAMPLE}",
            ) from exc
    else:
        document = source
    if not isinstance(document, dict):
        raise ValidationError(
            f"expected a JSON object of role -> assignment, found {_show(document)}",
            source=origin, hint=f"e.g. {_EXAMPLE}")
    try:
        return _MAP.validate_python(document)
    except PydanticError as exc:
        raise _translate(exc.errors()[0], origin) from exc


class AgentLookup(Protocol):
    """``agents(name_or_id) -> (provider, model, effort)`` of a registered agent.

    The agent registry lives in the runtime, above this package (DESIGN.md "Layout"), so
    callers pass one in (`wardian.engine.assignments.agent_selection`).

    Raises:
        NotFoundError / AmbiguousIdError: no such agent / the id prefix is ambiguous.
    """

    def __call__(self, name_or_id: str, /) -> tuple[str, str | None, str | None]: ...


def resolve_assignment(
    assignment: TemporaryProviderAssignment | AgentAssignment,
    *,
    agents: AgentLookup | None = None,
) -> tuple[str, str | None, str | None]:
    """The (provider, model, effort) an assignment stands for.

    An agent target resolves to that agent's provider, model and effort through `agents`.

    Raises:
        NotFoundError / AmbiguousIdError: the agent does not exist / prefix is ambiguous.
        ValueError: an agent target without `agents` (a caller's bug).
    """
    if isinstance(assignment, TemporaryProviderAssignment):
        return assignment.provider, assignment.model, assignment.effort
    if agents is None:
        raise ValueError(f"agent target {assignment.agent!r}: resolve_assignment needs "
                         "agents=… (the engine's `agent_selection` builds it)")
    return agents(assignment.agent)


def _for_role(exc: WardianError, role: str, origin: str | None,
              assignment: TemporaryProviderAssignment | AgentAssignment) -> WardianError:
    """`exc` (met while resolving or checking `role`) re-worded to start with the role.

    Keeps the exit code: a missing agent stays a NotFoundError (exit 1), catalog and usage
    problems become a ValidationError (exit 2).
    """
    from wardian.providers.errors import UnknownProvider

    via = f"agent {assignment.agent!r}: " if isinstance(assignment, AgentAssignment) else ""
    if isinstance(exc, UnknownProvider):
        guess = difflib.get_close_matches(exc.provider, exc.known, n=1, cutoff=0.6)
        hint = f"known: {', '.join(exc.known)}" + (f"; did you mean {guess[0]!r}?"
                                                   if guess else "")
        return ValidationError(f"{via}provider {exc.provider!r} is unknown", path=role,
                               source=origin, hint=hint)
    if isinstance(exc, NotFoundError):
        where = ": ".join(p for p in (origin, role) if p)
        return NotFoundError(f"{where}: {exc.message}", hint=exc.hint)
    return ValidationError(f"{via}{exc.message}", path=role, source=origin, hint=exc.hint)


def validate_assignments(
    assignments: dict[str, TemporaryProviderAssignment | AgentAssignment],
    roles: list[str] | None = None,
    *,
    origin: str | None = None,
    check_catalog: bool = True,
    agents: AgentLookup | None = None,
    state: StateDB | None = None,
) -> dict[str, tuple[str, str | None, str | None]]:
    """Resolve every assignment and check it against the model catalog. Read-only.

    Args:
        roles: the blueprint's role names; when given, missing and extra roles are errors.
        origin: where the assignments came from (``--assignments``); messages start with it,
            then the role: ``--assignments: curator: provider 'codx' is unknown (known: …)``.
        check_catalog: False = only resolve (an agent target must still exist).
        agents: resolves agent targets (see `AgentLookup`); needed when there are any.
        state: the open state database whose model catalog is read (default: the
            installation's, `wardian.config.open_state_db`).

    Returns:
        role -> (provider, model, effort).

    Raises:
        ValidationError (exit 2): a missing/extra role, an unknown provider (listing the
            known ones), a catalog never refreshed (with the command to run), an unknown
            model, an unsupported effort; chained to the providers error.
        NotFoundError (exit 1): an agent target does not exist.
    """
    from wardian.config import open_state_db
    from wardian.providers.catalog import ModelCatalog

    if roles is not None:
        missing = sorted(set(roles) - set(assignments))
        extra = sorted(set(assignments) - set(roles))
        if missing:
            raise ValidationError(f"no assignment for role(s) {', '.join(missing)}",
                                  path="$", source=origin,
                                  hint=f"the blueprint's roles: {', '.join(roles)}")
        if extra:
            raise ValidationError(f"unknown role(s) {', '.join(extra)}", path="$",
                                  source=origin,
                                  hint=f"the blueprint's roles: {', '.join(roles)}")
    catalog = ModelCatalog(state or open_state_db()) if check_catalog else None
    resolved: dict[str, tuple[str, str | None, str | None]] = {}
    for role, assignment in assignments.items():
        try:
            provider, model, effort = resolve_assignment(assignment, agents=agents)
            if catalog is not None:
                catalog.validate_selection(provider, model, effort, step=True)
        except (NotFoundError, UsageError) as exc:
            raise _for_role(exc, role, origin, assignment) from exc
        resolved[role] = (provider, model, effort)
    return resolved
