"""Slot outcomes of schedule invokers (``state.db`` component ``schedule_slots``).

DESIGN.md "Invokers": every scheduled slot gets one row, keyed UNIQUE on
``(invoker_id, scheduled_time)``, written **before** anything is dispatched. A slot ends in
exactly one outcome:

* ``ran`` — ``run_id`` is the run created for it (idempotency key
  ``schedule:<invoker id>:<scheduled time>``);
* ``skipped`` — ``reason`` says why (``disabled``, ``misfired by N s``, ``overlap: …``,
  ``blocked assignment: …``); ``run_id`` names a skipped run record when one was written;
* ``coalesced`` — ``into_slot`` names the slot whose run covers it, ``run_id`` that run.

``pending`` is the only transient state: the decision "run this slot" is durable, the run
not created yet. `dispatch_slot` creates the run (idempotency key `schedule_key`) and
resolves the slot; a daemon that dies in between finishes the job at its next start (run
creation is idempotent by key), so a slot is never lost and never run twice.

``schedule_state`` keeps, per schedule invoker, ``active_since`` (the instant it was last
enabled: slots before it are not owed) and ``disabled_at``. Before a disabled invoker is
enabled again, `SlotStore.record_disabled_period` records the slots that fell due between its
last recorded slot and ``disabled_at`` (no daemon ran to record them) as ``skipped:
disabled``, so re-enabling never leaves a slot without an outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wardian._backend import Connection, Row
from wardian._db import Migrations, NamedMigration, StateDB, atomic
from wardian._util import format_utc, parse_utc, utc_now_iso
from wardian.errors import StoreError, WardianError
from wardian.invokers.schedule import ScheduleConfig, SlotDecision, plan_due_slots, slot_key
from wardian.invokers.store import Invoker

if TYPE_CHECKING:  # the engine and pydantic models: imported when a slot is dispatched
    from wardian.blueprints.validate import LoadedBlueprint
    from wardian.engine.runs import RunStore

__all__ = ["OUTCOMES", "ScheduleState", "Slot", "SlotStore", "dispatch_slot", "schedule_key"]

OUTCOMES = ("pending", "ran", "skipped", "coalesced", "blocked")

_MIGRATIONS = Migrations(sqlite=[
    NamedMigration("create_schedule_slots", """
    CREATE TABLE schedule_slots (
        invoker_id TEXT NOT NULL,
        scheduled_time TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'ran', 'skipped', 'coalesced')),
        run_id TEXT,
        reason TEXT,
        late_s REAL NOT NULL DEFAULT 0,
        into_slot TEXT,
        decided_at TEXT NOT NULL,
        resolved_at TEXT,
        PRIMARY KEY (invoker_id, scheduled_time)
    );
    CREATE INDEX schedule_slots_outcome ON schedule_slots (outcome);
    CREATE TABLE schedule_state (
        invoker_id TEXT PRIMARY KEY,
        active_since TEXT NOT NULL,
        disabled_at TEXT
    );
    """),
    # settled_at: set once the slot's run was handed to the executor and returned (or was
    # found not queued), so a restart re-executes only runs that never started.
    NamedMigration("add_schedule_slots_settled_at", """
    ALTER TABLE schedule_slots ADD COLUMN settled_at TEXT;
    CREATE INDEX schedule_slots_unsettled ON schedule_slots (outcome, settled_at);
    """),
    # blocked: the invoker was broken (blueprint missing or invalid, a required input
    # unset) when the slot fell due; `reason` says why and no run was created. SQLite
    # cannot alter a CHECK, so the table is rebuilt with its rows.
    NamedMigration("schedule_slots_blocked_outcome", """
    CREATE TABLE schedule_slots_new (
        invoker_id TEXT NOT NULL,
        scheduled_time TEXT NOT NULL,
        outcome TEXT NOT NULL
            CHECK (outcome IN ('pending', 'ran', 'skipped', 'coalesced', 'blocked')),
        run_id TEXT,
        reason TEXT,
        late_s REAL NOT NULL DEFAULT 0,
        into_slot TEXT,
        decided_at TEXT NOT NULL,
        resolved_at TEXT,
        settled_at TEXT,
        PRIMARY KEY (invoker_id, scheduled_time)
    );
    INSERT INTO schedule_slots_new (invoker_id, scheduled_time, outcome, run_id, reason,
        late_s, into_slot, decided_at, resolved_at, settled_at)
        SELECT invoker_id, scheduled_time, outcome, run_id, reason, late_s, into_slot,
        decided_at, resolved_at, settled_at FROM schedule_slots;
    DROP TABLE schedule_slots;
    ALTER TABLE schedule_slots_new RENAME TO schedule_slots;
    CREATE INDEX schedule_slots_outcome ON schedule_slots (outcome);
    CREATE INDEX schedule_slots_unsettled ON schedule_slots (outcome, settled_at);
    """),
], postgres=[
    NamedMigration("create_schedule_slots", """
    CREATE TABLE schedule_slots (
        invoker_id TEXT NOT NULL,
        scheduled_time TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'ran', 'skipped', 'coalesced')),
        run_id TEXT,
        reason TEXT,
        late_s DOUBLE PRECISION NOT NULL DEFAULT 0,
        into_slot TEXT,
        decided_at TEXT NOT NULL,
        resolved_at TEXT,
        PRIMARY KEY (invoker_id, scheduled_time),
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY
    );
    CREATE INDEX schedule_slots_outcome ON schedule_slots (outcome);
    CREATE TABLE schedule_state (
        invoker_id TEXT PRIMARY KEY,
        active_since TEXT NOT NULL,
        disabled_at TEXT,
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY
    );
    """),
    NamedMigration("add_schedule_slots_settled_at", """
    ALTER TABLE schedule_slots ADD COLUMN settled_at TEXT;
    CREATE INDEX schedule_slots_unsettled ON schedule_slots (outcome, settled_at);
    """),
    # Rebuilt as on SQLite (so every store's constraints and rowid sequence carry the
    # schedule_slots_new_ names); rowid is numbered anew in the copy.
    NamedMigration("schedule_slots_blocked_outcome", """
    CREATE TABLE schedule_slots_new (
        invoker_id TEXT NOT NULL,
        scheduled_time TEXT NOT NULL,
        outcome TEXT NOT NULL
            CHECK (outcome IN ('pending', 'ran', 'skipped', 'coalesced', 'blocked')),
        run_id TEXT,
        reason TEXT,
        late_s DOUBLE PRECISION NOT NULL DEFAULT 0,
        into_slot TEXT,
        decided_at TEXT NOT NULL,
        resolved_at TEXT,
        settled_at TEXT,
        PRIMARY KEY (invoker_id, scheduled_time),
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY
    );
    INSERT INTO schedule_slots_new (invoker_id, scheduled_time, outcome, run_id, reason,
        late_s, into_slot, decided_at, resolved_at, settled_at)
        SELECT invoker_id, scheduled_time, outcome, run_id, reason, late_s, into_slot,
        decided_at, resolved_at, settled_at FROM schedule_slots;
    DROP TABLE schedule_slots;
    ALTER TABLE schedule_slots_new RENAME TO schedule_slots;
    CREATE INDEX schedule_slots_outcome ON schedule_slots (outcome);
    CREATE INDEX schedule_slots_unsettled ON schedule_slots (outcome, settled_at);
    """),
])


@dataclass(frozen=True)
class Slot:
    """One recorded slot (see the module docstring for the outcomes)."""

    invoker_id: str
    scheduled_time: str
    outcome: str
    run_id: str | None
    reason: str | None
    late_s: float
    into_slot: str | None
    decided_at: str
    resolved_at: str | None
    settled_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The slot as a JSON-ready dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class ScheduleState:
    """Per-invoker bookkeeping: `active_since` (UTC ISO) and `disabled_at` (or None)."""

    invoker_id: str
    active_since: str
    disabled_at: str | None


def _slot(row: Row) -> Slot:
    return Slot(**{k: row[k] for k in row.keys()})  # noqa: SIM118 (Row iterates values)


class SlotStore:
    """The ``schedule_slots`` and ``schedule_state`` tables.

    Args:
        db: the open state database (`wardian.config.open_state_db`); a caller that shares
            it can wrap our writes and its own in one `atomic` block (e.g. enabling an
            invoker and recording ``active_since``).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("schedule_slots", _MIGRATIONS)
        self.conn: Connection = db.conn

    # --- state ---------------------------------------------------------------------------

    def state(self, invoker_id: str) -> ScheduleState | None:
        """The invoker's bookkeeping row, or None. Read-only."""
        row = self.conn.execute(
            "SELECT * FROM schedule_state WHERE invoker_id = ?", (invoker_id,)
        ).fetchone()
        return ScheduleState(row["invoker_id"], row["active_since"], row["disabled_at"]) \
            if row else None

    def states(self) -> dict[str, ScheduleState]:
        """All bookkeeping rows by invoker id. Read-only."""
        return {
            r["invoker_id"]: ScheduleState(r["invoker_id"], r["active_since"], r["disabled_at"])
            for r in self.conn.execute("SELECT * FROM schedule_state")
        }

    def mark_enabled(self, invoker_id: str, at: str) -> None:
        """Record that the invoker became enabled at `at` (atomic; no-op if already active)."""
        with atomic(self.conn):
            current = self.state(invoker_id)
            if current is not None and current.disabled_at is None:
                return
            self.conn.execute(
                "INSERT INTO schedule_state (invoker_id, active_since, disabled_at)"
                " VALUES (?, ?, NULL) ON CONFLICT (invoker_id) DO UPDATE SET"
                " active_since = excluded.active_since, disabled_at = NULL",
                (invoker_id, at),
            )

    def mark_disabled(self, invoker_id: str, at: str) -> None:
        """Record that the invoker was disabled at `at` (atomic; no-op if not active)."""
        with atomic(self.conn):
            self.conn.execute(
                "UPDATE schedule_state SET disabled_at = ? WHERE invoker_id = ?"
                " AND disabled_at IS NULL",
                (at, invoker_id),
            )

    def record_disabled_period(self, invoker_id: str, config: ScheduleConfig, *,
                               now: datetime, chunk: int = 10_000) -> int:
        """Record as ``skipped: disabled`` every slot of the invoker's last enabled period
        that has no row yet: those in (its last recorded slot or ``active_since``,
        ``disabled_at``]. Call it before marking the invoker enabled again (that moves
        ``active_since`` and forgets ``disabled_at``). Idempotent; a no-op unless disabled.

        Args:
            config: the invoker's schedule (computes the fire times).
            now: decision time (aware); ``late_s`` is measured from it.
            chunk: slots recorded per transaction (bounds the write lock on a long backlog).

        Returns:
            How many slots were recorded.
        """
        state = self.state(invoker_id)
        if state is None or state.disabled_at is None:
            return 0
        last = self.last_slot(invoker_id)
        since = parse_utc(state.active_since)
        cursor = max(last, since) if last else since
        end = parse_utc(state.disabled_at)
        total = 0
        while True:
            due = config.fire_times.between(cursor, end, limit=chunk)
            if not due:
                return total
            total += len(self.record(invoker_id, plan_due_slots(config, due, now, disabled=True),
                                     decided_at=now))
            cursor = due[-1]

    def forget(self, invoker_id: str) -> None:
        """Drop the bookkeeping of a removed invoker (its slot history stays). Atomic."""
        with atomic(self.conn):
            self.conn.execute("DELETE FROM schedule_state WHERE invoker_id = ?", (invoker_id,))

    # --- slots ---------------------------------------------------------------------------

    def last_slot(self, invoker_id: str) -> datetime | None:
        """The newest recorded scheduled time of the invoker (the cursor), or None."""
        row = self.conn.execute(
            "SELECT MAX(scheduled_time) FROM schedule_slots WHERE invoker_id = ?", (invoker_id,)
        ).fetchone()
        return parse_utc(row[0]) if row and row[0] else None

    def record(self, invoker_id: str, decisions: Sequence[SlotDecision], *,
               decided_at: datetime) -> list[SlotDecision]:
        """Insert one row per decision, before any dispatch (atomic).

        ``run`` decisions are stored as ``pending``. A slot that already has a row keeps it
        (UNIQUE key): that is how a slot fires at most once.

        Returns:
            The decisions that were newly recorded (the caller dispatches only those).
        """
        fresh: list[SlotDecision] = []
        when = format_utc(decided_at)
        with atomic(self.conn):
            for d in decisions:
                outcome = "pending" if d.outcome == "run" else d.outcome
                cur = self.conn.execute(
                    "INSERT INTO schedule_slots (invoker_id, scheduled_time, outcome, reason,"
                    " late_s, into_slot, decided_at, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (invoker_id, scheduled_time) DO NOTHING",
                    (invoker_id, slot_key(d.scheduled), outcome, d.reason, round(d.late_s, 3),
                     slot_key(d.into) if d.into else None, when,
                     when if outcome == "skipped" else None),
                )
                if cur.rowcount:
                    fresh.append(d)
        return fresh

    def resolve(self, invoker_id: str, scheduled_time: str, *, outcome: str,
                run_id: str | None, reason: str | None = None) -> None:
        """Finish a ``pending`` slot as ``ran`` (or ``skipped``) and point the slots
        coalesced into it at the same run (atomic, idempotent)."""
        now = utc_now_iso()
        with atomic(self.conn):
            self.conn.execute(
                "UPDATE schedule_slots SET outcome = ?, run_id = ?,"
                " reason = COALESCE(?, reason), resolved_at = ?"
                " WHERE invoker_id = ? AND scheduled_time = ? AND outcome = 'pending'",
                (outcome, run_id, reason, now, invoker_id, scheduled_time),
            )
            if outcome == "ran":
                self.conn.execute(
                    "UPDATE schedule_slots SET run_id = ?, resolved_at = ?"
                    " WHERE invoker_id = ? AND into_slot = ? AND outcome = 'coalesced'"
                    " AND run_id IS NULL",
                    (run_id, now, invoker_id, scheduled_time),
                )
            else:
                self.conn.execute(
                    "UPDATE schedule_slots SET outcome = 'skipped',"
                    " reason = reason || '; its target slot was skipped: ' || ?,"
                    " resolved_at = ? WHERE invoker_id = ? AND into_slot = ?"
                    " AND outcome = 'coalesced' AND run_id IS NULL",
                    (reason or "", now, invoker_id, scheduled_time),
                )

    def unsettled(self) -> list[Slot]:
        """``ran`` slots whose run was not yet seen through the executor. Read-only."""
        return [_slot(r) for r in self.conn.execute(
            "SELECT * FROM schedule_slots WHERE outcome = 'ran' AND settled_at IS NULL"
            " ORDER BY scheduled_time")]

    def settle(self, invoker_id: str, scheduled_time: str) -> None:
        """Note that the slot's run went through the executor (atomic, idempotent)."""
        with atomic(self.conn):
            self.conn.execute(
                "UPDATE schedule_slots SET settled_at = ? WHERE invoker_id = ?"
                " AND scheduled_time = ? AND settled_at IS NULL",
                (utc_now_iso(), invoker_id, scheduled_time),
            )

    def pending(self, invoker_id: str | None = None) -> list[Slot]:
        """Slots decided to run whose run is not yet recorded, oldest first. Read-only."""
        where, params = ("", ()) if invoker_id is None else (" AND invoker_id = ?", (invoker_id,))
        return [_slot(r) for r in self.conn.execute(
            f"SELECT * FROM schedule_slots WHERE outcome = 'pending'{where}"
            " ORDER BY scheduled_time", params)]

    def history(self, invoker_id: str, *, limit: int = 50) -> list[Slot]:
        """The invoker's slots, newest first. Read-only."""
        return [_slot(r) for r in self.conn.execute(
            "SELECT * FROM schedule_slots WHERE invoker_id = ?"
            " ORDER BY scheduled_time DESC LIMIT ?", (invoker_id, limit))]

    def all_slots(self, invoker_id: str | None = None) -> list[Slot]:
        """Every slot (of one invoker), oldest first. Read-only; for tests and benches."""
        where, params = ("", ()) if invoker_id is None else (" WHERE invoker_id = ?", (invoker_id,))
        return [_slot(r) for r in self.conn.execute(
            f"SELECT * FROM schedule_slots{where} ORDER BY invoker_id, scheduled_time", params)]

    def last_outcome(self, invoker_id: str) -> Slot | None:
        """The newest slot of the invoker, or None. Read-only."""
        rows = self.history(invoker_id, limit=1)
        return rows[0] if rows else None


# --- creating the run of a decided slot --------------------------------------------------


def schedule_key(invoker_id: str, scheduled: datetime | str) -> str:
    """The run idempotency key of one slot: ``schedule:<invoker id>:<scheduled time iso>``."""
    text = scheduled if isinstance(scheduled, str) else slot_key(scheduled)
    return f"schedule:{invoker_id}:{text}"


def _blocked_reason(invoker: Invoker) -> str | None:
    """Why the invoker's assignments cannot run now, or None (providers' validation)."""
    try:
        from wardian.engine.assignments import agent_selection
        from wardian.providers.assignments import parse_assignments, resolve_assignment
    except ImportError:
        return None
    try:
        for assignment in parse_assignments(invoker.assignments).values():
            resolve_assignment(assignment, agents=agent_selection)
    except WardianError as exc:
        return f"blocked assignment: {exc.render()}"
    return None


def invoker_blueprint(invoker: Invoker) -> LoadedBlueprint | None:
    """The invoker's blueprint, validated, or None when it is missing or broken (the health
    check then reports why). Loaded once per slot and handed to `dispatch_slot` and to the
    executor."""
    from wardian.blueprints.library import find_blueprint
    from wardian.engine.actions import known_actions

    try:
        return find_blueprint(invoker.blueprint_id, known_actions=known_actions())
    except WardianError:
        return None


def dispatch_slot(runs: RunStore, slots: SlotStore, invoker: Invoker, scheduled_time: str,
                  *, late_s: float = 0.0, blueprint: LoadedBlueprint | None = None,
                  ) -> tuple[str, str]:
    """Create (or find) the run of a ``pending`` slot and resolve the slot. Idempotent.

    Args:
        runs: the engine's run store.
        scheduled_time: the slot key (UTC ISO with ``Z``).
        blueprint: the invoker's blueprint as `invoker_blueprint` loaded it (None: loaded
            here), for the health check and the run's creation.

    Returns:
        ``(run_id, run_status)``; status ``skipped`` when the assignment is blocked;
        ``("", "blocked")`` when the invoker is broken (`wardian.invokers.health`): the
        slot is recorded ``blocked`` with the reason and no run is created.
    """
    from wardian.invokers.health import invoker_problem

    if blueprint is None:
        blueprint = invoker_blueprint(invoker)
    problem = invoker_problem(invoker, blueprint=blueprint, state=slots.db)
    if problem is not None:
        slots.resolve(invoker.id, scheduled_time, outcome="blocked", run_id=None,
                      reason=f"invoker broken: {problem.reason}")
        return "", "blocked"
    key = schedule_key(invoker.id, scheduled_time)
    common: dict[str, Any] = {
        "blueprint_id": invoker.blueprint_id,
        "agent_id": invoker.agent_id,
        "assignments": invoker.assignments,
        "inputs": invoker.inputs,
        "invocation": {"trigger": "schedule", "payload": {
            "invoker_id": invoker.id, "invoker_name": invoker.name,
            "scheduled_time": scheduled_time, "late_s": round(late_s, 3),
            "idempotency_key": key}},
        "idempotency_key": key,
        "invoker_id": invoker.id,
        "blueprint": blueprint,
    }
    reason = _blocked_reason(invoker)
    if reason is None:
        try:
            run, _ = runs.create_run(**common, status="queued")
        except WardianError as exc:
            if isinstance(exc, StoreError):
                raise
            reason = f"blocked assignment: could not create run: {exc.render()}"
    if reason is not None:
        run, _ = runs.create_run(**common, status="skipped", skip_reason=reason)
    status = run.status
    if status == "skipped":
        slots.resolve(invoker.id, scheduled_time, outcome="skipped", run_id=run.id,
                      reason=run.skip_reason or reason)
    else:
        slots.resolve(invoker.id, scheduled_time, outcome="ran", run_id=run.id)
    return run.id, status
