"""The invoker table in ``state.db`` (component ``invokers``): session-close and schedule invokers.

One row per invoker, whatever fires it. Columns shared by every kind are real columns; what
is specific to a kind lives in ``config_json`` (session-close: ``boundaries``,
``require_archive``; schedule: cron/interval, time zone, misfire grace, catch-up, overlap …),
so the schedule invokers use this same store. Invokers are created **disabled**
(DESIGN.md "Invokers"; workflow-anchors "add creates disabled").

Spec: "Optional consolidation" in spec/agent-memory.md; CLI.md ``automation session-close`` /
``automation schedule``.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import new_id, utc_now_iso
from wardian.errors import (
    AmbiguousIdError,
    ConflictError,
    NotFoundError,
    UsageError,
    require_ref,
)

__all__ = ["INVOKER_KINDS", "Invoker", "InvokerStore", "name_taken", "read_assignments"]

INVOKER_KINDS = ("session-close", "schedule")
"""The kinds of invoker this table holds."""

def _sync_subscribers_in_transaction(conn: sqlite3.Connection) -> None:
    """Tell the runtime which agents have an enabled session-close invoker (its event writer
    settles a close that nothing can come of without reading this table)."""
    from wardian.runtime.session_events import set_session_close_subscribers_in_transaction

    rows = conn.execute(
        "SELECT DISTINCT agent_id FROM invokers WHERE kind = 'session-close' AND enabled = 1"
    ).fetchall()
    set_session_close_subscribers_in_transaction(conn, [str(r[0]) for r in rows])


def _unique_names_in_transaction(conn: sqlite3.Connection) -> None:
    """Add the UNIQUE index on ``(kind, name)``. Names an older Wardian let two invokers of a
    kind share first become unique: the oldest keeps the name, each later one gets its
    8-character id appended (``nightly (3f2a9c1e)``), so no invoker is lost and every one
    stays addressable by id as before."""
    rows = conn.execute("SELECT id, kind, name FROM invokers ORDER BY created_at, id").fetchall()
    seen: set[tuple[str, str]] = set()
    for row in rows:
        key = (str(row[1]), str(row[2]))
        if key in seen:
            conn.execute("UPDATE invokers SET name = ? WHERE id = ?",
                         (f"{row[2]} ({str(row[0])[:8]})", row[0]))
        seen.add(key)
    conn.execute("CREATE UNIQUE INDEX invokers_kind_name ON invokers (kind, name)")


def name_taken(kind: str, name: str, holder_id: str | None) -> ConflictError:
    """The refusal of a second `kind` invoker called `name` (exit 4), naming the holder."""
    held = f" ({holder_id[:8]})" if holder_id else ""
    change = f"`wardian automation {kind} set {holder_id[:8]} …`" if holder_id else "`set`"
    return ConflictError(f"a {kind} invoker named {name!r} already exists{held}",
                         hint=f"choose another --name, or change that one with {change}")


_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_invokers", """
    CREATE TABLE invokers (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('session-close', 'schedule')),
        name TEXT NOT NULL,
        blueprint_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
        assignments_json TEXT NOT NULL DEFAULT '{}',
        inputs_json TEXT NOT NULL DEFAULT '{}',
        config_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX invokers_kind_agent ON invokers (kind, agent_id, enabled);
    """),
    # 2: the runtime's copy of the agents with an enabled session-close invoker, filled
    # from the invokers there are (and kept by every enable, disable and remove).
    NamedMigration("sync_session_close_subscribers", _sync_subscribers_in_transaction),
    # 3: one name per invoker of a kind, kept by the database itself (the check before an
    # insert and the insert were two steps, and two `add`s at once both passed the check).
    NamedMigration("unique_invoker_names", _unique_names_in_transaction),
]


@dataclass(frozen=True)
class Invoker:
    """One invoker.

    Attributes:
        id: UUID4.
        kind: ``session-close`` or ``schedule``.
        name: the operator's label.
        blueprint_id: the blueprint it runs.
        agent_id: the agent (principal) its runs act for.
        enabled: created False; ``enable`` re-validates before setting True.
        assignments: role -> assignment dict (the JSON the operator gave, as parsed).
        inputs: blueprint inputs (name -> value).
        config: kind-specific settings (session-close: ``boundaries`` list, ``require_archive``).
        created_at, updated_at: UTC ISO-8601 with ``Z``.
    """

    id: str
    kind: str
    name: str
    blueprint_id: str
    agent_id: str
    enabled: bool
    assignments: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    def to_json(self) -> dict[str, Any]:
        """The invoker as a JSON-ready dict."""
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "blueprint_id": self.blueprint_id,
            "agent_id": self.agent_id,
            "enabled": self.enabled,
            "assignments": self.assignments,
            "inputs": self.inputs,
            "config": self.config,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @property
    def boundaries(self) -> list[str]:
        """Session-close boundary reasons it matches; empty means any."""
        return list(self.config.get("boundaries") or [])

    def matches_boundary(self, boundary: str) -> bool:
        """True when this invoker fires for `boundary` (no boundaries configured = any)."""
        wanted = self.boundaries
        return not wanted or boundary in wanted


def _row_to_invoker(row: sqlite3.Row) -> Invoker:
    return Invoker(
        id=row["id"],
        kind=row["kind"],
        name=row["name"],
        blueprint_id=row["blueprint_id"],
        agent_id=row["agent_id"],
        enabled=bool(row["enabled"]),
        assignments=json.loads(row["assignments_json"]),
        inputs=json.loads(row["inputs_json"]),
        config=json.loads(row["config_json"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _check_kind(kind: str) -> None:
    if kind not in INVOKER_KINDS:
        raise UsageError(f"unknown invoker kind {kind!r}", hint=f"use one of {INVOKER_KINDS}")


def read_assignments(conn: sqlite3.Connection) -> list[tuple[str, str]] | None:
    """``(invoker id, assignments_json as stored)`` of every invoker; None when the
    ``invokers`` table does not exist yet. Read-only, over any connection to ``state.db``
    (``wardian doctor`` passes a read-only one; a damaged JSON text is the caller's to skip)."""
    from wardian._db import has_table

    if not has_table(conn, "invokers"):
        return None
    rows = conn.execute("SELECT id, assignments_json FROM invokers").fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


class InvokerStore:
    """CRUD over the ``invokers`` table of ``state.db``.

    Validation of blueprint, assignments and catalog is the caller's job (the CLI layer
    calls the engine/providers before `add` and `set_enabled(True)`); this store keeps rows.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("invokers", _MIGRATIONS)
        self.conn: sqlite3.Connection = self.db.conn

    def add(
        self,
        kind: str,
        *,
        name: str,
        blueprint_id: str,
        agent_id: str,
        assignments: dict[str, Any],
        inputs: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> Invoker:
        """Insert a new invoker, **disabled** (atomic).

        Args:
            kind: ``session-close`` or ``schedule``.
            name: non-empty label.
            blueprint_id, agent_id: what it runs and for whom (agent id, not name).
            assignments, inputs, config: JSON-serialisable dicts.

        Raises:
            UsageError: unknown kind or empty name. ConflictError (exit 4): another
                invoker of `kind` has this name (the UNIQUE index: also when two `add`s run
                at once).
        """
        _check_kind(kind)
        if not name.strip():
            raise UsageError("an invoker needs a non-empty --name")
        now = utc_now_iso()
        invoker_id = new_id()
        try:
            with atomic(self.conn):
                self.conn.execute(
                    "INSERT INTO invokers (id, kind, name, blueprint_id, agent_id, enabled,"
                    " assignments_json, inputs_json, config_json, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)",
                    (
                        invoker_id, kind, name.strip(), blueprint_id, agent_id,
                        json.dumps(assignments, sort_keys=True),
                        json.dumps(inputs or {}, sort_keys=True),
                        json.dumps(config or {}, sort_keys=True), now, now,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise self._name_taken(kind, name.strip()) from exc
        return self.get(invoker_id)

    def _name_taken(self, kind: str, name: str) -> ConflictError:
        """The UNIQUE ``(kind, name)`` index refused a write: say who holds the name."""
        row = self.conn.execute("SELECT id FROM invokers WHERE kind = ? AND name = ?",
                                (kind, name)).fetchone()
        return name_taken(kind, name, str(row[0]) if row else None)

    def get(self, id_or_prefix: str, *, kind: str | None = None) -> Invoker:
        """Find an invoker by full id, unique id prefix, or exact unique name. Read-only.

        Args:
            id_or_prefix: UUID, prefix of one, or the invoker's name.
            kind: restrict to one kind (so ``schedule show`` never finds a session-close one).

        Raises:
            NotFoundError: nothing matches.
            AmbiguousIdError: the prefix or name matches several invokers.
        """
        where, params = ("", []) if kind is None else (" AND kind = ?", [kind])
        require_ref(id_or_prefix, "invoker id or name",
                    hint=f"list them with `wardian automation {kind or 'session-close'} list`")
        rows = self.conn.execute(
            f"SELECT * FROM invokers WHERE lower(id) LIKE lower(?) ESCAPE '\\'{where}"
            " ORDER BY id LIMIT 10",
            [id_or_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",
             *params],
        ).fetchall()
        exact = [r for r in rows if r["id"] == id_or_prefix]
        if exact:
            return _row_to_invoker(exact[0])
        if len(rows) > 1:
            raise AmbiguousIdError("invoker", id_or_prefix, [r["id"][:8] for r in rows])
        if not rows:
            rows = self.conn.execute(
                f"SELECT * FROM invokers WHERE name = ?{where} LIMIT 10", [id_or_prefix, *params]
            ).fetchall()
            if len(rows) > 1:
                raise AmbiguousIdError("invoker", id_or_prefix, [r["id"][:8] for r in rows])
        if not rows:
            what = f"{kind} invoker" if kind else "invoker"
            raise NotFoundError(
                f"no {what} {id_or_prefix!r}",
                hint="list them with `wardian automation "
                f"{kind or 'session-close'} list`",
            )
        return _row_to_invoker(rows[0])

    def list(
        self,
        *,
        kind: str | None = None,
        agent_id: str | None = None,
        enabled: bool | None = None,
    ) -> list[Invoker]:
        """Invokers, oldest first, optionally filtered. Read-only."""
        clauses: list[str] = []
        params: list[Any] = []
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if agent_id is not None:
            clauses.append("agent_id = ?")
            params.append(agent_id)
        if enabled is not None:
            clauses.append("enabled = ?")
            params.append(1 if enabled else 0)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.conn.execute(
            f"SELECT * FROM invokers{where} ORDER BY created_at, id", params
        ).fetchall()
        return [_row_to_invoker(r) for r in rows]

    def matching_session_close(self, agent_id: str, boundary: str) -> builtins.list[Invoker]:
        """Enabled session-close invokers of `agent_id` that fire for `boundary`. Read-only."""
        return [
            inv
            for inv in self.list(kind="session-close", agent_id=agent_id, enabled=True)
            if inv.matches_boundary(boundary)
        ]

    def set_enabled(self, invoker_id: str, enabled: bool) -> Invoker:
        """Enable or disable an invoker by full id (atomic). Validate first when enabling.

        Raises:
            NotFoundError: no such invoker.
        """
        with atomic(self.conn):
            cur = self.conn.execute(
                "UPDATE invokers SET enabled = ?, updated_at = ? WHERE id = ?",
                (1 if enabled else 0, utc_now_iso(), invoker_id),
            )
            if cur.rowcount == 0:
                raise NotFoundError(f"no invoker {invoker_id!r}")
            _sync_subscribers_in_transaction(self.conn)
        return self.get(invoker_id)

    def update(
        self,
        invoker_id: str,
        *,
        name: str | None = None,
        assignments: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> Invoker:
        """Change the given fields of an invoker by full id (atomic); None leaves a field as is.

        Raises:
            NotFoundError: no such invoker. ConflictError (exit 4): `name` is another
                invoker's of the same kind (the UNIQUE index, whatever ran at the same time).
        """
        sets: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("name", name),
            ("assignments_json", None if assignments is None else json.dumps(assignments,
                                                                              sort_keys=True)),
            ("inputs_json", None if inputs is None else json.dumps(inputs, sort_keys=True)),
            ("config_json", None if config is None else json.dumps(config, sort_keys=True)),
        ):
            if value is not None:
                sets.append(f"{column} = ?")
                params.append(value)
        sets.append("updated_at = ?")
        params.append(utc_now_iso())
        try:
            with atomic(self.conn):
                cur = self.conn.execute(
                    f"UPDATE invokers SET {', '.join(sets)} WHERE id = ?",
                    [*params, invoker_id])
                if cur.rowcount == 0:
                    raise NotFoundError(f"no invoker {invoker_id!r}")
        except sqlite3.IntegrityError as exc:
            row = self.conn.execute("SELECT kind FROM invokers WHERE id = ?",
                                    (invoker_id,)).fetchone()
            if name is None or row is None:
                raise
            raise self._name_taken(str(row[0]), name) from exc
        return self.get(invoker_id)

    def remove(self, invoker_id: str) -> Invoker:
        """Delete an invoker by full id (atomic); its runs stay in the run history.

        Returns:
            The invoker as it was.

        Raises:
            NotFoundError: no such invoker.
        """
        with atomic(self.conn):
            invoker = self.get(invoker_id)
            self.conn.execute("DELETE FROM invokers WHERE id = ?", (invoker.id,))
            _sync_subscribers_in_transaction(self.conn)
        return invoker
