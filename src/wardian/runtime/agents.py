"""The agents registry in ``state.db``: durable identities, not provider processes.

Spec: "Agent memory" (an agent is a durable identity whose memory survives provider
changes); CLI.md `agent add|list|show|remove`.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import new_id, utc_now_iso
from wardian.errors import (
    AmbiguousIdError,
    ConflictError,
    NotFoundError,
    UsageError,
    require_ref,
)

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Agent", "AgentRegistry", "read_agents"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_agents", """
    CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        provider TEXT NOT NULL,
        model TEXT,
        effort TEXT,
        workspace TEXT,
        created_at TEXT NOT NULL
    );
    """),
]


class Agent(NamedTuple):
    """One agent: `id` (UUID4), unique `name`, default provider/model/effort and workspace."""

    id: str
    name: str
    provider: str
    model: str | None
    effort: str | None
    workspace: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """The agent as a JSON-ready dict."""
        return self._asdict()


def read_agents(conn: sqlite3.Connection) -> list[Agent] | None:
    """Every agent, by name; None when the ``agents`` table does not exist yet. Read-only,
    over any connection to ``state.db`` (``wardian doctor`` passes a read-only one)."""
    from wardian._db import has_table

    if not has_table(conn, "agents"):
        return None
    rows = conn.execute(
        "SELECT id, name, provider, model, effort, workspace, created_at FROM agents"
        " ORDER BY name").fetchall()
    return [Agent(*tuple(r)) for r in rows]


class AgentRegistry:
    """CRUD over the ``agents`` table of ``state.db``.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("agents", _MIGRATIONS)
        self.conn: sqlite3.Connection = self.db.conn

    def add(
        self,
        name: str,
        provider: str,
        *,
        model: str | None = None,
        effort: str | None = None,
        workspace: str | None = None,
    ) -> Agent:
        """Create an agent with a fresh UUID4 (atomic).

        Raises:
            UsageError: the name is not a slug of letters, digits, ``.``, ``_``, ``-``.
            ConflictError: the name is taken.
        """
        if not _NAME.match(name):
            raise UsageError(
                f"agent name {name!r} is not valid",
                hint="use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            )
        if workspace is not None:
            workspace = str(Path(workspace).expanduser().resolve())
        agent = Agent(new_id(), name, provider, model, effort, workspace, utc_now_iso())
        try:
            with atomic(self.conn):
                self.conn.execute(
                    "INSERT INTO agents (id, name, provider, model, effort, workspace, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (agent.id, agent.name, agent.provider, agent.model, agent.effort,
                     agent.workspace, agent.created_at),
                )
        except sqlite3.IntegrityError:
            raise ConflictError(
                f"an agent named {name!r} already exists",
                hint="choose another name, or see `wardian agent show " + name + "`",
            ) from None
        return agent

    def list(self) -> list[Agent]:
        """All agents by name. Read-only."""
        return [Agent(**dict(r)) for r in self.conn.execute("SELECT * FROM agents ORDER BY name")]

    def get(self, name_or_id: str) -> Agent:
        """Resolve an agent by exact name, full id, or unique id prefix. Read-only.

        Raises:
            NotFoundError: nothing matches.
            AmbiguousIdError: the prefix matches several agents.
        """
        require_ref(name_or_id, "agent name or id", hint="see `wardian agent list`")
        row = self.conn.execute(
            "SELECT * FROM agents WHERE name = ? OR id = ?", (name_or_id, name_or_id)
        ).fetchone()
        if row is not None:
            return Agent(**dict(row))
        if re.fullmatch(r"[0-9a-fA-F-]{4,36}", name_or_id):
            rows = self.conn.execute(
                "SELECT * FROM agents WHERE lower(id) LIKE lower(?) ORDER BY id",
                (name_or_id + "%",)
            ).fetchall()
            if len(rows) == 1:
                return Agent(**dict(rows[0]))
            if len(rows) > 1:
                raise AmbiguousIdError("agent", name_or_id, [r["id"][:8] for r in rows])
        raise NotFoundError(
            f"no agent named or with id {name_or_id!r}", hint="see `wardian agent list`"
        )

    def update(self, agent_id: str, *, provider: str | None = None, model: str | None = None,
               effort: str | None = None, workspace: str | None = None) -> Agent:
        """Change the given fields of the agent with this full id (atomic); None leaves a
        field as it is, ``""`` clears it (model, effort, workspace). Its id, name and
        memory stay. Newly launched processes use it.

        Raises:
            NotFoundError: no such agent.
        """
        sets: list[str] = []
        params: list[str | None] = []
        if workspace:
            workspace = str(Path(workspace).expanduser().resolve())
        for column, value in (("provider", provider), ("model", model), ("effort", effort),
                              ("workspace", workspace)):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value or None)  # "" clears the field
        if sets:
            with atomic(self.conn):
                cur = self.conn.execute(
                    f"UPDATE agents SET {', '.join(sets)} WHERE id = ?", [*params, agent_id])
                if cur.rowcount == 0:
                    raise NotFoundError(f"no agent with id {agent_id!r}",
                                        hint="see `wardian agent list`")
        agent = self.find(agent_id)
        if agent is None:
            raise NotFoundError(f"no agent with id {agent_id!r}", hint="see `wardian agent list`")
        return agent

    def find(self, agent_id: str) -> Agent | None:
        """The agent with exactly this id, or None. Read-only."""
        row = self.conn.execute("SELECT * FROM agents WHERE id = ?", (agent_id,)).fetchone()
        return Agent(**dict(row)) if row else None

    def remove(self, agent_id: str) -> None:
        """Delete the agent row (atomic). Callers decide what happens to its records first."""
        with atomic(self.conn):
            self.conn.execute("DELETE FROM agents WHERE id = ?", (agent_id,))
