"""Session-close invokers: define, validate, enable, and read their history.

An invoker names a blueprint, an agent, the boundary reasons it fires on (none = any),
whether it requires an archive, the role assignments and blueprint inputs. It is created
**disabled**; ``enable`` re-validates everything first, because the blueprint, the catalog
or the agent may have changed since ``add``. Validation refuses, with the reason:

* a blueprint that does not exist, is broken, or does not accept the ``session-close``
  trigger;
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

from wardian.errors import UsageError, ValidationError
from wardian.invokers.store import Invoker, InvokerStore
from wardian.runtime.session_events import BOUNDARIES

if TYPE_CHECKING:  # pydantic models: imported when a blueprint is validated
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = [
    "MissingInputs",
    "ValidatedDefinition",
    "add_session_close",
    "history",
    "set_enabled",
    "summarise",
    "update_session_close",
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


def add_session_close(
    *,
    blueprint: str,
    name: str,
    agent: str,
    boundaries: list[str],
    require_archive: bool,
    assignments: str | dict[str, Any],
    inputs: dict[str, str] | None = None,
) -> Invoker:
    """Validate and create a session-close invoker, **disabled** (atomic insert).

    Args:
        blueprint: blueprint id or path. name: label. agent: agent name or id.
        boundaries: subset of `BOUNDARIES` (empty = any).
        require_archive: record a skipped run when the session left no archive.
        assignments: JSON text or dict. inputs: ``--input`` pairs.

    Raises:
        UsageError: unknown boundary. See `validate_definition` for the rest.
    """
    from wardian.runtime.agents import AgentRegistry

    for boundary in boundaries:
        if boundary not in BOUNDARIES:
            raise UsageError(
                f"unknown boundary {boundary!r}", hint=f"use one of: {', '.join(BOUNDARIES)}"
            )
    resolved = AgentRegistry().get(agent)
    definition = validate_definition(blueprint, assignments, dict(inputs or {}),
                                     command="wardian automation session-close add")
    return InvokerStore().add(
        KIND,
        name=name,
        blueprint_id=definition.blueprint_id,
        agent_id=resolved.id,
        assignments=definition.assignments,
        inputs=definition.inputs,
        config={"boundaries": sorted(set(boundaries), key=boundaries.index),
                "require_archive": bool(require_archive)},
    )


def update_session_close(
    invoker_ref: str,
    *,
    inputs: dict[str, str] | None = None,
    assignments: str | None = None,
    boundaries: list[str] | None = None,
    require_archive: bool | None = None,
    name: str | None = None,
) -> Invoker:
    """Edit a session-close invoker, validated exactly as `add_session_close` (atomic).

    `inputs` are merged (given keys replace stored ones, others stay); `assignments` and
    `boundaries` replace the stored ones; None leaves a field as it is. The enabled state
    and the run history are kept.

    Raises:
        UsageError: nothing to change, or an unknown boundary. Otherwise as
            `validate_definition`; nothing is changed then.
    """
    store = InvokerStore()
    invoker = store.get(invoker_ref, kind=KIND)
    if all(v is None for v in (inputs, assignments, boundaries, require_archive, name)):
        raise UsageError("nothing to change", hint="pass --input KEY=VALUE, --assignments "
                         "JSON, --boundary B, --require-archive/--no-require-archive or --name")
    for boundary in boundaries or []:
        if boundary not in BOUNDARIES:
            raise UsageError(
                f"unknown boundary {boundary!r}", hint=f"use one of: {', '.join(BOUNDARIES)}"
            )
    definition = validate_definition(
        invoker.blueprint_id, invoker.assignments if assignments is None else assignments,
        dict(inputs or {}), stored_inputs=invoker.inputs,
        command=f"wardian automation session-close set {invoker.id[:8]}")
    config = dict(invoker.config)
    if boundaries is not None:
        config["boundaries"] = sorted(set(boundaries), key=boundaries.index)
    if require_archive is not None:
        config["require_archive"] = bool(require_archive)
    return store.update(invoker.id, name=name, assignments=definition.assignments,
                        inputs=definition.inputs, config=config)


def set_enabled(invoker_ref: str, enabled: bool) -> Invoker:
    """Enable (after re-validating blueprint, assignments, catalog and agent) or disable.

    Raises:
        NotFoundError: no such invoker or its agent is gone. Validation errors as in
            `validate_definition`; the invoker then stays disabled.
    """
    store = InvokerStore()
    invoker = store.get(invoker_ref, kind=KIND)
    if enabled:
        from wardian.errors import NotFoundError
        from wardian.runtime.agents import AgentRegistry

        if AgentRegistry().find(invoker.agent_id) is None:
            raise NotFoundError(
                f"invoker {invoker.id[:8]}'s agent {invoker.agent_id[:8]} no longer exists",
                hint="remove this invoker and add one for an existing agent",
            )
        validate_definition(invoker.blueprint_id, invoker.assignments, {},
                            stored_inputs=invoker.inputs, origin=f"invoker {invoker.id[:8]}",
                            command=f"wardian automation session-close set {invoker.id[:8]}")
    return store.set_enabled(invoker.id, enabled)


@dataclass(frozen=True)
class BlockedFire:
    """A session close that found the invoker broken: recorded, no run (``id`` is empty)."""

    id: str
    status: str
    skip_reason: str | None
    created_at: str
    invocation: dict[str, Any]
    error: str | None = None
    finished_at: str | None = None


def history(invoker_ref: str, *, limit: int = 100) -> tuple[Invoker, list[Any]]:
    """An invoker and its runs (including skipped ones) and its ``blocked`` fires (events
    that found it broken), newest first. Read-only."""
    from wardian.engine.runs import RunStore
    from wardian.invokers.drain import FireLog

    invoker = InvokerStore().get(invoker_ref, kind=KIND)
    runs: list[Any] = RunStore(recover=False).list(invoker_id=invoker.id, limit=limit)
    fires = FireLog()
    try:
        blocked = [BlockedFire("", "blocked", f.skip_reason, f.created_at,
                               {"payload": {"boundary_id": f.event_id}})
                   for f in fires.for_invoker(invoker.id, limit) if f.outcome == "blocked"]
    finally:
        fires.close()
    merged = sorted(runs + blocked, key=lambda r: str(getattr(r, "created_at", "")),
                    reverse=True)
    return invoker, merged[:limit]


def summarise(invoker: Invoker, *, agent_name: str | None = None,
              last_run: Any = None) -> dict[str, Any]:
    """The JSON shape of ``list``/``show``: invoker + status (``enabled``, ``disabled`` or
    ``broken``, with ``broken_reason`` and ``fix``) + boundaries + last outcome (with the
    failed run's ``error``)."""
    from wardian.invokers.health import invoker_problem

    doc = invoker.to_json()
    problem = invoker_problem(invoker)
    doc["status"] = "broken" if problem else "enabled" if invoker.enabled else "disabled"
    doc["broken_reason"] = problem.reason if problem else None
    doc["fix"] = problem.fix if problem else None
    doc["agent_name"] = agent_name
    doc["boundaries"] = invoker.boundaries or ["any"]
    doc["require_archive"] = bool(invoker.config.get("require_archive"))
    doc["last_outcome"] = None
    if last_run is not None:
        doc["last_outcome"] = {
            "run_id": last_run.id,
            "status": last_run.status,
            "skip_reason": getattr(last_run, "skip_reason", None),
            "error": getattr(last_run, "error", None),
            "created_at": getattr(last_run, "created_at", None),
        }
    return doc
