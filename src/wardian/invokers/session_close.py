"""An invoker's definition and its validation: the one rule every invoker kind is checked
by, at ``add``, ``set`` and ``enable``, and again when a session-close event or a schedule
slot fires it (`wardian.invokers.health`).

An invoker names a blueprint, an agent, the role assignments and blueprint inputs (a
session-close invoker also the boundary reasons it fires on and whether it requires an
archive). The operator's commands that define, enable and list invokers are service
functions of the application layer, which call this. Validation refuses, with the reason:

* a blueprint that does not exist, is broken, or does not accept the invoker's trigger
  (``session-close`` or ``schedule``);
* assignments that name a role the blueprint does not declare, or leave a role its steps
  use unassigned (`wardian.engine.assignments.check_assignments`, the engine's own rule);
* a provider/model/effort the model catalog does not list
  (`ModelCatalog.validate_selection` names the command to refresh it);
* unknown inputs or values of the wrong type.

Firing is `wardian.invokers.drain`. Spec: "Optional consolidation" (spec/agent-memory.md);
DESIGN.md "Invokers"; CLI.md ``automation session-close``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wardian.errors import ValidationError

if TYPE_CHECKING:  # pydantic models: imported when a blueprint is validated
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = [
    "MissingInputs",
    "ValidatedDefinition",
    "validate_definition",
]

KIND = "session-close"


class MissingInputs(ValidationError):
    """The blueprint requires inputs (declared without a default) that are not given.

    Attributes:
        names: the missing input names, sorted.
    """

    def __init__(self, blueprint_id: str, names: list[str], *, command: str) -> None:
        self.names = names
        super().__init__(
            f"blueprint {blueprint_id!r} requires input(s) {', '.join(names)} "
            "(declared without a default)", source="--input",
            hint=f"pass {' '.join(f'--input {n}=VALUE' for n in names)} to `{command}`")


@dataclass(frozen=True)
class ValidatedDefinition:
    """A definition that passed validation: blueprint id, assignments and typed inputs."""

    blueprint_id: str
    assignments: dict[str, Any]
    inputs: dict[str, Any]
    selections: dict[str, dict[str, Any]]


def validate_definition(
    blueprint_ref: str,
    assignments: str | dict[str, Any],
    inputs: dict[str, Any],
    *,
    trigger: str = KIND,
    inputs_from_text: bool = True,
    check_catalog: bool = True,
    origin: str = "--assignments",
    command: str = "add",
    stored_inputs: dict[str, Any] | None = None,
    check_roles: bool = True,
    blueprint: LoadedBlueprint | None = None,
) -> ValidatedDefinition:
    """Check a blueprint + assignments + inputs for an invoker. Read-only.

    Args:
        blueprint_ref: blueprint id (or a path to a blueprint file).
        assignments: JSON text or dict, role -> assignment (contracts.md "Providers").
        inputs: input name -> value (strings from ``--input k=v`` when `inputs_from_text`).
        trigger: the trigger the blueprint must accept (``session-close`` or ``schedule``).
        check_catalog: validate each role's provider/model/effort against the catalog.
        origin: where the assignments came from, starting every assignments message
            (``--assignments`` at ``add``; ``invoker <id8>`` when re-checking stored ones).
        command: the command a missing-input hint tells the operator to re-run.
        stored_inputs: already typed values (an invoker's, at ``set``) that `inputs`
            extend or override; checked as stored values, not as text.
        check_roles: check the assignments against the blueprint's roles (False: only the
            blueprint, trigger and inputs — `wardian.invokers.health`).
        blueprint: `blueprint_ref` already loaded and validated by the caller (the drain
            loads it once per event); None = load it here.

    Returns:
        The blueprint's id, the assignments as given (parsed JSON), typed inputs, and
        each role's resolved ``{provider, model, effort}``.

    Raises:
        NotFoundError: no such blueprint or agent (assignment to an agent).
        BlueprintError: the blueprint is broken.
        MissingInputs: a required input (no default) is not given.
        ValidationError / UsageError: roles, selection, trigger or inputs are wrong.
    """
    from wardian.blueprints.library import find_blueprint
    from wardian.blueprints.schema import coerce_input
    from wardian.engine.actions import known_actions

    loaded = blueprint or find_blueprint(blueprint_ref, known_actions=known_actions())
    bp = loaded.blueprint
    if trigger not in bp.triggers:
        raise ValidationError(
            f"blueprint {loaded.id!r} does not accept the {trigger!r} trigger "
            f"(it accepts: {', '.join(bp.triggers)})",
            path="triggers", source=str(loaded.path),
            hint=f"add {trigger} to its `triggers:` list, or pick another blueprint",
        )
    from wardian.engine.assignments import check_assignments, resolve_selection

    # The one assignments parser (the providers'): bad JSON says line and column.
    if not check_roles:
        snapshot: dict[str, Any] = assignments if isinstance(assignments, dict) else {}
    else:
        snapshot = check_assignments(loaded, assignments, check_catalog=check_catalog,
                                     origin=origin)
    selections: dict[str, dict[str, Any]] = {}
    for role, item in (snapshot.items() if check_roles else ()):
        provider, model, effort = resolve_selection(item)
        selections[role] = {"provider": provider, "model": model, "effort": effort}
    typed: dict[str, Any] = {}
    given = [(name, value, False) for name, value in (stored_inputs or {}).items()
             if name not in inputs]
    given += [(name, value, inputs_from_text) for name, value in inputs.items()]
    for name, value, from_text in given:
        spec = bp.inputs.get(name)
        if spec is None:
            raise ValidationError(
                f"unknown input {name!r} for blueprint {loaded.id!r}", source="--input",
                hint=f"its inputs are: {', '.join(sorted(bp.inputs)) or '(none)'}",
            )
        try:
            typed[name] = coerce_input(spec, value, from_text=from_text)
        except ValueError as exc:
            raise ValidationError(
                f"input {name!r}: expected {exc}, got {value!r}", source="--input"
            ) from exc
    missing = sorted(n for n, spec in bp.inputs.items() if spec.default is None
                     and n not in typed)
    if missing:
        raise MissingInputs(loaded.id, missing, command=command)
    return ValidatedDefinition(loaded.id, snapshot, typed, selections)
