"""Schedule invokers as the operator handles them (``wardian automation schedule …``;
CLI.md "automation schedule"): one service function per command.

Validation happens here, at ``add`` and again at ``enable`` (blueprint exists, is valid and
accepts the ``schedule`` trigger; the agent exists; every role has an assignment that
resolves against the model catalog). Invokers are created **disabled**. Enabling records
``active_since`` in the same transaction: slots before it are never owed (no catch-up of a
time the invoker was off); slots of the previous enabled period that no daemon recorded are
recorded first as ``skipped: disabled``.

The invoker mechanics stay in `wardian.invokers`: the schedule's fire times and slot
decisions (`ScheduleConfig`, `plan_due_slots`), the slot table (`SlotStore`), the invoker
table (`InvokerStore`) and the daemon that fires them. `Invoker` and `Slot` are re-exported
for the surfaces' rendering, and `parse_duration` / `format_duration` for the duration
syntax of ``--every`` and ``--misfire-grace`` (``30s``, ``5m``, ``1h30m``).

Spec: CLI.md ``automation schedule``; DESIGN.md "Invokers".
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from wardian._db import StateDB, atomic
from wardian._util import format_utc, new_id, parse_utc, utc_now
from wardian.app.invoker_names import check_name_free
from wardian.errors import UsageError, WardianError
from wardian.invokers.schedule import (
    DEFAULT_MAX_CATCH_UP,
    DEFAULT_MISFIRE_GRACE_S,
    ScheduleConfig,
    format_duration,
    parse_duration,
    plan_due_slots,
)
from wardian.invokers.slots import Slot, SlotStore, invoker_blueprint
from wardian.invokers.store import Invoker, InvokerStore

if TYPE_CHECKING:  # pydantic models: imported when a blueprint is validated
    from wardian.blueprints.validate import LoadedBlueprint
    from wardian.engine.runs import Run

__all__ = [
    "DEFAULT_CRON",
    "Invoker",
    "Slot",
    "add_schedule",
    "describe_schedule",
    "format_duration",
    "get_schedule",
    "list_schedules",
    "parse_duration",
    "remove_schedule",
    "run_now",
    "schedule_history",
    "set_schedule_enabled",
    "update_schedule",
]

KIND = "schedule"

DEFAULT_CRON = "0 3 * * 0"
"""The schedule of an invoker added without ``--cron`` or ``--every``: weekly, Sundays at
03:00 in its time zone (what the ``memory-review`` blueprint is meant to run on)."""


def _validate(state: StateDB, blueprint_id: str, agent: str, assignments: dict[str, Any] | str,
              inputs: dict[str, Any] | None = None, *, origin: str = "--assignments",
              inputs_from_text: bool = True, command: str = "add",
              stored_inputs: dict[str, Any] | None = None,
              blueprint: LoadedBlueprint | None = None,
              ) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Check blueprint, agent, assignments and inputs; return (agent id, assignments
    snapshot, typed inputs).

    The same rule as session-close invokers
    (`wardian.invokers.session_close.validate_definition`, with the ``schedule`` trigger):
    every role a step uses is assigned, no undeclared role is, each selection is in the
    model catalog, every input is declared and well typed and every required input is set;
    every assignments message starts with `origin` (``--assignments``, or ``invoker
    <id8>`` for stored assignments).
    """
    from wardian.invokers.session_close import validate_definition
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    agent_id = registry.get(agent).id
    definition = validate_definition(
        blueprint_id, assignments, dict(inputs or {}), trigger="schedule",
        inputs_from_text=inputs_from_text, origin=origin,
        command=f"wardian automation schedule {command}", stored_inputs=stored_inputs,
        blueprint=blueprint)
    return agent_id, definition.assignments, definition.inputs


def add_schedule(state: StateDB, *, blueprint_id: str, name: str, agent: str, assignments: str,
                 cron: str | None = None, every_s: float | None = None, timezone: str = "UTC",
                 misfire_grace_s: float | None = None, catch_up: str = "latest",
                 max_catch_up: int | None = None, overlap: str = "skip",
                 inputs: dict[str, Any] | None = None) -> Invoker:
    """Validate and store a new schedule invoker in `state`, **disabled** (atomic).

    Args:
        cron / every_s: at most one (crontab text / interval seconds); neither =
            `DEFAULT_CRON` (weekly).
        timezone: IANA zone for the cron expression and for displayed times.
        misfire_grace_s, max_catch_up: None = the defaults (300 s, 10); `max_catch_up`
            only with ``catch_up="all"``.
        assignments: JSON text ``{role: assignment}``.

    Raises:
        UsageError / ValidationError (exit 2): a bad flag, blueprint, assignment or zone.
        NotFoundError: unknown agent or blueprint.
        ConflictError (exit 4): another schedule invoker has this name.
    """
    if max_catch_up is not None and catch_up != "all":
        raise UsageError(
            f"--max-catch-up caps --catch-up all; with --catch-up {catch_up} it would be "
            "ignored", hint="drop --max-catch-up, or add --catch-up all")
    if cron is None and every_s is None:
        cron = DEFAULT_CRON
    config = ScheduleConfig(
        cron=cron, every_s=every_s, timezone=timezone,
        misfire_grace_s=DEFAULT_MISFIRE_GRACE_S if misfire_grace_s is None else misfire_grace_s,
        catch_up=catch_up, overlap=overlap,
        max_catch_up=DEFAULT_MAX_CATCH_UP if max_catch_up is None else max_catch_up,
        anchor=format_utc(utc_now().replace(microsecond=0)),
    )
    agent_id, raw, typed = _validate(state, blueprint_id, agent, assignments, inputs)
    store = InvokerStore(state)
    if name.strip():  # an empty name is the store's usage error
        check_name_free(store, KIND, name)
    return store.add(KIND, name=name, blueprint_id=blueprint_id, agent_id=agent_id,
                     assignments=raw, inputs=typed, config=config.to_config())


def get_schedule(state: StateDB, ref: str) -> Invoker:
    """The schedule invoker in `state` with this id, id prefix or name. Read-only.

    Raises:
        NotFoundError / AmbiguousIdError.
    """
    store = InvokerStore(state)
    return store.get(ref, kind=KIND)


def _missed_now(invoker: Invoker, config: ScheduleConfig, slots: SlotStore,
                now: datetime) -> tuple[int, int]:
    """(slots owed since the last recorded one, how many of them would run now)."""
    state = slots.state(invoker.id)
    if not invoker.enabled or state is None or state.disabled_at is not None:
        return 0, 0
    last = slots.last_slot(invoker.id)
    since = parse_utc(state.active_since)
    cursor = max(last, since) if last else since
    due = config.fire_times.between(cursor, now, limit=100_000)
    decisions = plan_due_slots(config, due, now)
    return len(due), sum(1 for d in decisions if d.outcome == "run")


def describe_schedule(state: StateDB, invoker: Invoker, *, now: datetime | None = None,
                      slots: SlotStore | None = None, upcoming: int = 5) -> dict[str, Any]:
    """The invoker plus its status (``enabled``/``disabled``/``broken`` with
    ``broken_reason`` and ``fix``), next fire times (UTC and in its zone), owed and missed
    slots, and last outcome, as a JSON-ready dict, from `state` (`slots`: its `SlotStore`,
    when the caller has one). Read-only."""
    now = now or utc_now()
    slots = SlotStore(state) if slots is None else slots
    from wardian.invokers.health import invoker_problem

    doc = invoker.to_json()
    problem = invoker_problem(invoker, state=state)
    doc.update(status="broken" if problem else "enabled" if invoker.enabled else "disabled",
               broken_reason=problem.reason if problem else None,
               fix=problem.fix if problem else None)
    try:
        config = ScheduleConfig.from_config(invoker.config)
    except WardianError as exc:
        doc.update(schedule=None, config_error=exc.render(), next_fire_times=[])
        return doc
    nxt = config.fire_times.upcoming(now, upcoming)
    owed, would_run = _missed_now(invoker, config, slots, now)
    last = slots.last_outcome(invoker.id)
    doc.update(
        schedule=config.describe(),
        timezone=config.timezone,
        next_fire_times=[format_utc(t) for t in nxt],
        next_fire_times_local=[t.astimezone(config.zone).strftime("%Y-%m-%d %H:%M:%S %Z")
                               for t in nxt],
        slots_owed_now=owed,
        missed_slots_would_run_now=would_run,
        last_outcome=last.to_json() if last else None,
    )
    return doc


def list_schedules(state: StateDB, *, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every schedule invoker in `state` described by `describe_schedule`, oldest first.
    Read-only."""
    store = InvokerStore(state)
    slots = SlotStore(state)
    return [describe_schedule(state, inv, now=now, slots=slots) for inv in store.list(kind=KIND)]


def set_schedule_enabled(state: StateDB, ref: str, enabled: bool, *,
                         now: datetime | None = None) -> Invoker:
    """Enable (re-validating first) or disable a schedule invoker (atomic with its
    ``active_since`` / ``disabled_at`` bookkeeping).

    Raises:
        NotFoundError / AmbiguousIdError; UsageError / ValidationError when enabling an
        invoker whose blueprint, agent or assignments no longer validate.
    """
    store = InvokerStore(state)
    invoker = store.get(ref, kind=KIND)
    moment = now or utc_now()
    at = format_utc(moment)
    slots = SlotStore(store.db)
    if enabled:
        config = ScheduleConfig.from_config(invoker.config)
        _validate(state, invoker.blueprint_id, invoker.agent_id, invoker.assignments,
                  origin=f"invoker {invoker.id[:8]}", inputs_from_text=False,
                  stored_inputs=invoker.inputs, command=f"set {invoker.id[:8]}")
        # Slots that fell due before an earlier disable, with no daemon running to record
        # them, are recorded now (skipped: disabled); enabling forgets that period.
        slots.record_disabled_period(invoker.id, config, now=moment)
    with atomic(store.conn):
        if enabled:
            slots.mark_enabled(invoker.id, at)
        else:
            slots.mark_disabled(invoker.id, at)
        return store.set_enabled(invoker.id, enabled)


def update_schedule(state: StateDB, ref: str, *, inputs: dict[str, str] | None = None,
                    assignments: str | None = None, name: str | None = None) -> Invoker:
    """Edit a schedule invoker's inputs (merged: given keys replace, others stay),
    assignments (replaced) or name, validated exactly as `add_schedule` validates (atomic).
    Its enabled state, schedule and slot history are kept.

    Raises:
        NotFoundError / AmbiguousIdError; UsageError / ValidationError as `add_schedule`,
        ConflictError when `name` is another schedule invoker's (nothing is changed then).
    """
    store = InvokerStore(state)
    invoker = store.get(ref, kind=KIND)
    if inputs is None and assignments is None and name is None:
        raise UsageError("nothing to change",
                         hint="pass --input KEY=VALUE, --assignments JSON or --name")
    if name is not None and name.strip():
        check_name_free(store, KIND, name,
                        invoker_id=invoker.id)
    _, raw, typed = _validate(
        state, invoker.blueprint_id, invoker.agent_id,
        invoker.assignments if assignments is None else assignments,
        dict(inputs or {}), stored_inputs=invoker.inputs,
        command=f"set {invoker.id[:8]}")
    return store.update(invoker.id, name=name, assignments=raw, inputs=typed)


def remove_schedule(state: StateDB, ref: str) -> Invoker:
    """Delete a schedule invoker; its slot history and runs stay (atomic).

    Raises:
        NotFoundError / AmbiguousIdError.
    """
    store = InvokerStore(state)
    invoker = store.get(ref, kind=KIND)
    slots = SlotStore(store.db)
    with atomic(store.conn):
        slots.forget(invoker.id)
        return store.remove(invoker.id)


def schedule_history(state: StateDB, ref: str, *, limit: int = 50
                     ) -> tuple[Invoker, list[Slot]]:
    """The invoker in `state` and its recorded slots, newest first. Read-only."""
    invoker = get_schedule(state, ref)
    slots = SlotStore(state)
    return invoker, slots.history(invoker.id, limit=limit)


def run_now(state: StateDB, ref: str, *, wait: bool = True) -> Run:
    """Start one manual run of the invoker's blueprint now, outside its slots.

    The run's key is ``schedule:<invoker id>:manual:<uuid>``; it does not touch the slot
    table. With `wait`, executes it in this process and returns the finished run.

    Raises:
        NotFoundError; ValidationError when the assignments no longer validate.
    """
    from wardian.engine.runs import RunStore

    invoker = get_schedule(state, ref)
    loaded = invoker_blueprint(invoker)  # once: checked, the run created, and run with it
    _validate(state, invoker.blueprint_id, invoker.agent_id, invoker.assignments,
              origin=f"invoker {invoker.id[:8]}", inputs_from_text=False,
              stored_inputs=invoker.inputs, command=f"set {invoker.id[:8]}", blueprint=loaded)
    key = f"schedule:{invoker.id}:manual:{new_id()}"
    runs = RunStore(state)
    run, _ = runs.create_run(
        blueprint_id=invoker.blueprint_id, agent_id=invoker.agent_id,
        assignments=invoker.assignments, inputs=invoker.inputs,
        invocation={"trigger": "schedule", "payload": {
            "invoker_id": invoker.id, "invoker_name": invoker.name, "manual": True,
            "scheduled_time": format_utc(utc_now()), "idempotency_key": key}},
        idempotency_key=key, invoker_id=invoker.id, blueprint=loaded)
    if not wait:
        return run
    from wardian.engine.executor import execute_run

    return execute_run(run.id, blueprint=loaded)
