"""Agent definitions as the operator edits them: ``agent add`` and ``agent set`` share one
check; ``agent remove`` is one service function (`remove_agent`).

Spec: CLI.md ``agent add`` / ``agent remove`` (``--provider`` is checked against
the known providers, ``agent set`` is validated like ``add``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from wardian.errors import UsageError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB
    from wardian.runtime.agents import Agent

__all__ = ["RemovedAgent", "add_agent", "agent_id", "check_provider", "check_selection",
           "check_workspace", "clear_bad_launches", "describe_agent", "launch_agent",
           "list_agents", "remove_agent", "set_agent"]


def check_provider(provider: str) -> str:
    """Return `provider` when it is a registered provider adapter.

    Raises:
        UsageError (exit 2): unknown provider; the message lists the known ones.
    """
    from wardian.providers.registry import known_providers

    known = known_providers()
    if provider not in known:
        from wardian.blueprints.errors import nearest

        guess = nearest(provider, known)
        raise UsageError(
            f"unknown provider {provider!r}" + (f" (did you mean {guess!r}?)" if guess else ""),
            hint=f"known providers: {', '.join(known)}",
        )
    return provider


def check_selection(state: StateDB, provider: str, model: str | None, effort: str | None, *,
                    clear_hint: bool = False) -> str | None:
    """Check an agent's provider/model/effort against the model catalog in `state`, with the same
    catalog code the run start uses (`ModelCatalog.validate_selection`). Read-only.

    Args:
        clear_hint: name ``--model ''``/``--effort ''`` in the hint (``agent set``, where
            the value may be the agent's earlier one).

    Returns:
        None when checked, else a warning saying what could not be checked and why: the
        provider's catalog was never refreshed, or its last refresh failed (the value is
        accepted; the run start checks it again once the catalog exists).

    Raises:
        ValidationError (exit 2): the model is not in the catalog (the known ones and the
            refresh command are named), or the effort is not supported.
    """
    if model is None and effort is None:
        return None
    from wardian.errors import ValidationError
    from wardian.providers.catalog import ModelCatalog
    from wardian.providers.errors import CatalogNotRefreshed, refresh_command

    catalog = ModelCatalog(state)
    try:
        catalog.validate_selection(provider, model, effort)
    except CatalogNotRefreshed as exc:  # also a refresh that failed: nothing to check with
        what = " and ".join(f"{k} {v!r}" for k, v in (("model", model), ("effort", effort))
                            if v is not None)
        return (f"{what} not checked: {exc.message}; run {refresh_command(provider)} to "
                "check it (a run checks it again when it starts)")
    except ValidationError as exc:
        if clear_hint:
            raise ValidationError(exc.message, hint=(exc.hint or "") + "; or clear it with "
                                  "--model '' / --effort ''") from exc
        raise
    return None


def check_workspace(workspace: str) -> str:
    """Return `workspace` when it is an existing directory.

    Raises:
        UsageError (exit 2): it is not a directory.
    """
    if not Path(workspace).expanduser().is_dir():
        # Caught here rather than at every later `agent exec` of the agent.
        raise UsageError(f"--workspace {workspace} is not a directory",
                         hint="create it first, or pass an existing project directory")
    return workspace


def add_agent(state: StateDB, name: str, provider: str, *, model: str | None = None,
              effort: str | None = None, workspace: str | None = None,
              warn: Callable[[str], object] | None = None) -> Agent:
    """Create an agent in `state` (``wardian agent add``): a UUID4 id is allocated.

    The provider must be a known one, the workspace an existing directory, and the
    model/effort ones the catalog lists (`check_selection`); `warn` receives the warning
    when the catalog cannot check them (they are accepted then).

    Raises:
        UsageError: an unknown provider, a workspace that is not a directory, or the name
            is taken. ValidationError: a model or effort the catalog does not have.
    """
    from wardian.runtime.agents import AgentRegistry

    check_provider(provider)
    if workspace is not None:
        check_workspace(workspace)
    warning = check_selection(state, provider, model, effort)
    if warning and warn is not None:
        warn(warning)
    return AgentRegistry(state).add(name, provider, model=model, effort=effort,
                                    workspace=workspace)


def list_agents(state: StateDB) -> list[Agent]:
    """Every agent registered in `state`. Read-only."""
    from wardian.runtime.agents import AgentRegistry

    return AgentRegistry(state).list()


def agent_id(state: StateDB, name_or_id: str) -> str:
    """The id of the agent in `state` named `name_or_id` (name, id or unique id prefix).

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.runtime.agents import AgentRegistry

    return AgentRegistry(state).get(name_or_id).id


def describe_agent(state: StateDB, memory: MemoryDB, name_or_id: str) -> dict[str, Any]:
    """One agent as ``agent show`` prints it: its fields (from `state`) plus
    ``active_records``, ``records`` (removed ones included; from `memory`) and its
    per-agent ``settings``. Read-only.

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.config import SettingsStore
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    agent = AgentRegistry(state).get(name_or_id)
    store = MemoryStore(memory)
    return agent.to_json() | {
        "active_records": store.count(agent.id, include_removed=False),
        "records": store.count(agent.id),
        "settings": SettingsStore(state).agent_overrides(agent.id),
    }


def launch_agent(name_or_id: str, args: list[str], *, workspace: str | None = None) -> int:
    """Start the agent's provider CLI (claude, codex, gemini, opencode) interactively as a
    managed process, with its model, effort, capability and startup recall, and wait.

    Args:
        args: extra provider arguments (what followed ``--``).
        workspace: directory to run in; its git root is the launch workspace.

    Returns:
        The provider's exit code (128 + N when it died of signal N).

    Raises:
        NotFoundError: unknown agent. UsageError: the provider cannot be launched.
        ProviderNotInstalled: the provider CLI is not on PATH.
    """
    from wardian.runtime.provider_launch import launch_agent as launch

    return launch(name_or_id, args, workspace=workspace)


def set_agent(state: StateDB, name_or_id: str, *, provider: str | None = None,
              model: str | None = None, effort: str | None = None, workspace: str | None = None,
              warn: Callable[[str], object] | None = None) -> Agent:
    """Change an agent's (in `state`) provider, model, effort or workspace, validated as
    ``agent add`` validates them; its id, name and memory stay (memory follows the agent
    across provider changes). Effective for newly launched processes. ``""`` clears model,
    effort or workspace.

    Returns:
        The updated `wardian.runtime.agents.Agent`.

    The resulting selection (the new values over the agent's current ones) is checked
    against the model catalog (`check_selection`); `warn` receives the warning when the
    catalog cannot check it.

    Raises:
        UsageError: nothing to change, an unknown provider, or a workspace that is not a
            directory. ValidationError: a model or effort the catalog does not have.
            NotFoundError: no such agent.
    """
    from wardian.runtime.agents import AgentRegistry

    if all(v is None for v in (provider, model, effort, workspace)):
        raise UsageError("nothing to change",
                         hint="pass --provider, --model, --effort or --workspace")
    if provider is not None:
        check_provider(provider)
    if workspace:  # "" clears it
        check_workspace(workspace)
    registry = AgentRegistry(state)
    agent = registry.get(name_or_id)
    chosen = [agent.model if model is None else (model or None),
              agent.effort if effort is None else (effort or None)]
    warning = check_selection(state, provider or agent.provider, chosen[0], chosen[1],
                              clear_hint=True)
    if warning and warn is not None:
        warn(warning)
    return registry.update(agent.id, provider=provider, model=model, effort=effort,
                           workspace=workspace)


@dataclass(frozen=True)
class RemovedAgent:
    """What `remove_agent` did: the agent as it was, its record count, and whether the
    records were kept or deleted (``records`` is ``"none"`` when it had none)."""

    agent: Agent
    record_count: int
    records: Literal["none", "kept", "deleted"]


def clear_bad_launches(memory: MemoryDB | None) -> list[Any]:
    """Delete the recorded launches and revoke the live capabilities that cannot name a
    launch's supervisor (`wardian.memory.capabilities.launch_row_problem`: pid 1 or
    another namespace's process recorded from inside a pid namespace, impossible start
    times); what `wardian doctor` reports under ``launches``. Atomic.

    Args:
        memory: the open memory database; None when there is none (nothing to clear).

    Returns:
        The cleared rows (`wardian.memory.capabilities.BadLaunch`), oldest first; empty
        when `memory` is None.
    """
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.store import MemoryStore

    if memory is None:
        return []
    return CapabilityStore(MemoryStore(memory).conn).clear_bad_launches()


def remove_agent(state: StateDB, memory: MemoryDB, name_or_id: str, *,
                 records: Literal["refuse", "keep", "delete"] = "refuse") -> RemovedAgent:
    """Remove an agent (``wardian agent remove``), keeping or deleting its memory records.

    The agent lives in ``state.db`` and its memory in ``memory.db``; no transaction spans
    two files, so the steps run in this order, each atomic on its own:

    1. check: resolve the agent, count its records; refuse (nothing written) when it has
       some and `records` is ``"refuse"``;
    2. revoke its capabilities (``memory.db``), so a process of the agent still running
       cannot write its memory any more;
    3. with ``"delete"``, delete its records and everything repeating their text
       (``memory.db``, `MemoryStore.delete_agent_records`);
    4. remove the agent (``state.db``).

    A crash between steps leaves the agent registered, so the removal is visible and is
    finished by running it again: after step 2 its processes have lost memory access (a new
    launch mints a new capability); after step 3 the agent has no records left, so the
    rerun needs no flag. Never are records deleted while the agent stays without its
    operator having asked for that, and never is an agent removed before its records are
    dealt with.

    Args:
        state, memory: the open ``state.db`` and ``memory.db``.
        name_or_id: the agent's name, id or unique id prefix.
        records: what to do with its records: ``"refuse"`` (the default: refuse while it has
            any), ``"keep"`` (stay stored, owned by the removed id) or ``"delete"``.

    Raises:
        NotFoundError / AmbiguousIdError: no such agent / the prefix is ambiguous.
        UsageError (exit 2): it has records and `records` is ``"refuse"``.
    """
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    agent = registry.get(name_or_id)
    store = MemoryStore(memory)
    count = store.count(agent.id)
    if count and records == "refuse":
        raise UsageError(
            f"agent {agent.name} ({agent.id}) has {count} memory record(s)",
            hint="pass --keep-records to keep them or --delete-records to delete them",
        )
    CapabilityStore(store.conn).revoke_for_agent(agent.id, reason="agent removed")
    if records == "delete":
        store.delete_agent_records(agent.id)
    registry.remove(agent.id)
    outcome: Literal["none", "kept", "deleted"] = (
        "none" if not count else "deleted" if records == "delete" else "kept")
    return RemovedAgent(agent, count, outcome)
