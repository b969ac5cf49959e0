"""Generic built-in actions (`wardian.builtin_plugin` registers them like any other).

* ``noop`` — returns its ``with:`` arguments unchanged (useful to shape data between steps).
* ``log`` — appends a ``action.log`` run event with ``message`` and returns None.
"""

from __future__ import annotations

from typing import Any

from wardian.engine.actions import ActionContext

__all__ = ["log", "noop"]


def noop(ctx: ActionContext, **with_args: Any) -> Any:
    """Return the step's arguments unchanged."""
    return with_args


def log(ctx: ActionContext, message: str = "", **extra: Any) -> None:
    """Record `message` (and any extra arguments) as a run event."""
    ctx.emit("log", {"message": message, **extra})
