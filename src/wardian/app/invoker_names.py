"""One name per invoker of a kind: the name is how an operator addresses an invoker.

The README and the operator guide address invokers by name (`automation session-close
enable "Consolidate ada"`). Two session-close (or two schedule) invokers with one name make
that name ambiguous for every later command, so `add` and a renaming `set` refuse it. A
session-close and a schedule invoker may share a name: each command looks within its kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wardian.invokers.store import InvokerStore

__all__ = ["check_name_free"]


def check_name_free(store: InvokerStore, kind: str, name: str, *,
                    invoker_id: str | None = None) -> None:
    """Refuse `name` when another invoker of `kind` already has it. Read-only.

    The early, friendly check (before a blueprint is loaded); the store's UNIQUE
    ``(kind, name)`` index refuses the same with the same words when another command took
    the name in between (`wardian.invokers.store.name_taken`).

    Args:
        store: the invoker store to look in.
        kind: ``session-close`` or ``schedule``.
        name: the requested name (compared as stored: stripped, case-sensitive).
        invoker_id: the invoker being renamed (its own name is no clash).

    Raises:
        ConflictError (exit 4): the name is taken; the message names the holder's id.
    """
    from wardian.invokers.store import name_taken

    wanted = name.strip()
    for other in store.list(kind=kind):
        if other.name == wanted and other.id != invoker_id:
            raise name_taken(kind, wanted, other.id)
