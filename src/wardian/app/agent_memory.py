"""Agent-facing memory calls, shared by ``wardian memory …`` and the MCP server.

One `AgentMemory` is an authenticated view of one agent's records: `open_agent_memory`
authenticates the calling managed process exactly as every memory command does
(`wardian.memory.principal.resolve_principal`, fail closed, exit 3, before anything is
written), and `open_reader` adds the one fallback the provider hooks have always had: with
no capability at all, the agent the hooks would answer for (the launch ancestry's, else
among the ``--agent`` names the one whose workspace holds the directory) can *recall*,
list, show and read history, read-only, and the answer says so; every change is refused.
A forged or expired capability never falls back.

Surfaces pass the raw option strings (``--scope workspace``, ``--source TYPE=LOCATOR``);
parsing them lives here so the CLI and the MCP tools accept exactly the same things.
Only light modules are imported at module level: the memory commands run many times per
session inside managed processes and are CPU-budgeted.

Spec: "Save and inspect memory", "What appears in chat"; DESIGN.md "Identity and authority".
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from wardian._db import database_exists
from wardian.memory.models import (
    MAX_EVIDENCE_CHARS,
    MAX_LOCATOR_CHARS,
    MAX_SOURCES,
    MAX_TEXT_CHARS,
    default_workspace,
)
from wardian.memory.recall import record_line

if TYPE_CHECKING:
    from typing import Any

    from wardian._db import StateDB
    from wardian.app.instruction_import import ImportPlan
    from wardian.memory.models import Record, Revision, Scope, Source
    from wardian.memory.principal import Principal
    from wardian.memory.recall import StartupContext
    from wardian.memory.store import MemoryStore

__all__ = [
    "MAX_EVIDENCE_CHARS",
    "MAX_LOCATOR_CHARS",
    "MAX_SOURCES",
    "MAX_TEXT_CHARS",
    "READ_ONLY_NOTE",
    "ROW_REMOVED",
    "ROW_SAVED",
    "ROW_UPDATED",
    "AgentMemory",
    "RecallResult",
    "Record",
    "Revision",
    "default_workspace",
    "open_agent_memory",
    "open_reader",
    "parse_scope",
    "parse_sources",
    "recall_lines",
    "record_line",
]
# The record limits, `default_workspace` and `record_line` are re-exported for the
# surfaces (the MCP server advertises the limits and renders record lines).

ROW_SAVED = "Memory saved · This agent"
ROW_UNCHANGED = "Memory unchanged · already saved"
ROW_EVIDENCE_ADDED = "Memory updated · already saved, new evidence added"
ROW_UPDATED = "Memory updated · This agent"
ROW_REMOVED = "Memory removed · This agent"
"""The spec's chat rows ("What appears in chat"), printed or returned after each change."""

READ_ONLY_NOTE = (
    "memory is read-only here: this process holds no memory capability, so it can recall "
    "but not save, update or remove (start the provider with `wardian agent launch NAME`)"
)
"""What a read-only answer says (the hooks' startup context says the same)."""


def save_row(outcome: Any) -> str:
    """The chat row for a `MemoryStore.save_once` outcome (saved, unchanged, evidence added)."""
    return {"saved": ROW_SAVED, "unchanged": ROW_UNCHANGED,
            "evidence_added": ROW_EVIDENCE_ADDED}[outcome.outcome]


def parse_scope(value: str | None, workspace: str | None = None) -> Scope | None:
    """``workspace`` (`workspace`, default the git root of the current directory) or
    ``agent``; None passes.

    Raises:
        UsageError (exit 2): any other value.
    """
    from wardian.errors import UsageError
    from wardian.memory.models import Scope, default_workspace

    if value is None:
        return None
    if value == "agent":
        return Scope.agent()
    if value == "workspace":
        return Scope("workspace", workspace or default_workspace())
    raise UsageError(f"unknown scope {value!r}", hint="use --scope workspace or --scope agent")


def parse_sources(values: Sequence[str], *, first_primary: bool) -> list[Source]:
    """``TYPE=LOCATOR`` strings as `Source`s; the first is primary when `first_primary`.

    Raises:
        UsageError (exit 2): an item without ``=`` or with an empty side.
    """
    from wardian.errors import UsageError
    from wardian.memory.models import Source

    out: list[Source] = []
    for index, item in enumerate(values):
        kind, sep, locator = item.partition("=")
        if not sep or not kind.strip() or not locator.strip():
            raise UsageError(
                f"--source expects TYPE=LOCATOR, got {item!r}",
                hint="e.g. --source file=docs/release.md",
            )
        out.append(Source(kind.strip(), locator, primary=first_primary and index == 0))
    return out


class RecallResult(NamedTuple):
    """What `AgentMemory.recall` found.

    Attributes:
        query: the query, or None for the startup set.
        workspace: the workspace considered (git root of the current directory).
        records: the records, best first (query) or in startup order.
        context: the rendered startup context (startup set only).
        read_only: True when the caller holds no capability (recall only, said so).
        nearest: a query that nothing fits: the records below the relevance floor that
            came nearest (`RecallIndex.recall_with_nearest`), shown as such, never as
            matches; empty otherwise.
    """

    query: str | None
    workspace: str
    records: tuple[Record, ...]
    context: StartupContext | None = None
    read_only: bool = False
    nearest: tuple[Record, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (and the MCP tool's structured result)."""
        doc: dict[str, Any] = {"query": self.query, "workspace": self.workspace}
        if self.context is not None:
            doc["budget_chars"] = self.context.budget_chars
            doc["omitted"] = self.context.omitted
        doc["records"] = [r.to_json() for r in self.records]
        if self.query is not None:
            doc["nearest"] = [r.to_json() for r in self.nearest]
        doc["read_only"] = self.read_only
        if self.read_only:
            doc["note"] = READ_ONLY_NOTE
        return doc


NEAREST_HEADING = "Nearest records, below the relevance floor (they may not answer it):"
"""What introduces `RecallResult.nearest` in the text a query recall prints."""


def recall_lines(found: RecallResult) -> builtins.list[str]:
    """A query recall as the text lines `memory recall` prints and the MCP tool returns.

    Args:
        found: what `AgentMemory.recall` returned for a query (not the startup set).

    Returns:
        One `record_line` per match; when nothing matches, ``(no memory matches
        'QUERY')`` (the query on one line), then `NEAREST_HEADING` and a `record_line`
        per `RecallResult.nearest`, if any. Spec: "Save and inspect memory".
    """
    if found.records:
        return [record_line(r) for r in found.records]
    # The query as typed, on one line: not Python's repr ("don't" quoted as "don't").
    asked = " ".join("".join(ch if ch.isprintable() else " "
                             for ch in found.query or "").split())
    lines = [f"(no memory matches '{asked}')"]
    if found.nearest:
        lines.append(NEAREST_HEADING)
        lines += [record_line(r) for r in found.nearest]
    return lines


class AgentMemory:
    """One agent's records as its managed process may see and change them.

    Attributes:
        agent_id: the agent acted for (only its records resolve; another agent's id is
            "not found", never revealed).
        store: the open memory store.
        principal: the authenticated caller, or None for a read-only reader.
        state_db: the open state database its agent name and settings are read from, or
            None: the installation's, opened when needed (`state`).
        workspace: the current workspace when the caller knows it (a server whose
            directory does not change); None = the git root of the current directory,
            looked up per call.

    A plain class (not a dataclass: see `wardian.memory.models`).
    """

    def __init__(self, agent_id: str, store: MemoryStore, principal: Principal | None = None,
                 name: str | None = None, workspace: str | None = None,
                 state_db: StateDB | None = None) -> None:
        self.agent_id = agent_id
        self.store = store
        self.principal = principal
        self._name = name
        self.workspace = workspace
        self.state_db = state_db

    def state(self) -> StateDB:
        """`state_db`, else the installation's, opened now (a view that only recalls by id
        opens no ``state.db``; a long-running server's kept view sees a replaced file)."""
        if self.state_db is not None:
            return self.state_db
        from wardian.config import open_state_db

        return open_state_db()

    def __repr__(self) -> str:
        return (f"AgentMemory(agent_id={self.agent_id!r}, principal={self.principal!r}, "
                f"workspace={self.workspace!r})")

    def current_workspace(self) -> str:
        """`workspace`, else the git root of the current directory."""
        return self.workspace or default_workspace()

    def capability_holder(self, token: str) -> int | None:
        """The pid of the process holding capability `token` (the launch supervisor), or
        None when no such capability is stored. Read-only; for a server that reuses
        this view while that process lives (`wardian._process.ancestry_to`)."""
        from wardian.memory.capabilities import CapabilityStore

        row = CapabilityStore(self.store.conn).lookup(token.strip())
        return row.pid if row is not None else None

    @property
    def read_only(self) -> bool:
        """Whether this view may only recall (no capability)."""
        return self.principal is None

    def _writer(self, what: str) -> Principal:
        """The authenticated caller, for a change (`what`: e.g. ``save memory``).

        Raises:
            CapabilityMissing (exit 3): a read-only view; the message names `what` and
                what still answers, the hint how to get the capability.
        """
        if self.principal is None:
            from wardian.errors import CapabilityMissing

            raise CapabilityMissing(
                f"cannot {what} here: no memory capability in this process, so memory is "
                "read-only (recall, list, show and history still answer)",
                hint="memory changes work only inside a session started by `wardian agent "
                "launch NAME` (or `wardian agent exec NAME -- CMD`) while agent memory is "
                "enabled",
            )
        return self.principal

    # --- changes -------------------------------------------------------------------------

    def save(
        self, text: str, *, evidence: str, kind: str = "stable", scope: str = "workspace",
        sources: Sequence[str] = (),
    ) -> Any:
        """Save a record (first source primary). Spec "Save and inspect memory".

        Raises:
            CapabilityMissing: read-only view. UsageError / ValidationError: bad kind,
            scope or source; empty evidence; text, evidence or sources over the caps.
        """
        principal = self._writer("save memory")
        where = parse_scope(scope, self.workspace)
        assert where is not None
        # Idempotent and secret-scanned (`MemoryStore.save_once`): the same text, kind and
        # scope returns the existing record; see `save_row` for the chat row.
        return self.store.save_once(
            principal.agent_id, text, evidence=evidence, kind=kind,  # type: ignore[arg-type]
            scope=where, sources=parse_sources(sources, first_primary=True),
            actor=principal.actor,
        )

    def update(
        self, record_id: str, *, text: str | None = None, kind: str | None = None,
        scope: str | None = None, evidence: str | None = None, sources: Sequence[str] = (),
        reason: str | None = None,
    ) -> Record:
        """Update an active record; the previous state stays in history.

        Raises:
            CapabilityMissing; NotFoundError / AmbiguousIdError (not this agent's, or
            several match); UsageError (removed, nothing to change); ValidationError (caps).
        """
        from wardian.memory.store import UNSET

        principal = self._writer("update memory")
        new_scope = parse_scope(scope, self.workspace)
        return self.store.update(
            principal.agent_id, record_id,
            text=UNSET if text is None else text,
            evidence=UNSET if evidence is None else evidence,
            kind=UNSET if kind is None else kind,
            scope=UNSET if new_scope is None else new_scope,
            add_sources=parse_sources(sources, first_primary=False),
            actor=principal.actor, reason=reason,
        )

    def remove(self, record_id: str, *, reason: str | None = None) -> Record:
        """Remove a record; it and its history stay inspectable.

        Raises:
            CapabilityMissing; NotFoundError / AmbiguousIdError; UsageError (already removed).
        """
        principal = self._writer("remove memory")
        return self.store.remove(principal.agent_id, record_id, actor=principal.actor,
                                 reason=reason)

    # --- reads ---------------------------------------------------------------------------

    def list(
        self, *, kind: str | None = None, scope: str | None = None,
        include_removed: bool = False,
    ) -> list[Record]:
        """The agent's records (every workspace), newest first. Allowed read-only.

        Raises:
            UsageError: bad kind or scope.
        """
        # Records set aside as holding a secret stay out of the agent's view, as in recall.
        return self.store.list(self.agent_id, kind=kind, scope_kind=scope,
                               include_removed=include_removed, flagged=False)

    def show(self, record_id: str) -> Record:
        """One of the agent's records (full id or unique prefix), also when removed.
        Allowed read-only.

        Raises:
            NotFoundError / AmbiguousIdError.
        """
        return self.store.get(record_id, agent_id=self.agent_id)

    def history(self, record_id: str) -> builtins.list[Revision]:
        """Every revision of one of the agent's records, oldest first. Allowed read-only.

        Raises:
            NotFoundError / AmbiguousIdError.
        """
        return self.store.history(record_id, agent_id=self.agent_id)

    def recall(self, query: str | None = None, *, limit: int = 10) -> RecallResult:
        """The startup set (no query), or the records that fit a query, best first
        (`RecallIndex.recall`); when it matches nothing, also the
        `wardian.memory.ranking.NEAREST` records (at most `limit`) that came nearest below
        the relevance floor (`RecallResult.nearest`).

        Allowed read-only (the hooks' rule); the result says so.

        Raises:
            UsageError: `limit` below 1.
        """
        from wardian.errors import UsageError
        from wardian.memory.ranking import NEAREST

        if limit < 1:
            raise UsageError(f"limit must be at least 1, got {limit}", hint="e.g. --limit 10")
        workspace = self.current_workspace()
        if query is not None and query.strip():
            found = self.store.index.recall_with_nearest(
                self.agent_id, query, limit=limit, workspace=workspace,
                nearest=min(limit, NEAREST))
            return RecallResult(query, workspace, tuple(found.records),
                                read_only=self.read_only, nearest=tuple(found.nearest))
        context = self.startup_context(workspace)
        return RecallResult(None, workspace, context.loaded, context, read_only=self.read_only)

    def startup_context(self, workspace: str | None = None) -> StartupContext:
        """The agent's startup context for `workspace` (default: this directory's), with
        the budget from ``memory.startup_budget_chars``; its instructions say read-only when
        this view is. Read-only."""
        from wardian.runtime.startup_recall import startup_recall, startup_settings

        return startup_recall(
            self.store, agent_id=self.agent_id, agent_name=self.agent_name(),
            workspace=workspace or self.current_workspace(),
            settings=startup_settings(self.state()),
            direct_save=not self.read_only,
        )

    def agent_name(self) -> str:
        """The agent's registered name (its id8 when it is no longer registered)."""
        if self._name is None:
            from wardian.runtime.agents import AgentRegistry

            agent = AgentRegistry(self.state()).find(self.agent_id)
            self._name = agent.name if agent else self.agent_id[:8]
        return self._name

    def draft_plan(self, memory_ids: Sequence[str]) -> dict[str, Any]:
        """A schema-v1 maintenance plan skeleton for some of the agent's records; writes
        nothing (only the operator previews and applies plans).

        Raises:
            CapabilityMissing; NotFoundError / AmbiguousIdError; UsageError (over 100 ids,
            a record twice, a removed record).
        """
        from wardian.memory.maintenance.draft import draft_plan

        owner = self._writer("draft a maintenance plan").agent_id
        return draft_plan(owner, list(memory_ids), self.store)

    def draft_import(self, files: Sequence[str], *, scope: str | None = None,
                     workspace: str | None = None) -> ImportPlan:
        """A maintenance plan importing instruction files (one ``create`` per durable
        bullet, `wardian.app.instruction_import`); writes nothing.

        Raises:
            CapabilityMissing; UsageError (unreadable file, bad scope).
        """
        from wardian.app.instruction_import import build_import_plan

        owner = self._writer("draft an import plan").agent_id
        return build_import_plan(owner, files, self.store, scope=scope, workspace=workspace)


def open_agent_memory(
    environ: Mapping[str, str] | None = None, *, store: MemoryStore | None = None,
    state_db: StateDB | None = None,
) -> AgentMemory:
    """Authenticate the calling managed process and open its agent's records.

    Fails closed before anything — not even the data directory — is created.

    Args:
        environ: the environment (default ``os.environ``).
        store: an open store to use (a long-running server keeps one and authenticates
            every call); by default one is opened.
        state_db: the open state database for the view (`AgentMemory.state_db`).

    Raises:
        CapabilityMissing / CapabilityInvalid / CapabilityExpired (exit 3).
        CapabilityNotHeld (exit 3): also for a caller in a pid or user namespace other
            than the data directory owner's, the one every launch runs in.
        IdentityUnavailable (exit 3): ``/proc`` is another pid namespace's.
    """
    from wardian._process import is_alive, lineage
    from wardian.config import memory_db_path, namespace_mismatch
    from wardian.errors import CapabilityNotHeld
    from wardian.memory.db import MemoryDB
    from wardian.memory.principal import ENV_CAPABILITY, resolve_principal
    from wardian.memory.store import MemoryStore

    env = os.environ if environ is None else environ
    if env.get(ENV_CAPABILITY, "").strip():
        foreign = namespace_mismatch()
        if foreign:  # its launch ran in the owner's namespaces (`require_owner_namespace`)
            raise CapabilityNotHeld(
                f"memory capability refused: {foreign}",
                hint="a capability works only inside the process tree of the launch it was "
                "minted for, in that launch's namespaces")
    if store is not None:
        # The caller's real ancestry, read on every call: a long-running server
        # is honoured only while it sits inside the capability holder's process tree.
        caller = [(p.pid, p.started_at) for p in lineage()]
        principal = resolve_principal(is_alive=is_alive, caller=caller, store=store,
                                      environ=env)
        return AgentMemory(principal.agent_id, store, principal, state_db=state_db)
    path = memory_db_path(create_dir=False)
    if not env.get(ENV_CAPABILITY, "").strip() or not database_exists(path):
        # raises CapabilityMissing/Invalid
        resolve_principal(is_alive=is_alive, caller=(), db_path=path, environ=env)
    caller = [(p.pid, p.started_at) for p in lineage()]
    opened = MemoryStore(MemoryDB.open(path))
    principal = resolve_principal(is_alive=is_alive, caller=caller, store=opened,
                                  environ=env)
    return AgentMemory(principal.agent_id, opened, principal, state_db=state_db)


def open_reader(
    agents: str | Sequence[str] | None = None, environ: Mapping[str, str] | None = None, *,
    store: MemoryStore | None = None, cwd: str | None = None, state_db: StateDB | None = None,
) -> AgentMemory:
    """`open_agent_memory`, or — only when there is no capability at all — a read-only
    view of the agent the hooks would answer for (`wardian.runtime.hooks.resolve_agent`):
    the launch ancestry's agent, else ``WARDIAN_AGENT_ID``, else among `agents` (names or
    ids) the only one, else the one whose workspace holds `cwd` (default: the current
    directory), else the only one without a workspace. `store` / `state_db`: open
    databases to use (default: the installation's, opened when needed).

    Raises:
        CapabilityInvalid / CapabilityExpired: a capability that does not hold (never a
            fallback). MemoryDisabled: no capability while ``agent_memory.enabled`` is
            false (the hooks give no recall then either). UsageError: no capability and no
            agent, or several agents and none of them is this directory's. NotFoundError:
            unknown agent.
    """
    from wardian.memory.principal import ENV_CAPABILITY

    env = os.environ if environ is None else environ
    if env.get(ENV_CAPABILITY, "").strip():
        return open_agent_memory(env, store=store, state_db=state_db)
    from wardian.errors import UsageError
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore
    from wardian.runtime.hooks import managed_agent_id, resolve_agent

    names = [agents] if isinstance(agents, str) else list(agents or ())
    if not names and not managed_agent_id():  # else resolve_agent finds it again
        raise UsageError(
            "no memory capability and no agent for this process",
            hint="start the provider with `wardian agent launch NAME`, or name the agent "
            "(`wardian mcp --agent NAME`, as `wardian mcp install HOST --agent NAME` "
            "writes it) for read-only recall",
        )
    from wardian.config import SettingsStore, open_state_db

    state_db = state_db or open_state_db()
    enabled = bool(SettingsStore(state_db).get("agent_memory.enabled"))
    if not enabled:
        # The hooks give no recall at all then; neither does this.
        from wardian.errors import MemoryDisabled

        raise MemoryDisabled(
            "agent memory is disabled, so there is no recall outside a managed launch",
            hint="`wardian settings set agent_memory.enabled true`",
        )
    found, warning = resolve_agent(state_db, names, cwd or os.getcwd())
    if found is None:
        raise UsageError(warning or "no agent for this directory",
                         hint="or start the provider with `wardian agent launch NAME`")
    return AgentMemory(found.id, store or MemoryStore(open_memory_db()), None, found.name,
                       state_db=state_db)
