"""Check a run's role assignments against its blueprint, and resolve them to a selection.

Assignments (DESIGN.md "Blueprints, runs, providers")::

    {"<role>": {"target_type": "temporary_provider", "provider": P, "model"?: M, "effort"?: E}}
    {"<role>": {"target_type": "agent", "agent": NAME_OR_ID}}

Roles must match the blueprint exactly: every role used by a role step must be assigned and
no unknown role may be assigned. The providers package does the shape and catalog checks
(`wardian.providers.assignments` / `ModelCatalog.validate_selection`) when it is installed;
otherwise a local shape check runs. Nothing ever substitutes another provider/model/effort.
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


def _local_shape(role: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError("expected an object", path=f"assignments.{role}")
    kind = value.get("target_type")
    allowed = {"temporary_provider": {"target_type", "provider", "model", "effort"},
               "agent": {"target_type", "agent"}}
    if kind not in allowed:
        raise ValidationError(f"target_type must be temporary_provider or agent, not {kind!r}",
                              path=f"assignments.{role}.target_type")
    for key in value:
        if key not in allowed[kind]:
            raise ValidationError(f"unknown key {key!r}", path=f"assignments.{role}.{key}",
                                  hint=f"allowed: {', '.join(sorted(allowed[kind]))}")
    need = "provider" if kind == "temporary_provider" else "agent"
    if not isinstance(value.get(need), str) or not value[need]:
        raise ValidationError(f"missing {need!r}", path=f"assignments.{role}.{need}")
    return dict(value)


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
    snapshot: dict[str, Any] = {}
    try:
        from wardian.providers import assignments as provider_assignments
    except ImportError:
        provider_assignments = None  # type: ignore[assignment]
    if provider_assignments is not None and hasattr(provider_assignments, "parse_assignments"):
        parsed = provider_assignments.parse_assignments(assignments)
        for role, item in parsed.items():
            snapshot[role] = (item.model_dump(exclude_none=True) if hasattr(item, "model_dump")
                              else dict(item))
    else:
        snapshot = {role: _local_shape(role, value) for role, value in assignments.items()}
    for role, item in snapshot.items():
        provider, model, effort = resolve_selection(item)
        if check_catalog:
            try:
                from wardian.providers.catalog import ModelCatalog
            except ImportError:
                continue
            ModelCatalog().validate_selection(provider, model, effort, path=role)
    return snapshot


def resolve_selection(item: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """``(provider, model, effort)`` of one assignment; an agent target uses that agent's.

    Raises:
        NotFoundError: the agent does not exist.
    """
    try:
        from wardian.providers import assignments as provider_assignments
    except ImportError:
        provider_assignments = None  # type: ignore[assignment]
    if provider_assignments is not None and hasattr(provider_assignments, "resolve_assignment"):
        parsed = provider_assignments.parse_assignments({"role": item})["role"]
        provider, model, effort = provider_assignments.resolve_assignment(parsed)
        return str(provider), model, effort
    if item.get("target_type") == "agent":
        from wardian.runtime.agents import AgentRegistry

        agent = AgentRegistry().get(str(item["agent"]))
        return agent.provider, agent.model, agent.effort
    return str(item["provider"]), item.get("model"), item.get("effort")
