"""Who is calling: resolve a managed process's agent from its environment; fail closed.

Environment of a managed process (the one place these names are documented; CLI.md
"Environment of a managed process"), set by ``wardian agent exec`` — and, for the provider
CLI of a role step assigned to an agent, by the engine and that step's holder
(`wardian.runtime.step_launch`), with a launch of its own:

``WARDIAN_AGENT_ID``
    The agent's id (UUID4). Always set for a managed process, memory enabled or not.
``WARDIAN_CAPABILITY``
    The launch-scoped capability token — only when agent memory was enabled at launch.
    Only its SHA-256 is stored (`wardian.memory.capabilities`).
``WARDIAN_MEMORY_CONTEXT``
    Path of the startup context file (direct-retention instructions + recalled records),
    only when agent memory was enabled at launch.
``WARDIAN_LAUNCH_ID``
    A fresh id for this launch (the ``session_id`` the exit hook receives).

A launch with memory disabled strips any inherited ``WARDIAN_CAPABILITY`` and
``WARDIAN_MEMORY_CONTEXT`` so its child never holds a parent's authority.

Resolution (`resolve_principal`) fails closed, exit 3, with a one-line reason and
before anything is written:

* no ``WARDIAN_CAPABILITY`` → `CapabilityMissing` (also a process launched while memory
  was disabled);
* a token whose hash is unknown (forged, or from another data dir) → `CapabilityInvalid`;
* ``WARDIAN_AGENT_ID`` missing or naming another agent than the capability's →
  `CapabilityInvalid`;
* revoked, or its runtime process gone / replaced (pid + start time), or minted without
  its launch's namespaces (by an older version) → `CapabilityExpired`;
* presented from a pid or user namespace other than its launch's → `CapabilityNotHeld`;
* a live capability presented by a process outside its launch's process tree — the
  launch supervisor (the holder) is neither the caller nor one of the caller's real
  ancestors (read from the kernel, not the environment) → `CapabilityNotHeld`. That is a
  token read from another agent's ``/proc/<pid>/environ`` or a copied environment replayed
  from another shell; the attempt is kept (table ``capability_refusals``, naming the
  holder's launch and the caller's launch, if any).

Memory disabled *now* does not cut off a capability minted while it was enabled: the spec
says the setting applies to newly launched or restarted processes.

The other direction: operator commands (`require_operator`) refuse a managed process, and
commands anyone may run that name an agent act only for its own (`managed_agent`). Both
recognise it by its environment or, since that can be edited, by an ancestor that is a
recorded launch (table ``launches``, written for every launch, memory enabled or not).
On Linux the supervisor is a child subreaper, so a process that detaches from its launch
(double fork, ``setsid``) stays below it and is still recognised. What remains (a process
that kills its own supervisor, other platforms, direct reads of ``memory.db`` by the same
OS user) is in docs/threat-model.md; separate OS users are the hard boundary.

Spec: "Save and inspect memory" (managed terminals, fail closed), DESIGN.md "Identity and
authority".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian._backend import SQLITE
from wardian._db import database_exists
from wardian.errors import (
    CapabilityExpired,
    CapabilityInvalid,
    CapabilityMissing,
    CapabilityNotHeld,
    OperatorOnly,
)

if TYPE_CHECKING:
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.store import MemoryStore

__all__ = [
    "ENV_AGENT_ID",
    "ENV_CAPABILITY",
    "ENV_LAUNCH_ID",
    "ENV_MEMORY_CONTEXT",
    "MANAGED_ENV",
    "Principal",
    "managed_agent",
    "require_operator",
    "resolve_principal",
]

ENV_AGENT_ID = "WARDIAN_AGENT_ID"
ENV_CAPABILITY = "WARDIAN_CAPABILITY"
ENV_MEMORY_CONTEXT = "WARDIAN_MEMORY_CONTEXT"
ENV_LAUNCH_ID = "WARDIAN_LAUNCH_ID"
MANAGED_ENV = (ENV_AGENT_ID, ENV_CAPABILITY, ENV_MEMORY_CONTEXT, ENV_LAUNCH_ID)
"""Every variable `wardian agent exec` sets; a launch clears inherited ones first."""

IsAlive = Callable[[int, float], bool]
"""``is_alive(pid, started_at_seconds) -> bool`` (`wardian._process.is_alive`)."""

_HOW = ("memory commands work only inside a session started by `wardian agent launch NAME` "
        "(or `wardian agent exec NAME -- CMD`)")
_RELAUNCH = "relaunch the agent with `wardian agent launch NAME` (or `wardian agent exec`)"


class Principal(NamedTuple):
    """The authenticated caller of a memory command.

    Attributes:
        agent_id: the agent whose records the command may touch (and only those).
        launch_workspace: the workspace the managed process was launched in.
        token_hash: the capability's stored hash (for audit).
    """

    agent_id: str
    launch_workspace: str | None
    token_hash: str

    @property
    def actor(self) -> str:
        """The actor written into revisions: ``agent:<id>``."""
        return f"agent:{self.agent_id}"


def resolve_principal(
    *,
    is_alive: IsAlive,
    caller: Sequence[tuple[int, float]],
    environ: Mapping[str, str] | None = None,
    db_path: Path | None = None,
    store: MemoryStore | None = None,
) -> Principal:
    """Authenticate the calling managed process: its environment names the capability,
    its real ancestry must contain the capability's holder. Read-only, except that a
    refused out-of-tree use is recorded.

    Args:
        is_alive: the process-liveness test, ``(pid, started_at_s) -> bool``.
        caller: ``(pid, started_at_s)`` of the calling process and then its ancestors,
            nearest first (`wardian._process.lineage`).
        environ: the environment (default ``os.environ``).
        db_path: ``memory.db`` (default `wardian.config.memory_db_path()`); it is not
            created when missing — no database means no capability can be valid.
        store: an open store to use instead of opening `db_path` (left open).

    Raises:
        CapabilityMissing: no capability in the environment.
        CapabilityInvalid: unknown (forged) token, or the agent id does not match.
        CapabilityExpired: revoked, or its runtime has ended.
        CapabilityNotHeld: the caller is outside the holder's process tree.
    """
    env = os.environ if environ is None else environ
    token = env.get(ENV_CAPABILITY, "").strip()
    if not token:
        raise CapabilityMissing(
            "no memory capability in this process",
            hint=f"{_HOW} while agent memory is enabled "
            "(`wardian settings set agent_memory.enabled true`, then relaunch)",
        )
    from wardian.memory.capabilities import CapabilityStore

    if store is not None:
        return _resolve(CapabilityStore(store.conn), token, env, is_alive, caller)
    if db_path is None:
        from wardian.config import memory_db_path

        db_path = memory_db_path()
    if not database_exists(db_path):
        raise CapabilityInvalid("memory capability not recognised", hint=_HOW)
    from wardian.memory.db import MemoryDB
    from wardian.memory.store import MemoryStore

    opened = MemoryStore(MemoryDB.open(db_path))
    return _resolve(CapabilityStore(opened.conn), token, env, is_alive, caller)


def _resolve(
    capabilities: CapabilityStore, token: str, env: Mapping[str, str], is_alive: IsAlive,
    caller: Sequence[tuple[int, float]],
) -> Principal:
    row = capabilities.lookup(token)
    if row is None:
        raise CapabilityInvalid("memory capability not recognised", hint=_HOW)
    claimed = env.get(ENV_AGENT_ID, "").strip()
    if claimed != row.agent_id:
        # The claim is attacker-controlled: quoted and cut so the reason stays one line.
        shown = repr(claimed[:40]) + ("…" if len(claimed) > 40 else "") if claimed else "unset"
        raise CapabilityInvalid(
            f"memory capability does not belong to this agent ({ENV_AGENT_ID} is {shown})",
            hint=_HOW,
        )
    if row.revoked_at is not None:
        raise CapabilityExpired(
            f"memory capability expired: {row.revoked_reason or 'revoked'}",
            hint=_RELAUNCH,
        )
    from wardian._process import ProcessIdentity, namespaces

    mine = namespaces()
    if mine is not None and row.namespaces is None:
        raise CapabilityExpired(
            "memory capability expired: it was minted without its launch's namespaces "
            "(by an older version of Wardian)", hint=_RELAUNCH)
    if mine is not None and row.namespaces != mine:
        raise CapabilityNotHeld(
            f"memory capability refused: its launch ran in pid namespace "
            f"{row.namespaces.pid if row.namespaces else '?'} / user namespace "
            f"{row.namespaces.user if row.namespaces else '?'}, this process runs in "
            f"{mine.pid} / {mine.user}",
            hint="a capability works only in its own launch's namespaces and process tree")
    holder = ProcessIdentity(row.pid, row.process_started_at)
    inside = any(holder.matches(ProcessIdentity(pid, started)) for pid, started in caller)
    if inside:  # the holder is a live ancestor: alive by definition
        return Principal(row.agent_id, row.workspace, row.token_hash)
    if not is_alive(row.pid, row.process_started_at):
        raise CapabilityExpired(
            f"memory capability expired: its runtime (pid {row.pid}) has ended",
            hint=_RELAUNCH,
        )
    raise _not_held(capabilities, row.agent_id, row.pid, row.process_started_at, caller)


def _not_held(
    capabilities: CapabilityStore, holder_agent: str, holder_pid: int, holder_started: float,
    caller: Sequence[tuple[int, float]],
) -> CapabilityNotHeld:
    """Record the refused out-of-tree use and build its error (naming both launches)."""
    from wardian._util import utc_now_iso
    from wardian.memory.capabilities import Refusal

    holder = capabilities.launches_of([(holder_pid, holder_started)])
    holder_launch = holder[0][0] if holder else None
    mine = capabilities.launches_of(caller)
    caller_launch, caller_agent = mine[0] if mine else (None, None)
    where = (f"this process runs in launch {caller_launch[:8]} of agent {caller_agent[:8]}"
             if caller_launch and caller_agent else "this process runs outside any launch")
    reason = (f"memory capability refused: it belongs to launch "
              f"{(holder_launch or 'unknown')[:8]} of agent {holder_agent[:8]}, and {where}")
    pid = caller[0][0] if caller else os.getpid()
    try:
        capabilities.record_refusal(Refusal(
            utc_now_iso(), holder_agent, holder_launch, caller_agent, caller_launch, pid,
            reason))
    except Exception:  # refusing matters more than keeping the record
        reason += " (the refusal could not be recorded)"
    return CapabilityNotHeld(
        reason,
        hint="a capability works only inside the process tree of the launch it was "
        "minted for; use the one your own launch gave you",
    )


def require_operator(
    *,
    environ: Mapping[str, str] | None = None,
    ancestors: Iterable[tuple[int, float]] = (),
    db_path: Path | None = None,
) -> None:
    """Refuse operator-only commands inside a managed process (exit 3). Read-only.

    A process is managed when any of `MANAGED_ENV` is set, or when one of its ancestors
    (``(pid, started_at_s)`` pairs, nearest first) is a managed launch — recorded at launch
    whether memory was enabled or not — so clearing the environment does not turn an agent
    into the operator.

    Raises:
        OperatorOnly: called from inside a managed process.
    """
    env = os.environ if environ is None else environ
    present = [name for name in MANAGED_ENV if env.get(name)]
    if present:
        raise OperatorOnly(
            f"operator command refused inside a managed process ({present[0]} is set)",
            hint="run it from your own terminal, not from an agent",
        )
    holders = _managed_ancestors(ancestors, db_path)
    if holders:
        raise OperatorOnly(
            f"operator command refused inside a managed process (ancestor pid "
            f"{holders[0][0]} is an agent launch)",
            hint="run it from your own terminal, not from an agent",
        )


def managed_agent(
    *,
    environ: Mapping[str, str] | None = None,
    ancestors: Iterable[tuple[int, float]] = (),
    db_path: Path | None = None,
) -> str | None:
    """The agent a managed process acts for, or None for an operator's process. Read-only.

    For commands anyone may run that name an agent (e.g. provider hooks): inside a managed
    process they must act only for its own agent. The nearest ancestor that is a managed
    launch decides (the environment can be edited, the ancestry cannot); failing that,
    ``WARDIAN_AGENT_ID`` when set (a process whose launch has ended stays restricted).

    Args:
        environ: the environment (default ``os.environ``).
        ancestors: ``(pid, started_at_s)`` of the caller's ancestors, nearest first.
        db_path: ``memory.db`` (default `wardian.config.memory_db_path()`).
    """
    env = os.environ if environ is None else environ
    holders = _managed_ancestors(ancestors, db_path)
    if holders:
        return holders[0][1]
    return env.get(ENV_AGENT_ID, "").strip() or None


def _managed_ancestors(
    ancestors: Iterable[tuple[int, float]], db_path: Path | None
) -> list[tuple[int, str]]:
    """``(pid, agent_id)`` of the ancestors that are managed launches (nearest first)."""
    ancestry = list(ancestors)
    if not ancestry:
        return []
    if db_path is None:
        from wardian.config import memory_db_path

        db_path = memory_db_path(create_dir=False)
    if not database_exists(db_path):
        return []

    from wardian._db import configured_url_for, open_readonly
    from wardian.memory.capabilities import CapabilityStore

    # Read-only, without MemoryStore's migration check: this runs in every provider hook
    # and operator command. A database this cannot read as is (an older schema without
    # the launches table, or no permission to open its WAL index) goes through
    # MemoryStore, which migrates it, as before. On PostgreSQL a memory.db left from before
    # the move is not read: the server's launches are the only ones.
    if db_path.exists() and configured_url_for(db_path.parent) is None:
        try:
            conn = open_readonly(db_path)
            try:
                return CapabilityStore(conn).managed_ancestors(ancestry)
            finally:
                conn.close()
        except SQLITE.Error:
            pass
    from wardian.memory.db import MemoryDB
    from wardian.memory.store import MemoryStore

    store = MemoryStore(MemoryDB.open(db_path))
    return CapabilityStore(store.conn).managed_ancestors(ancestry)
