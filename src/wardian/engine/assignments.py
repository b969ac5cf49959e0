"""Check a run's role assignments against its blueprint, and resolve them to a selection.

Assignments (DESIGN.md "Blueprints, runs, providers")::

    {"<role>": {"target_type": "temporary_provider", "provider": P, "model"?: M, "effort"?: E}}
    {"<role>": {"target_type": "agent", "agent": NAME_OR_ID}}

Roles must match the blueprint exactly: every role used by a role step must be assigned and
no unknown role may be assigned (checked here, naming the nearest role). The providers
package does the shape and catalog checks (`wardian.providers.assignments.parse_assignments`
and `validate_assignments`). Nothing ever substitutes another provider/model/effort.
"""

from __future__ import annotations

import json
from typing import Any

from wardian.blueprints.errors import nearest
from wardian.errors import ValidationError

__all__ = ["check_assignments", "parse_assignments_json", "resolve_selection"]


def parse_assignments_json(text: str | dict[str, Any] | None) -> dict[str, Any]:
    """Parse ``--assignments`` JSON text (or pass a dict through).

    Raises:
        ValidationError: not JSON, or not an object.
    """
    if text is None or text == "":
        return {}
    if isinstance(text, dict):
        return text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"not valid JSON: {exc.msg} at column {exc.colno}",
                              path="assignments",
                              hint='e.g. {"curator": {"target_type": "temporary_provider", '
                                   '"provider": "builtin"}}') from exc
    if not isinstance(data, dict):
        raise ValidationError("expected a JSON object of role -> assignment",
                              path="assignments")
    return data


def check_assignments(loaded: Any, assignments: dict[str, Any], *, check_catalog: bool = True
                      ) -> dict[str, Any]:
    """Validate `assignments` for blueprint `loaded`; returns the normalised snapshot.

    Args:
        loaded: a `LoadedBlueprint`.
        assignments: role -> assignment dict.
        check_catalog: also check provider/model/effort against the model catalog.

    Raises:
        ValidationError (exit 2): an unassigned role, an unknown role (nearest named), a
            bad shape, or a selection the catalog does not know (with the command to run).
    """
    bp = loaded.blueprint
    used = sorted({s.role for s in bp.steps if s.role is not None})
    for role in assignments:
        if role not in bp.roles:
            guess = nearest(role, bp.roles)
            raise ValidationError(
                f"unknown role {role!r}; blueprint {bp.blueprint.id!r} declares "
                + (", ".join(sorted(bp.roles)) or "no roles")
                + (f" (did you mean {guess!r}?)" if guess else ""),
                path=f"assignments.{role}")
    missing = [r for r in used if r not in assignments]
    if missing:
        raise ValidationError(
            f"role(s) {', '.join(missing)} used by blueprint {bp.blueprint.id!r} have no "
            "assignment", path="assignments",
            hint='pass --assignments \'{"' + missing[0] + '": {"target_type": '
                 '"temporary_provider", "provider": "builtin"}}\'')
    from wardian.providers.assignments import parse_assignments, validate_assignments

    parsed = parse_assignments(assignments)
    if check_catalog:
        validate_assignments(parsed)  # resolves agent targets and checks the catalog
    else:
        for item in parsed.values():
            _resolve(item)  # an agent target must still exist
    return {role: item.model_dump(exclude_none=True) for role, item in parsed.items()}


def resolve_selection(item: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """``(provider, model, effort)`` of one stored assignment; an agent target uses that
    agent's current selection.

    Raises:
        ValidationError: a malformed assignment. NotFoundError: the agent does not exist.
    """
    from wardian.providers.assignments import parse_assignments

    return _resolve(parse_assignments({"role": item})["role"])


def _resolve(item: Any) -> tuple[str, str | None, str | None]:
    from wardian.providers.assignments import resolve_assignment

    provider, model, effort = resolve_assignment(item)
    return str(provider), model, effort
