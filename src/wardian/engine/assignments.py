"""Check a run's role assignments against its blueprint, and resolve them to a selection.

Assignments (DESIGN.md "Blueprints, runs, providers")::

    {"<role>": {"target_type": "temporary_provider", "provider": P, "model"?: M, "effort"?: E}}
    {"<role>": {"target_type": "agent", "agent": NAME_OR_ID}}

The providers package owns the document: JSON and shape
(`wardian.providers.assignments.parse_assignments`), agent targets and the catalog
(`validate_assignments`). This module adds only what needs the blueprint: every role used by
a role step must be assigned and no undeclared role may be assigned (naming the nearest
role), and each role step's provider must be able to answer its output schema (the
``builtin`` provider answers only the schemas it implements:
`ProviderAdapter.answerable_outputs`, `unanswerable_outputs`). Every message starts with
``--assignments`` (or the given origin). Nothing ever substitutes another
provider/model/effort.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wardian.errors import ValidationError

if TYPE_CHECKING:  # pydantic models: imported when a blueprint is validated
    from wardian._db import StateDB
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = ["agent_selection", "check_assignments", "parse_assignments_json", "resolve_selection",
           "unanswerable_outputs"]

ORIGIN = "--assignments"
"""Where assignments come from, as messages name it."""


def parse_assignments_json(text: str | dict[str, Any] | None, *, origin: str = ORIGIN
                           ) -> dict[str, Any]:
    """Parse ``--assignments`` JSON text (or a dict) into role -> normalised assignment.

    Returns:
        ``{role: {"target_type": …, …}}`` without unset fields; ``{}`` for None or "".

    Raises:
        ValidationError (exit 2): not JSON (line, column), not an object, or a bad field,
            each message starting with `origin` and the role.
    """
    if text is None or text == "":
        return {}
    from wardian.providers.assignments import parse_assignments

    parsed = parse_assignments(text, origin=origin)
    return {role: item.model_dump(exclude_none=True) for role, item in parsed.items()}


def check_assignments(loaded: LoadedBlueprint, assignments: str | dict[str, Any] | None, *,
                      check_catalog: bool = True, origin: str = ORIGIN) -> dict[str, Any]:
    """Validate `assignments` for blueprint `loaded`; returns the normalised snapshot. Read-only.

    Args:
        loaded: the validated blueprint.
        assignments: JSON text or a role -> assignment dict.
        check_catalog: also check provider/model/effort against the model catalog.
        origin: where the assignments came from, for messages.

    Raises:
        ValidationError (exit 2): a bad document or field, an unknown role (nearest named),
            a used role without an assignment, an unknown provider, a catalog never
            refreshed, an unknown model or an unsupported effort (with how to fix it).
        OutputUnsupported (exit 2): a role's provider cannot answer a step's output
            schema (the first such step; `unanswerable_outputs` lists them all).
        NotFoundError (exit 1): an agent target does not exist.
    """
    from wardian.blueprints.errors import nearest
    from wardian.providers.assignments import parse_assignments, validate_assignments

    bp = loaded.blueprint
    parsed = parse_assignments(assignments or {}, origin=origin)
    for role in parsed:
        if role not in bp.roles:
            guess = nearest(role, bp.roles)
            raise ValidationError(
                f"unknown role {role!r}; blueprint {bp.blueprint.id!r} declares "
                + (", ".join(sorted(bp.roles)) or "no roles"),
                source=origin,
                hint=f"did you mean {guess!r}?" if guess else "remove it from " + origin)
    used = sorted({s.role for s in bp.steps if s.role is not None})
    missing = [r for r in used if r not in parsed]
    if missing:
        raise ValidationError(
            f"role(s) {', '.join(missing)} used by blueprint {bp.blueprint.id!r} have no "
            "assignment", source=origin,
            hint=f'pass {origin} \'{{"{missing[0]}": {{"target_type": '
                 '"temporary_provider", "provider": "builtin"}}\'')
    validate_assignments(parsed, origin=origin, check_catalog=check_catalog,
                         agents=agent_selection)
    normalised = {role: item.model_dump(exclude_none=True) for role, item in parsed.items()}
    refused = unanswerable_outputs(loaded, normalised, origin=origin)
    if refused:
        raise refused[0]
    return normalised


def unanswerable_outputs(loaded: LoadedBlueprint, assignments: dict[str, Any], *,
                         origin: str = ORIGIN) -> list[Any]:
    """One `OutputUnsupported` per role step whose assigned provider cannot answer its
    output schema (`ProviderAdapter.answers_output`; an agent target is checked with the
    agent's current provider), in step order; ``path`` is ``steps[N].output``. Read-only.

    Args:
        loaded: the validated blueprint.
        assignments: role -> assignment, as `check_assignments` returns them; roles
            without one are skipped.

    Raises:
        UnknownProvider / NotFoundError: as `resolve_selection`.
    """
    from wardian.providers.errors import OutputUnsupported
    from wardian.providers.registry import get_adapter

    providers: dict[str, str] = {}
    found: list[Any] = []
    for index, step in enumerate(loaded.blueprint.steps):
        if step.role is None or step.role not in assignments:
            continue
        if step.role not in providers:
            providers[step.role] = resolve_selection(assignments[step.role], role=step.role)[0]
        provider = providers[step.role]
        adapter = get_adapter(provider)
        ref = loaded.output_refs.get(step.id)
        if not adapter.answers_output(ref):
            found.append(OutputUnsupported(provider, ref, adapter.answerable_outputs() or [],
                                           step=step.id, role=step.role,
                                           path=f"steps[{index}].output", source=origin))
    return found


def resolve_selection(item: dict[str, Any], *, role: str = "assignment"
                      ) -> tuple[str, str | None, str | None]:
    """``(provider, model, effort)`` of one stored assignment; an agent target uses that
    agent's current selection.

    Args:
        item: one role's assignment dict (as `check_assignments` returned it).
        role: the role's name, for messages.

    Raises:
        ValidationError: a malformed assignment. NotFoundError: the agent does not exist.
    """
    from wardian.providers.assignments import parse_assignments, resolve_assignment

    return resolve_assignment(parse_assignments({role: item})[role], agents=agent_selection)


def agent_selection(name_or_id: str, state: StateDB | None = None
                    ) -> tuple[str, str | None, str | None]:
    """``(provider, model, effort)`` of a registered agent (name, id or unique prefix) in
    the open state database `state` (default: the installation's). Read-only. The
    `AgentLookup` that providers' assignment checks are given: the agent registry is the
    runtime's, which the providers package must not import.

    Raises:
        NotFoundError / AmbiguousIdError: no such agent / the prefix is ambiguous.
    """
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry

    agent = AgentRegistry(state or open_state_db()).get(name_or_id)
    return agent.provider, agent.model, agent.effort
