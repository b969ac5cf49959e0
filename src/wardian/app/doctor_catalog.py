"""Doctor check ``model-catalogs``: every selection an agent or invoker makes is in its
provider's model catalog (`wardian doctor`).

What is checked, exactly as a launch or a run start would check it
(`wardian.providers.catalog.ModelCatalog.validate_selection`, the same code):

* each **agent** that sets a model or an effort: the provider's catalog was fetched, the
  model is in it, the effort is one the model supports. An agent with neither set uses
  the provider's own default and needs no catalog.
* each **invoker**'s assignments (`temporary_provider` roles, and `agent` roles through
  that agent's current selection), as a run start validates them.

Each problem names the command that fixes it: refresh the catalog
(``wardian agent models --provider P --refresh``), or pick a listed model/effort
(``wardian agent set NAME --model M``, ``wardian automation session-close set ID
--assignments …``). A catalog whose last refresh failed while an older list is kept is a
warning (the list may be stale). Reads only: the catalog and the agent registry are read
through their own stores, nothing is refreshed.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

from wardian.app.doctor import DoctorContext, Finding
from wardian.errors import WardianError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.invokers.store import Invoker
    from wardian.providers.catalog import CatalogEntry, ModelCatalog
    from wardian.runtime.agents import Agent

__all__: list[str] = []

NAME = "model-catalogs"


def _suggest(entry: CatalogEntry | None, model: str) -> str:
    """The catalog model nearest to `model`, else its default, else its first."""
    if entry is None:
        return "MODEL"
    ids = [m.id for m in entry.models]
    near = difflib.get_close_matches(model, ids, n=1, cutoff=0.4)
    if near:
        return near[0]
    default = next((m.id for m in entry.models if m.is_default), None)
    return default or (ids[0] if ids else "MODEL")


def _agent_findings(catalog: ModelCatalog, agent: Agent) -> Iterator[Finding]:
    from wardian.providers.errors import CatalogNotRefreshed, UnknownModel, UnsupportedEffort

    selection = " ".join(x for x in (agent.provider, agent.model, agent.effort) if x)
    try:
        catalog.validate_selection(agent.provider, agent.model, agent.effort)
    except CatalogNotRefreshed as exc:
        yield Finding.problem(
            NAME, f"agent {agent.name} ({selection}): {exc.message}",
            fix=exc.hint or f"`wardian agent models --provider {agent.provider} --refresh`",
            subject=agent.id)
    except UnknownModel as exc:
        entry = catalog.get(agent.provider)
        refresh = "" if entry is not None and entry.static else (
            f" (or, if the catalog is out of date: `wardian agent models --provider "
            f"{agent.provider} --refresh`)")
        yield Finding.problem(
            NAME, f"agent {agent.name}: {exc.message}",
            fix=f"`wardian agent set {agent.name} --model {_suggest(entry, exc.model)}`"
                + refresh, subject=agent.id)
    except UnsupportedEffort as exc:
        yield Finding.problem(
            NAME, f"agent {agent.name}: {exc.message}",
            fix=f"`wardian agent set {agent.name} --effort E` with a supported level, or "
                f"`--effort ''` to use the default ({exc.hint})", subject=agent.id)
    except WardianError as exc:  # an unknown provider stored before `agent add` checked
        yield Finding.problem(
            NAME, f"agent {agent.name}: {exc.message}",
            fix=f"`wardian agent set {agent.name} --provider P` (`wardian agent add --help` "
                "lists the providers)", subject=agent.id)
    else:
        yield Finding.ok(NAME, f"agent {agent.name}: {selection} is in the catalog",
                         subject=agent.id)


def _invoker_findings(invoker: Invoker, state: StateDB) -> Iterator[Finding]:
    from functools import partial

    from wardian.engine.assignments import agent_selection
    from wardian.providers.assignments import parse_assignments, validate_assignments
    from wardian.providers.errors import CatalogNotRefreshed

    ref = invoker.id[:8]
    label = f"{invoker.kind} invoker {ref} ({invoker.name})"
    setter = f"wardian automation {invoker.kind} set {ref}"
    try:
        parsed = parse_assignments(invoker.assignments)
        resolved = validate_assignments(parsed, check_catalog=True, state=state,
                                        agents=partial(agent_selection, state=state))
    except WardianError as exc:
        cause = exc.__cause__
        missing = cause if isinstance(cause, CatalogNotRefreshed) else exc
        if isinstance(missing, CatalogNotRefreshed):
            fix = f"`wardian agent models --provider {missing.provider} --refresh`"
        else:
            example = json.dumps(invoker.assignments, separators=(",", ":"))
            fix = (f"`{setter} --assignments '{example}'` with a listed model/effort"
                   + (f" ({exc.hint})" if exc.hint else ""))
        yield Finding.problem(NAME, f"{label}: {exc.message}", fix=fix, subject=invoker.id)
        return
    shown = ", ".join(f"{role} → {' '.join(x for x in sel if x)}"
                      for role, sel in sorted(resolved.items()))
    yield Finding.ok(NAME, f"{label}: {shown or 'no roles'}", subject=invoker.id)


def _stale(catalog: ModelCatalog, providers: set[str]) -> Iterator[Finding]:
    for provider in sorted(providers):
        try:
            entry = catalog.get(provider)
        except WardianError:
            continue
        if entry is not None and entry.last_error and entry.fetched_at:
            yield Finding.warning(
                NAME, f"the last refresh of the {provider} catalog failed at "
                f"{entry.last_attempt_at}; checks used the list fetched at {entry.fetched_at}",
                fix=f"`wardian agent models --provider {provider} --refresh`",
                subject=provider)


def _model_catalogs(ctx: DoctorContext) -> Iterator[Finding]:
    tables = ctx.read("state.db", lambda conn: (ctx.has_table(conn, "agents"),
                                                ctx.has_table(conn, "invokers")))
    if tables is None:
        yield Finding.ok(NAME, "no agents or invokers")
        return
    has_agents, has_invokers = tables
    from wardian.invokers.store import InvokerStore
    from wardian.providers.catalog import ModelCatalog
    from wardian.runtime.agents import AgentRegistry

    # Read-only views (`run_doctor`); a store is opened only over tables that exist.
    state = ctx.opened_state()
    agents = AgentRegistry(state).list() if has_agents else []
    invokers = InvokerStore(state).list() if has_invokers else []
    if not agents and not invokers:
        yield Finding.ok(NAME, "no agents or invokers")
        return
    catalog = ModelCatalog(state)
    used: set[str] = set()
    for agent in agents:
        if agent.model is None and agent.effort is None:
            yield Finding.ok(NAME, f"agent {agent.name}: {agent.provider} with its default "
                             "model (no catalog needed)", subject=agent.id)
            continue
        used.add(agent.provider)
        yield from _agent_findings(catalog, agent)
    for invoker in invokers:
        used.update(str(item.get("provider")) for item in invoker.assignments.values()
                    if isinstance(item, dict) and item.get("provider"))
        yield from _invoker_findings(invoker, state)
    yield from _stale(catalog, used)
