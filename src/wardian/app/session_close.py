"""Session-close invokers as the operator handles them (``wardian automation session-close
…``; CLI.md "automation session-close").

Definition and validation live in `wardian.invokers.session_close` (re-exported here:
`add_session_close`, `update_session_close`, `set_enabled`); this module adds what a
surface shows: each invoker with its status, agent name and last outcome, and its history
as plain documents. Read-only except where a function says otherwise.
"""

from __future__ import annotations

from typing import Any

from wardian.invokers.session_close import (
    add_session_close,
    set_enabled,
    update_session_close,
)
from wardian.invokers.store import Invoker

__all__ = [
    "Invoker",
    "add_session_close",
    "list_session_close",
    "remove_session_close",
    "session_close_history",
    "set_enabled",
    "show_session_close",
    "update_session_close",
]

KIND = "session-close"


def _docs(invokers: list[Invoker]) -> list[dict[str, Any]]:
    from wardian.engine.runs import RunStore
    from wardian.invokers.session_close import summarise
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry()
    runs = RunStore(recover=False)
    docs = []
    for inv in invokers:
        agent = registry.find(inv.agent_id)
        last = runs.list(invoker_id=inv.id, limit=1)
        docs.append(summarise(inv, agent_name=agent.name if agent else None,
                              last_run=last[0] if last else None))
    return docs


def list_session_close() -> list[dict[str, Any]]:
    """Every session-close invoker as `summarise` documents it: status (``enabled``,
    ``disabled`` or ``broken`` with its reason and fix), agent name, boundaries, last
    outcome."""
    from wardian.invokers.store import InvokerStore

    return _docs(InvokerStore().list(kind=KIND))


def show_session_close(ref: str) -> dict[str, Any]:
    """One session-close invoker (id or unique prefix), documented as in `list_session_close`.

    Raises:
        NotFoundError; AmbiguousIdError: the prefix names several.
    """
    from wardian.invokers.store import InvokerStore

    return _docs([InvokerStore().get(ref, kind=KIND)])[0]


def remove_session_close(ref: str) -> Invoker:
    """Remove a session-close invoker (id or unique prefix); its runs stay in the run
    history. Returns the removed invoker.

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.invokers.store import InvokerStore

    store = InvokerStore()
    return store.remove(store.get(ref, kind=KIND).id)


def session_close_history(ref: str, *, limit: int = 50) -> tuple[Invoker, list[dict[str, Any]]]:
    """The invoker and its runs, recorded skips and ``blocked`` fires, newest first, each
    as ``{run_id, status, skip_reason, created_at, finished_at, boundary, boundary_id,
    error}`` (a blocked fire has an empty ``run_id``).

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.invokers.session_close import history

    invoker, runs = history(ref, limit=limit)
    docs = []
    for r in runs:  # a `Run` or a `BlockedFire`: both carry these fields
        payload = (r.invocation or {}).get("payload", {})
        docs.append({"run_id": r.id, "status": r.status, "skip_reason": r.skip_reason,
                     "created_at": r.created_at, "finished_at": r.finished_at,
                     "boundary": payload.get("boundary"),
                     "boundary_id": payload.get("boundary_id"), "error": r.error})
    return invoker, docs
