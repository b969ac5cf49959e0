"""Agent definitions as the operator edits them: ``agent add`` and ``agent set`` share one check.

Spec: CLI.md ``agent add``; issue 20 (``--provider`` is checked against the known providers,
``agent set`` is validated like ``add``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wardian.errors import UsageError

__all__ = ["check_provider", "check_workspace", "set_agent"]


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


def set_agent(name_or_id: str, *, provider: str | None = None, model: str | None = None,
              effort: str | None = None, workspace: str | None = None) -> Any:
    """Change an agent's provider, model, effort or workspace, validated as ``agent add``
    validates them; its id, name and memory stay (memory follows the agent across provider
    changes). Effective for newly launched processes. ``""`` clears model, effort or
    workspace.

    Returns:
        The updated `wardian.runtime.agents.Agent`.

    Raises:
        UsageError: nothing to change, an unknown provider, or a workspace that is not a
            directory. NotFoundError: no such agent.
    """
    from wardian.runtime.agents import AgentRegistry

    if all(v is None for v in (provider, model, effort, workspace)):
        raise UsageError("nothing to change",
                         hint="pass --provider, --model, --effort or --workspace")
    if provider is not None:
        check_provider(provider)
    if workspace:  # "" clears it
        check_workspace(workspace)
    registry = AgentRegistry()
    try:
        agent = registry.get(name_or_id)
        return registry.update(agent.id, provider=provider, model=model, effort=effort,
                               workspace=workspace)
    finally:
        registry.close()
