"""One name per invoker of a kind: the name is how an operator addresses an invoker.

The README and the operator guide address invokers by name (`automation session-close
enable "Consolidate ada"`). Two session-close (or two schedule) invokers with one name make
that name ambiguous for every later command, so `add` and a renaming `set` refuse it. A
session-close and a schedule invoker may share a name: each command looks within its kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wardian.errors import ConflictError

if TYPE_CHECKING:
    from wardian.invokers.store import InvokerStore

__all__ = ["check_name_free"]


def check_name_free(store: InvokerStore, kind: str, name: str, *,
                    command: str, invoker_id: str | None = None) -> None:
    """Refuse `name` when another invoker of `kind` already has it. Read-only.

    Args:
        store: the invoker store to look in.
        kind: ``session-close`` or ``schedule``.
        name: the requested name (compared as stored: stripped, case-sensitive).
        command: the command group for the hint, e.g. ``automation session-close``.
        invoker_id: the invoker being renamed (its own name is no clash).

    Raises:
        ConflictError (exit 4): the name is taken; the message names the holder's id.
    """
    wanted = name.strip()
    for other in store.list(kind=kind):
        if other.name == wanted and other.id != invoker_id:
            raise ConflictError(
                f"a {kind} invoker named {wanted!r} already exists ({other.id[:8]})",
                hint=f"choose another --name, or change that one with "
                     f"`wardian {command} set {other.id[:8]} …`",
            )
