"""Assignments: which provider/model/effort (or which agent's) each blueprint role uses.

``{"<role>": {"target_type": "temporary_provider", "provider": P, "model"?: M,
"effort"?: E}}`` or ``{"<role>": {"target_type": "agent", "agent": NAME_OR_ID}}``.
Parsing errors name the JSON path (``$.curator.provider``). Nothing here assumes a
provider: a role without an assignment is the caller's error to report.

Issue 5 "Model catalog" (validation when an invoker is added/enabled and a run starts);
DESIGN.md "Blueprints, runs, providers".
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic import ValidationError as PydanticError

from wardian.errors import ValidationError

__all__ = [
    "AgentAssignment",
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


def _path(loc: tuple[Any, ...]) -> str:
    path = "$"
    for part in loc:
        if part in ("temporary_provider", "agent") and path != "$":
            continue  # pydantic names the union branch; it is not part of the document
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def parse_assignments(
    source: str | dict[str, Any], *, origin: str | None = None
) -> dict[str, TemporaryProviderAssignment | AgentAssignment]:
    """Parse assignments from JSON text or an already-decoded dict.

    Args:
        source: JSON text or a dict ``{role: assignment}``.
        origin: where it came from (``--assignments``, a file), for messages.

    Raises:
        ValidationError (exit 2): bad JSON, or a field error with its JSON path.
    """
    if isinstance(source, str):
        try:
            document = json.loads(source)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"assignments are not valid JSON: {exc.msg} (line {exc.lineno} column "
                f"{exc.colno})",
                source=origin,
                hint='expected {"<role>": {"target_type": "temporary_provider", '
                '"provider": "...", "model": "...", "effort": "..."}}',
            ) from exc
    else:
        document = source
    if not isinstance(document, dict):
        raise ValidationError("assignments must be a JSON object of role -> assignment",
                              path="$", source=origin)
    try:
        return _MAP.validate_python(document)
    except PydanticError as exc:
        first = exc.errors()[0]
        found = first.get("input")
        shown = json.dumps(found)[:80] if found is not None else "nothing"
        raise ValidationError(
            f"{first['msg']} (found {shown})", path=_path(tuple(first["loc"])), source=origin,
            hint='target_type is "temporary_provider" (provider, model?, effort?) or '
            '"agent" (agent)',
        ) from exc


def resolve_assignment(
    assignment: TemporaryProviderAssignment | AgentAssignment,
) -> tuple[str, str | None, str | None]:
    """The (provider, model, effort) an assignment stands for.

    An agent target resolves to that agent's provider, model and effort.

    Raises:
        NotFoundError / AmbiguousIdError: the agent does not exist / prefix is ambiguous.
    """
    if isinstance(assignment, TemporaryProviderAssignment):
        return assignment.provider, assignment.model, assignment.effort
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry()
    try:
        agent = registry.get(assignment.agent)
    finally:
        registry.close()
    return agent.provider, agent.model, agent.effort


def validate_assignments(
    assignments: dict[str, TemporaryProviderAssignment | AgentAssignment],
    roles: list[str] | None = None,
) -> dict[str, tuple[str, str | None, str | None]]:
    """Resolve every assignment and check it against the model catalog. Read-only.

    Args:
        roles: the blueprint's role names; when given, missing and extra roles are errors.

    Returns:
        role -> (provider, model, effort).

    Raises:
        ValidationError (exit 2): a missing/extra role, unknown model, unsupported effort.
        UsageError (exit 2): unknown provider, catalog never refreshed.
        NotFoundError: an agent target does not exist.
    """
    from wardian.providers.catalog import ModelCatalog

    if roles is not None:
        missing = sorted(set(roles) - set(assignments))
        extra = sorted(set(assignments) - set(roles))
        if missing:
            raise ValidationError(f"no assignment for role(s) {', '.join(missing)}",
                                  path="$", hint=f"the blueprint's roles: {', '.join(roles)}")
        if extra:
            raise ValidationError(f"unknown role(s) {', '.join(extra)}", path="$",
                                  hint=f"the blueprint's roles: {', '.join(roles)}")
    catalog = ModelCatalog()
    resolved: dict[str, tuple[str, str | None, str | None]] = {}
    try:
        for role, assignment in assignments.items():
            provider, model, effort = resolve_assignment(assignment)
            catalog.validate_selection(provider, model, effort, path=f"$.{role}")
            resolved[role] = (provider, model, effort)
    finally:
        catalog.close()
    return resolved
