"""Schedule invokers as the operator handles them (``wardian automation schedule …``;
CLI.md "automation schedule").

The operations themselves live in `wardian.invokers.schedule_ops`, one per command, where
the daemon's slot rules are: this module is the surfaces' one door to them, and to the
duration syntax of ``--every`` and ``--misfire-grace`` (``30s``, ``5m``, ``1h30m``).
`Invoker` and `Slot` are re-exported for the surfaces' rendering.
"""

from __future__ import annotations

from wardian.invokers.schedule import format_duration, parse_duration
from wardian.invokers.schedule_ops import (
    add_schedule,
    describe_schedule,
    get_schedule,
    list_schedules,
    remove_schedule,
    run_now,
    schedule_history,
    set_schedule_enabled,
    update_schedule,
)
from wardian.invokers.slots import Slot
from wardian.invokers.store import Invoker

__all__ = [
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
