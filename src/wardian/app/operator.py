"""The operator guard every operator (O) command passes first (CLI.md marks them).

Inside a managed process (an agent's launch, its children, or anything whose ancestor is
one) an operator command is refused with exit 3, so an agent cannot read or change other
agents' data by calling the operator's commands. So is a caller in a pid or user namespace
other than the data directory owner's (`wardian.config.namespace_mismatch`): from there the
launches above it cannot be seen. Spec: spec/agent-memory.md "Save and
inspect memory" (managed CLI tools cannot modify memory across agents); CLI.md.
"""

from __future__ import annotations

__all__ = ["require_operator"]


def require_operator() -> None:
    """Refuse an operator command inside a managed process. Read-only.

    Checks the managed environment variables, that the caller runs in the data directory
    owner's pid and user namespace, that it does not run in a launch's cgroup (Linux,
    cgroup v2: the mark survives a killed supervisor), and whether an ancestor process is
    a recorded managed launch (so clearing the environment is not enough).

    Raises:
        OperatorOnly (exit 3): called from inside a managed process, from another
            namespace, or where this process's identity cannot be read.
    """
    # Imported here: the hot paths (`agent exec`) load this module and pay only on call.
    from wardian._process import ancestors
    from wardian.config import namespace_mismatch
    from wardian.errors import IdentityUnavailable, OperatorOnly
    from wardian.memory.principal import require_operator as check

    check(ancestors=())  # the environment first: its reason is the plainest
    hint = "run it from your own terminal, not from an agent"
    try:
        foreign = namespace_mismatch()
        lineage = [(p.pid, p.started_at) for p in ancestors()]
    except IdentityUnavailable as exc:
        raise OperatorOnly(f"operator command refused: {exc.message}",
                           hint=exc.hint or hint) from None
    if foreign:
        raise OperatorOnly(f"operator command refused: {foreign}", hint=hint)
    check(ancestors=lineage)
    from wardian._process import launch_cgroup_of_self

    launch = launch_cgroup_of_self()  # also when its supervisor is gone
    if launch is not None:
        raise OperatorOnly(
            f"operator command refused inside a managed process (it runs in the cgroup of "
            f"launch {launch[:8]})", hint=hint)
