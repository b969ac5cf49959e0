"""Launch-scoped capabilities for automation steps: a role step assigned to an agent runs
that agent's provider CLI with a capability of its own.

The spec ("Save and inspect memory"): *concurrent interactive and automation processes
receive independent capabilities*. So a role step whose assignment is ``{"target_type":
"agent", "agent": A}`` does not borrow A's interactive launch (there may be none, or
several); it gets a launch of its own, through the same store and rules as ``wardian
agent exec`` (`wardian.runtime.launch`):

1. The engine (`prepare_step_launch`) picks a fresh launch id and puts the agent id and
   that launch id into the provider's environment, and starts the provider CLI through a
   small **holder** program (the launcher's ``hold``, `hold`) instead of directly.
2. The holder runs as the provider's process, below the provider supervisor
   (`wardian.providers.supervisor`, Linux): it asks the kernel to SIGKILL it if that
   supervisor dies (``PR_SET_PDEATHSIG``, kept across exec; the engine is its grandparent,
   checked after the call), clears any inherited managed variables, records the launch
   (table ``launches``) and — when
   ``agent_memory.enabled`` is on *now* — mints a capability bound to its own pid and start
   time, sets ``WARDIAN_CAPABILITY``, and then ``execve``\\ s the provider CLI. Exec keeps the
   pid and the start time, so the capability's holder *is* the provider process: its tool
   subprocesses (``wardian memory save`` run by the agent) are inside the holder's tree and
   pass the ancestry check; nothing else is — not the engine, not a sibling step, not an
   interactive launch of the same agent.
3. When the step ends — success, failure, timeout, cancel, kill — the engine revokes it
   (`end_step_launch`, by launch id). When the provider dies its identity is gone, so the
   capability is expired even before that; when the engine itself crashes, the kernel
   signals the supervisor, which ends the provider and all below it, with the same
   effect. Outside Linux there is no parent-death signal: a provider orphaned by an engine
   crash keeps its capability until it exits (docs/threat-model.md).

Minted in the holder, not in the engine: the token must exist before the provider starts,
and only the holder knows the identity the provider will have. The engine never sees the
token; it revokes through the launch row the holder wrote.

Non-process providers (``builtin``, the HTTP APIs) ignore the launch: there is no provider
process to hold a capability.

Spec: "Save and inspect memory" ("A role step assigned to an agent runs that
agent's provider with its own launch-scoped capability").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wardian._util import new_id
from wardian.memory.principal import (
    ENV_AGENT_ID,
    ENV_CAPABILITY,
    ENV_LAUNCH_ID,
    ENV_MEMORY_CONTEXT,
)

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.store import MemoryStore

__all__ = [
    "StepLaunch",
    "end_step_launch",
    "hold",
    "prepare_step_launch",
]

EXIT_PARENT_GONE = 125
"""Holder exit code when the engine that started it is already gone."""


@dataclass(frozen=True)
class StepLaunch:
    """One agent-assigned step's launch, as the engine prepares it.

    Attributes:
        agent_id: the assigned agent's id.
        agent_name: its name (for messages).
        launch_id: fresh id of this step's launch (``WARDIAN_LAUNCH_ID``).
        env: variables added to the provider's environment.
        prefix: the argv the provider CLI is started through (the holder); the CLI's own
            argv follows it.
        workspace: where the provider runs and its workspace-scoped memory belongs: the
            run's, else the agent's; None when neither has one (the engine then refuses
            the step rather than run it in a scratch directory).
    """

    agent_id: str
    agent_name: str
    launch_id: str
    env: dict[str, str] = field(default_factory=dict)
    prefix: list[str] = field(default_factory=list)
    workspace: str | None = None


def prepare_step_launch(agent: str, *, workspace: str | None, state: StateDB) -> StepLaunch:
    """The launch of one role step assigned to `agent` (name, id or unique prefix).

    Nothing is written here: the holder records the launch and mints the capability when
    the provider process starts (module docstring).

    Args:
        agent: the assignment's agent.
        workspace: the run's workspace, else None (the agent's registered workspace is
            used; `StepLaunch.workspace` says which, or None).
        state: the open state database the agent is looked up in.

    Raises:
        NotFoundError / AmbiguousIdError: no such agent / the prefix is ambiguous.
    """
    from wardian._process import launcher_argv
    from wardian.runtime.agents import AgentRegistry

    found = AgentRegistry(state).get(agent)
    launch_id = new_id()
    chosen = workspace or found.workspace
    prefix = launcher_argv("hold", "--parent", str(os.getpid()),
                           *(["--workspace", chosen] if chosen else []), "--")
    return StepLaunch(agent_id=found.id, agent_name=found.name, launch_id=launch_id,
                      env={ENV_AGENT_ID: found.id, ENV_LAUNCH_ID: launch_id}, prefix=prefix,
                      workspace=chosen or None)


def end_step_launch(launch: StepLaunch, *, reason: str) -> int:
    """Revoke the capability of a step's launch (the step ended). Never raises for a
    launch that minted nothing. Returns how many capabilities were revoked (0 or 1)."""
    from wardian.config import memory_db_path

    if not memory_db_path(create_dir=False).exists():
        return 0
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return CapabilityStore(store.conn).revoke_for_launch(launch.launch_id, reason=reason)


def hold(parent: int, command: Sequence[str], *, workspace: str | None = None) -> int:
    """The holder (module docstring): record this launch, mint its capability, and become
    `command` (``command[0]`` an absolute path); `parent` is the engine (or the supervisor
    between them), `workspace` the launch's.

    Does not return when `command` starts (it replaces this process). Returns 125 when the
    parent is already gone, 127/126 when `command` cannot be started (its capability
    revoked first), 1 when the launch cannot be recorded.
    """
    from wardian._process import current, die_with_parent
    from wardian.runtime.launch import require_owner_namespace

    die_with_parent(parent)
    env = dict(os.environ)
    for name in (ENV_CAPABILITY, ENV_MEMORY_CONTEXT):
        env.pop(name, None)
    agent_id, launch_id = env.get(ENV_AGENT_ID, ""), env.get(ENV_LAUNCH_ID, "")
    try:
        from wardian.config import open_state_db
        from wardian.memory.db import open_memory_db
        from wardian.memory.store import MemoryStore

        require_owner_namespace()
        me = current()
        store = MemoryStore(open_memory_db())  # the holder's unit of work, until it execs
        token = _record(agent_id, launch_id, me.pid, me.started_at, workspace,
                        state=open_state_db(), store=store)
    except Exception as exc:  # the step fails with this line; nothing ran yet
        print(f"wardian: the step's launch could not be recorded: {exc}", file=sys.stderr)
        return 1
    if token is not None:
        env[ENV_CAPABILITY] = token
    from wardian.runtime.launch import put_wardian_on_path

    put_wardian_on_path(env)
    try:
        os.execve(command[0], list(command), env)
    except OSError as exc:
        _revoke_self(store, me.pid, me.started_at,
                     f"runtime could not start (launch {launch_id})")
        print(f"wardian: cannot start {command[0]!r}: {exc.strerror or exc}",
              file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    return 0  # pragma: no cover - execve does not return


def _record(agent_id: str, launch_id: str, pid: int, started_at: float,
            workspace: str | None, *, state: StateDB, store: MemoryStore) -> str | None:
    """Record the launch and, with memory enabled (read from `state`), mint its capability
    (one transaction of `store`). Returns the token, or None when agent memory is
    disabled."""
    if not agent_id or not launch_id:
        raise ValueError(f"{ENV_AGENT_ID} and {ENV_LAUNCH_ID} must be set")
    from wardian._db import atomic
    from wardian._util import utc_now_iso
    from wardian.config import SettingsStore
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.models import default_workspace

    enabled = bool(SettingsStore(state).get("agent_memory.enabled"))
    launch_workspace = default_workspace(workspace or os.getcwd())
    with atomic(store.conn):
        capabilities = CapabilityStore(store.conn)
        now = utc_now_iso()
        capabilities.record_launch_in_transaction(
            launch_id, agent_id, pid=pid, started_at=started_at,
            workspace=launch_workspace, memory_enabled=enabled, now=now)
        if not enabled:
            return None
        return capabilities.mint_in_transaction(
            agent_id, pid=pid, started_at=started_at, workspace=launch_workspace, now=now)


def _revoke_self(store: MemoryStore, pid: int, started_at: float, reason: str) -> None:
    from wardian.memory.capabilities import CapabilityStore

    try:
        CapabilityStore(store.conn).revoke_for_process(pid, started_at, reason=reason)
    except Exception as exc:  # the holder exits next, which expires it anyway
        print(f"wardian: capability not revoked ({exc}); it expires as this process exits",
              file=sys.stderr)
