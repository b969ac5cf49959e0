"""Session-close invokers as the operator handles them (``wardian automation session-close
…``; CLI.md "automation session-close"): one service function per command.

An invoker is created **disabled**; ``enable`` re-validates everything first, because the
blueprint, the catalog or the agent may have changed since ``add``. The rule itself is
`validate_definition` (the invokers' own, also applied when an event fires the invoker).
Listing shows each invoker with its status, agent name and last outcome, and its history
as plain documents. Read-only except where a function says otherwise.

Spec: "Optional consolidation" (spec/agent-memory.md); DESIGN.md "Invokers".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wardian.app.invoker_names import check_name_free
from wardian.errors import UsageError
from wardian.invokers.session_close import validate_definition
from wardian.invokers.store import Invoker, InvokerStore
from wardian.runtime.session_events import BOUNDARIES

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.engine.runs import Run

__all__ = [
    "Invoker",
    "add_session_close",
    "curator_assignment",
    "list_session_close",
    "remove_session_close",
    "session_close_history",
    "set_enabled",
    "show_session_close",
    "update_session_close",
]

KIND = "session-close"


def _check_boundaries(boundaries: list[str]) -> None:
    for boundary in boundaries:
        if boundary not in BOUNDARIES:
            raise UsageError(
                f"unknown boundary {boundary!r}", hint=f"use one of: {', '.join(BOUNDARIES)}"
            )


def add_session_close(
    state: StateDB,
    *,
    blueprint: str,
    name: str,
    agent: str,
    boundaries: list[str],
    require_archive: bool,
    assignments: str | dict[str, Any],
    inputs: dict[str, str] | None = None,
) -> Invoker:
    """Validate and create a session-close invoker in `state`, **disabled** (atomic insert).

    Args:
        blueprint: blueprint id or path. name: label. agent: agent name or id.
        boundaries: subset of `BOUNDARIES` (empty = any).
        require_archive: record a skipped run when the session left no archive.
        assignments: JSON text or dict. inputs: ``--input`` pairs.

    Raises:
        UsageError: unknown boundary. ConflictError (exit 4): another session-close
            invoker has this name. See `validate_definition` for the rest.
    """
    from wardian.runtime.agents import AgentRegistry

    _check_boundaries(boundaries)
    resolved = AgentRegistry(state).get(agent)
    definition = validate_definition(blueprint, assignments, dict(inputs or {}),
                                     command="wardian automation session-close add")
    store = InvokerStore(state)
    if name.strip():  # an empty name is the store's usage error
        check_name_free(store, KIND, name)
    return store.add(
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
    state: StateDB,
    invoker_ref: str,
    *,
    inputs: dict[str, str] | None = None,
    assignments: str | None = None,
    boundaries: list[str] | None = None,
    require_archive: bool | None = None,
    name: str | None = None,
) -> Invoker:
    """Edit a session-close invoker in `state`, validated exactly as `add_session_close` (atomic).

    `inputs` are merged (given keys replace stored ones, others stay); `assignments` and
    `boundaries` replace the stored ones; None leaves a field as it is. The enabled state
    and the run history are kept.

    Raises:
        UsageError: nothing to change, or an unknown boundary. ConflictError (exit 4):
            `name` is another session-close invoker's. Otherwise as
            `validate_definition`; nothing is changed then.
    """
    store = InvokerStore(state)
    invoker = store.get(invoker_ref, kind=KIND)
    if all(v is None for v in (inputs, assignments, boundaries, require_archive, name)):
        raise UsageError("nothing to change", hint="pass --input KEY=VALUE, --assignments "
                         "JSON, --boundary B, --require-archive/--no-require-archive or --name")
    _check_boundaries(boundaries or [])
    if name is not None and name.strip():
        check_name_free(store, KIND, name,
                        invoker_id=invoker.id)
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


def set_enabled(state: StateDB, invoker_ref: str, enabled: bool) -> Invoker:
    """Enable (after re-validating blueprint, assignments, catalog and agent) or disable
    a session-close invoker in `state`.

    Raises:
        NotFoundError: no such invoker or its agent is gone. Validation errors as in
            `validate_definition`; the invoker then stays disabled.
    """
    store = InvokerStore(state)
    invoker = store.get(invoker_ref, kind=KIND)
    if enabled:
        from wardian.errors import NotFoundError
        from wardian.runtime.agents import AgentRegistry

        if AgentRegistry(state).find(invoker.agent_id) is None:
            raise NotFoundError(
                f"invoker {invoker.id[:8]}'s agent {invoker.agent_id[:8]} no longer exists",
                hint="remove this invoker and add one for an existing agent",
            )
        validate_definition(invoker.blueprint_id, invoker.assignments, {},
                            stored_inputs=invoker.inputs, origin=f"invoker {invoker.id[:8]}",
                            command=f"wardian automation session-close set {invoker.id[:8]}")
    return store.set_enabled(invoker.id, enabled)


def _summarise(state: StateDB, invoker: Invoker, *, agent_name: str | None, last_run: Run | None
               ) -> dict[str, Any]:
    """The JSON shape of ``list``/``show``: invoker + status (``enabled``, ``disabled`` or
    ``broken``, with ``broken_reason`` and ``fix``) + boundaries + last outcome (with the
    failed run's ``error``)."""
    from wardian.invokers.health import invoker_problem

    doc = invoker.to_json()
    problem = invoker_problem(invoker, state=state)
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
            "skip_reason": last_run.skip_reason,
            "error": last_run.error,
            "created_at": last_run.created_at,
        }
    return doc


def _docs(state: StateDB, invokers: list[Invoker]) -> list[dict[str, Any]]:
    from wardian.engine.runs import RunStore
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    runs = RunStore(state, recover=False)
    docs = []
    for inv in invokers:
        agent = registry.find(inv.agent_id)
        last = runs.list(invoker_id=inv.id, limit=1)
        docs.append(_summarise(state, inv, agent_name=agent.name if agent else None,
                               last_run=last[0] if last else None))
    return docs


def list_session_close(state: StateDB) -> list[dict[str, Any]]:
    """Every session-close invoker in `state` with its status (``enabled``, ``disabled`` or
    ``broken`` with its reason and fix), agent name, boundaries and last outcome."""
    return _docs(state, InvokerStore(state).list(kind=KIND))


def show_session_close(state: StateDB, ref: str) -> dict[str, Any]:
    """One session-close invoker in `state` (id or unique prefix), documented as in
    `list_session_close`.

    Raises:
        NotFoundError; AmbiguousIdError: the prefix names several.
    """
    return _docs(state, [InvokerStore(state).get(ref, kind=KIND)])[0]


def remove_session_close(state: StateDB, ref: str) -> Invoker:
    """Remove a session-close invoker from `state` (id or unique prefix); its runs stay in the run
    history. Returns the removed invoker.

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    store = InvokerStore(state)
    return store.remove(store.get(ref, kind=KIND).id)


def session_close_history(state: StateDB, ref: str, *, limit: int = 50
                          ) -> tuple[Invoker, list[dict[str, Any]]]:
    """The invoker and its runs (skipped ones too) and its ``blocked`` fires (events that
    found it broken: recorded, no run), newest first, each as ``{run_id, status,
    skip_reason, created_at, finished_at, boundary, boundary_id, error}`` (a blocked fire
    has an empty ``run_id``). Read-only.

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.engine.runs import RunStore
    from wardian.invokers.drain import FireLog

    invoker = InvokerStore(state).get(ref, kind=KIND)
    docs = []
    for run in RunStore(state, recover=False).list(invoker_id=invoker.id, limit=limit):
        payload = (run.invocation or {}).get("payload", {})
        docs.append({"run_id": run.id, "status": run.status, "skip_reason": run.skip_reason,
                     "created_at": run.created_at, "finished_at": run.finished_at,
                     "boundary": payload.get("boundary"),
                     "boundary_id": payload.get("boundary_id"), "error": run.error})
    fires = FireLog(state)
    docs += [{"run_id": "", "status": "blocked", "skip_reason": fire.skip_reason,
              "created_at": fire.created_at, "finished_at": None, "boundary": None,
              "boundary_id": fire.event_id, "error": None}
             for fire in fires.for_invoker(invoker.id, limit) if fire.outcome == "blocked"]
    docs.sort(key=lambda doc: str(doc["created_at"]), reverse=True)
    return invoker, docs[:limit]


def curator_assignment(state: StateDB, choice: str, agent: str) -> tuple[dict[str, Any], str]:
    """The ``curator`` role's assignment for ``--curator CHOICE``, and a line saying what it is.

    ``builtin`` is the rules curator; ``host`` is a model of `agent`'s own provider from its
    refreshed catalog (`wardian.curator.host.choose_host_model`: small by default).

    Args:
        choice: ``host`` or ``builtin``.
        agent: agent name or id, in `state` (whose model catalog is read).

    Returns:
        (assignment dict, description such as ``curator: codex gpt-5.1-codex-mini effort
        low (catalog fetched 2026-…Z)``).

    Raises:
        NotFoundError: no such agent. UsageError (exit 2): another `choice`; for ``host``,
            the agent's provider is the
            builtin one. CatalogNotRefreshed / CatalogRefreshFailed (exit 2): the provider's
            catalog was never fetched (the message names the refresh command).
    """
    from wardian.curator.host import BUILTIN_ASSIGNMENT, choose_host_model
    from wardian.providers.catalog import ModelCatalog
    from wardian.providers.errors import CatalogNotRefreshed
    from wardian.runtime.agents import AgentRegistry

    if choice == "builtin":
        return dict(BUILTIN_ASSIGNMENT), "curator: builtin curator-rules"
    if choice != "host":
        raise UsageError(f"--curator: expected 'host' or 'builtin', found {choice!r}",
                         hint="use `--curator host` (the agent's own model) or "
                         "`--curator builtin` (the rules curator)")
    resolved = AgentRegistry(state).get(agent)
    provider = resolved.provider
    if provider == "builtin":
        raise UsageError(
            f"--curator host: agent {resolved.name!r} runs on the builtin provider, which has "
            "no model of its own",
            hint="use `--curator builtin`, or `--assignments` with a provider and model",
        )
    catalog = ModelCatalog(state)
    entry = catalog.get(provider)
    if entry is None:
        raise CatalogNotRefreshed(provider)
    entry.require_list()
    model, effort = choose_host_model(entry.models)
    assignment: dict[str, Any] = {"target_type": "temporary_provider", "provider": provider,
                                  "model": model}
    if effort:
        assignment["effort"] = effort
    line = f"curator: {provider} {model}" + (f" effort {effort}" if effort else "")
    if entry.fetched_at:
        line += f" (catalog fetched {entry.fetched_at})"
    return assignment, line
