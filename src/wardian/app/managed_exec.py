"""``wardian agent exec NAME -- CMD``: run a command as one agent's managed process.

On the hot path (`wardian.cli.hot`; bench/process_bench.py prints its CPU budget), so
nothing is imported until the call: the agents registry and the launcher
(`wardian.runtime.launch.exec_managed`) load then.

Spec: DESIGN.md "Identity and authority" (the managed process and its capability;
surfaces call only the application layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wardian._db import StateDB

__all__ = ["exec_agent"]


def exec_agent(state: StateDB, name_or_id: str, command: Sequence[str], *,
               workspace: str | None) -> int:
    """Run `command` as a managed process of the agent `name_or_id` (name, id or unique id
    prefix, looked up in the open state database `state`) in `workspace` (None: the
    launch workspace rules of `exec_managed`); wait and return its exit code (``128 + N``
    when it died of signal N).

    Raises:
        NotFoundError / AmbiguousIdError: no such agent, or several match.
        UsageError: an empty command or an unusable workspace (see `exec_managed`).
    """
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.launch import exec_managed

    registry = AgentRegistry(state)
    agent = registry.get(name_or_id)
    return exec_managed(agent, command, workspace=workspace)
