"""Startup recall: the one way a starting session gets its agent's memory.

A managed launch (`wardian.runtime.launch.prepare_launch`), a host's SessionStart hook
(`wardian.runtime.hooks.session_start`) and ``memory recall`` without a query
(`wardian.app.agent_memory`) all read the same settings now and build the same startup
context (`wardian.memory.recall.load_startup_context`): `startup_settings` then
`startup_recall`. The ``Memory loaded`` event that copies what was given is recorded with
`record_loaded` once the receiving process is known. Imports stay inside the functions: a
hook pays only for what it uses.

Spec: "Agent memory" (startup set within ``memory.startup_budget_chars``), "What appears in
chat" (``Memory loaded``); DESIGN.md "Storage" (the startup set).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.recall import StartupContext
    from wardian.memory.store import MemoryStore

__all__ = ["StartupSettings", "record_loaded", "startup_recall", "startup_settings"]


class StartupSettings(NamedTuple):
    """What startup recall reads from the settings, read together when a session starts.

    Attributes:
        enabled: ``agent_memory.enabled``. budget_chars: ``memory.startup_budget_chars``
            (characters). current_review_days: ``memory.current_review_days`` (days).
    """

    enabled: bool
    budget_chars: int
    current_review_days: int


def startup_settings(state: StateDB) -> StartupSettings:
    """Read the startup-recall settings now (they apply to newly started sessions) from
    the open state database `state`."""
    from wardian.config import SettingsStore

    settings = SettingsStore(state)
    return StartupSettings(
        enabled=bool(settings.get("agent_memory.enabled")),
        budget_chars=int(settings.get("memory.startup_budget_chars")),
        current_review_days=int(settings.get("memory.current_review_days")),
    )


def startup_recall(store: MemoryStore, *, agent_id: str, agent_name: str, workspace: str,
                   settings: StartupSettings, direct_save: bool = True) -> StartupContext:
    """The agent's startup context for `workspace` within the budget of `settings`.

    Read-only (it may run inside the caller's transaction, as a launch does).

    Args:
        store: the memory store. agent_id / agent_name: the starting agent.
        workspace: the workspace of the startup set (absolute path).
        direct_save: whether the process may save memory itself (holds a capability); the
            instructions say read-only otherwise.
    """
    from wardian.memory.recall import load_startup_context

    return load_startup_context(
        store, agent_id=agent_id, agent_name=agent_name, workspace=workspace,
        budget_chars=settings.budget_chars, direct_save=direct_save,
        current_review_days=settings.current_review_days,
    )


def record_loaded(store: MemoryStore, agent_id: str, *, context: str,
                  record_ids: Sequence[str], omitted_count: int, pid: int | None,
                  process_started_at: float | None, workspace: str | None,
                  source: str) -> str:
    """Record the ``Memory loaded`` event of a started session (atomic); returns its id.

    Args:
        context: the exact startup context text given. record_ids: the records in it.
        omitted_count: records left out by the budget. pid / process_started_at: the
            process that received it (its start time in seconds since the epoch), when
            known. source: ``launch``, ``exec`` or ``hook``.
    """
    from wardian.memory.loaded import LoadedEvents

    return LoadedEvents(store.conn).record(
        agent_id, context=context, record_ids=tuple(record_ids), omitted_count=omitted_count,
        pid=pid, process_started_at=process_started_at, workspace=workspace, source=source,
    )
