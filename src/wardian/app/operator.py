"""The operator guard every operator (O) command passes first (CLI.md marks them).

Inside a managed process (an agent's launch, its children, or anything whose ancestor is
one) an operator command is refused with exit 3, so an agent cannot read or change other
agents' data by calling the operator's commands. Spec: spec/agent-memory.md "Save and
inspect memory" (managed CLI tools cannot modify memory across agents); CLI.md.
"""

from __future__ import annotations

__all__ = ["require_operator"]


def require_operator() -> None:
    """Refuse an operator command inside a managed process. Read-only.

    Checks the managed environment variables and whether an ancestor process is a
    recorded managed launch (so clearing the environment is not enough).

    Raises:
        OperatorOnly (exit 3): called from inside a managed process.
    """
    # Imported here: the hot paths (`agent exec`) load this module and pay only on call.
    from wardian._process import ancestors
    from wardian.memory.principal import require_operator as check

    check(ancestors=[(p.pid, p.started_at) for p in ancestors()])
