"""Durable runs in ``state.db`` (component ``runs``): runs, step attempts, run events.

* ``runs`` — one row per run: blueprint id + content hash + path, invocation, assignments
  snapshot, inputs (secret inputs stored as ``"***"``), status, times, error, the owner's
  process identity (pid + psutil create time) while running, and a cancel flag.
  ``idempotency_key`` is UNIQUE: `create_run` with a used key returns ``(existing, False)``.
* ``step_attempts`` — one row per try of a step: rendered input, output, error, timing.
  Each output is stored once: where a step's rendered input holds an earlier step's output
  (or a part of it) unchanged, the input stores null there and ``input_refs`` says where
  the value lives (`OutputRef`: step id, attempt, path into its output); `attempts`
  resolves the references, so every reader sees the full input. Rows written before
  (inputs stored as copies) have no references and read as stored.
* ``run_events`` — append-only log (``run.created``, ``step.started``, ``step.succeeded``,
  ``step.failed``, ``step.retried``, ``step.skipped``, ``run.finished``, …).

Every write goes through `atomic` (BEGIN IMMEDIATE). Opening a store marks runs whose owner
process is dead as ``interrupted`` (`mark_interrupted_orphans`), so any engine entry recovers.

Spec: DESIGN.md "Blueprints, runs, providers".
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wardian._backend import Connection, Row
from wardian._db import Migrations, NamedMigration, StateDB, atomic
from wardian._util import new_id, utc_now_iso
from wardian.errors import (
    AmbiguousIdError,
    NotFoundError,
    UsageError,
    WardianError,
    require_ref,
)

if TYPE_CHECKING:  # pydantic models: the drain worker imports this module at start-up
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = [
    "FINAL_STATUSES",
    "LEASE_EXPIRED",
    "REDACTED",
    "RUN_STATUSES",
    "LeaseLost",
    "OutputRef",
    "PathPart",
    "Run",
    "RunStore",
    "StepAttempt",
    "lease_seconds",
    "read_running_runs",
    "value_at",
]

RUN_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled", "interrupted",
                "skipped")
FINAL_STATUSES = ("succeeded", "failed", "cancelled", "skipped")
RESUMABLE_STATUSES = ("interrupted", "failed", "cancelled")
REDACTED = "***"

MIGRATIONS = Migrations(sqlite=[
    NamedMigration("create_runs", """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        blueprint_id TEXT NOT NULL,
        blueprint_hash TEXT,
        blueprint_path TEXT,
        agent_id TEXT,
        workspace TEXT,
        invocation TEXT NOT NULL,
        assignments TEXT NOT NULL,
        inputs TEXT NOT NULL,
        secret_inputs TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed',
                                               'cancelled','interrupted','skipped')),
        idempotency_key TEXT UNIQUE,
        invoker_id TEXT,
        skip_reason TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        owner_pid INTEGER,
        owner_started REAL,
        cancel_requested INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX runs_blueprint ON runs (blueprint_id, created_at);
    CREATE INDEX runs_status ON runs (status);
    CREATE INDEX runs_invoker ON runs (invoker_id, created_at);
    CREATE TABLE step_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT NOT NULL,
        step_index INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','succeeded','failed','skipped',
                                               'timed_out','cancelled','interrupted')),
        input TEXT,
        output TEXT,
        error TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        duration_ms REAL,
        UNIQUE (run_id, step_id, attempt)
    );
    CREATE INDEX step_attempts_run ON step_attempts (run_id, id);
    CREATE TABLE run_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        step_id TEXT,
        attempt INTEGER,
        data TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX run_events_run ON run_events (run_id, id);
    CREATE TRIGGER run_events_append_only_update BEFORE UPDATE ON run_events
    BEGIN SELECT RAISE(ABORT, 'run_events is append-only'); END;
    CREATE TRIGGER run_events_append_only_delete BEFORE DELETE ON run_events
    WHEN (SELECT COUNT(*) FROM runs WHERE id = OLD.run_id) > 0
    BEGIN SELECT RAISE(ABORT, 'run_events is append-only'); END;
    """),
    # Leases: on PostgreSQL a running run belongs to whoever renews its lease;
    # SQLite, one machine, keeps asking whether the owner pid lives (both columns unused).
    NamedMigration("add_run_leases", """
    ALTER TABLE runs ADD COLUMN lease_owner TEXT;
    ALTER TABLE runs ADD COLUMN lease_expires REAL;
    """),
    # Step outputs passed by reference: a later step's input points at an
    # earlier step's output instead of storing a rendered copy of it (`OutputRef`).
    NamedMigration("add_step_attempt_input_refs", """
    ALTER TABLE step_attempts ADD COLUMN input_refs TEXT;
    """),
], postgres=[
    NamedMigration("create_runs", """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        blueprint_id TEXT NOT NULL,
        blueprint_hash TEXT,
        blueprint_path TEXT,
        agent_id TEXT,
        workspace TEXT,
        invocation TEXT NOT NULL,
        assignments TEXT NOT NULL,
        inputs TEXT NOT NULL,
        secret_inputs TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed',
                                               'cancelled','interrupted','skipped')),
        idempotency_key TEXT UNIQUE,
        invoker_id TEXT,
        skip_reason TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        owner_pid BIGINT,
        owner_started DOUBLE PRECISION,
        cancel_requested BIGINT NOT NULL DEFAULT 0,
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY
    );
    CREATE INDEX runs_blueprint ON runs (blueprint_id, created_at);
    CREATE INDEX runs_status ON runs (status);
    CREATE INDEX runs_invoker ON runs (invoker_id, created_at);
    CREATE TABLE step_attempts (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT NOT NULL,
        step_index BIGINT NOT NULL,
        attempt BIGINT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','succeeded','failed','skipped',
                                               'timed_out','cancelled','interrupted')),
        input TEXT,
        output TEXT,
        error TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        duration_ms DOUBLE PRECISION,
        UNIQUE (run_id, step_id, attempt)
    );
    CREATE INDEX step_attempts_run ON step_attempts (run_id, id);
    CREATE TABLE run_events (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        step_id TEXT,
        attempt BIGINT,
        data TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX run_events_run ON run_events (run_id, id);

    -- Append-only: an event is never changed, and deleted only with its run (the
    -- cascade deletes the run first). The message reads as SQLite's RAISE(ABORT); the
    -- bodies are the ones every store already holds (tests/data/pg_catalog.txt).
    CREATE FUNCTION run_events_append_only_update_fn() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TRUE THEN
            RAISE EXCEPTION 'run_events is append-only';
        END IF;
        RETURN NEW;
    END $fn$;
    CREATE TRIGGER run_events_append_only_update BEFORE UPDATE ON run_events
        FOR EACH ROW EXECUTE FUNCTION run_events_append_only_update_fn();
    CREATE FUNCTION run_events_append_only_delete_fn() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    BEGIN
        IF (SELECT COUNT(*) FROM runs WHERE id = OLD.run_id) > 0 THEN
            RAISE EXCEPTION 'run_events is append-only';
        END IF;
        RETURN OLD;
    END $fn$;
    CREATE TRIGGER run_events_append_only_delete BEFORE DELETE ON run_events
        FOR EACH ROW EXECUTE FUNCTION run_events_append_only_delete_fn();
    """),
    NamedMigration("add_run_leases", """
    ALTER TABLE runs ADD COLUMN lease_owner TEXT;
    ALTER TABLE runs ADD COLUMN lease_expires DOUBLE PRECISION;
    """),
    NamedMigration("add_step_attempt_input_refs", """
    ALTER TABLE step_attempts ADD COLUMN input_refs TEXT;
    """),
])

ENV_LEASE_S = "WARDIAN_RUN_LEASE_S"
"""Seconds a PostgreSQL run claim lasts unless renewed (default `DEFAULT_LEASE_S`)."""
DEFAULT_LEASE_S = 30.0
LEASE_EXPIRED = ("its worker stopped renewing its lease (killed, or cut off from the"
                 " database); the next worker resumes it from the last completed step")
"""The ``error`` of a run interrupted because its lease expired (PostgreSQL)."""
_SERVER_NOW = "extract(epoch from clock_timestamp())"
"""PostgreSQL's clock in epoch seconds: leases are judged by the one clock every machine
shares, not by each machine's own."""


def lease_seconds() -> float:
    """How long a run claim lasts on PostgreSQL unless renewed: ``WARDIAN_RUN_LEASE_S``
    (0.2 to 3600 s), else 30 s. An unusable value falls back to the default."""
    raw = os.environ.get(ENV_LEASE_S, "")
    try:
        value = float(raw) if raw else DEFAULT_LEASE_S
    except ValueError:
        return DEFAULT_LEASE_S
    return value if 0.2 <= value <= 3600 else DEFAULT_LEASE_S


_owner: tuple[int, str] | None = None


def _lease_owner() -> str:
    """This process's lease owner name: ``host/pid/random`` (unique per process, also
    after a fork or on another machine with the same pid)."""
    global _owner
    if _owner is None or _owner[0] != os.getpid():
        import socket

        _owner = (os.getpid(), f"{socket.gethostname()}/{os.getpid()}/{new_id()[:8]}")
    return _owner[1]


class LeaseLost(BaseException):
    """This process's lease on a running run was taken over by another worker.

    A `BaseException`, so no step's error handling records it as a step failure: the run
    now belongs to the other worker and this process must write nothing more to it.
    """


PathPart = str | int
"""One step of a path into a JSON value: a mapping key or a list index."""


@dataclass(frozen=True)
class OutputRef:
    """Where a part of a step attempt's input is an earlier step's output, stored once.

    Attributes:
        at: the path inside the attempt's rendered input (e.g. ``("payload", "messages")``).
        step: the id of the step whose output holds the value.
        attempt: that step's (succeeded) attempt number.
        path: the path inside that output (``()`` = the whole output).
    """

    at: tuple[PathPart, ...]
    step: str
    attempt: int
    path: tuple[PathPart, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"at": [...], "step": ..., "attempt": n, "path": [...]}``."""
        return {"at": list(self.at), "step": self.step, "attempt": self.attempt,
                "path": list(self.path)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> OutputRef:
        """The reference stored by `to_json`."""
        return cls(tuple(doc["at"]), str(doc["step"]), int(doc["attempt"]),
                   tuple(doc["path"]))

    def source(self) -> str:
        """The value's template-style name, e.g. ``steps.archive.output.messages``."""
        return "steps." + self.step + ".output" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)


_MISSING = object()


def _has(container: Any, part: PathPart) -> bool:
    """True when JSON `container` has a key (mapping) or index (list) `part`."""
    if isinstance(container, dict):
        return isinstance(part, str) and part in container
    return isinstance(container, list) and isinstance(part, int) and 0 <= part < len(container)


def value_at(value: Any, path: Sequence[PathPart]) -> Any:
    """The part of JSON `value` at `path`, or a private sentinel when there is none."""
    for part in path:
        if not _has(value, part):
            return _MISSING
        value = value[part]
    return value


def _placed(value: Any, at: Sequence[PathPart], part: Any) -> Any:
    """`value` with the value at path `at` replaced by `part` (in place below the top)."""
    if not at:
        return part
    parent = value_at(value, at[:-1])
    if _has(parent, at[-1]):
        parent[at[-1]] = part
    return value


@dataclass
class StepAttempt:
    """One try of one step (stored; secrets already redacted).

    `input` is the rendered input with every `OutputRef` of `input_refs` resolved.
    """

    step_id: str
    step_index: int
    attempt: int
    status: str
    input: Any
    output: Any
    error: str | None
    started_at: str
    finished_at: str | None
    duration_ms: float | None
    input_refs: list[OutputRef] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict of the attempt; ``input_refs`` lists where parts of the input
        are earlier steps' outputs (``{"at", "step", "attempt", "path", "source"}``)."""
        doc = dict(self.__dict__)
        doc["input_refs"] = [{**r.to_json(), "source": r.source()} for r in self.input_refs]
        return doc


@dataclass
class Run:
    """A run as stored. `inputs` has secret inputs as ``"***"``."""

    id: str
    blueprint_id: str
    blueprint_hash: str | None
    blueprint_path: str | None
    agent_id: str | None
    workspace: str | None
    invocation: dict[str, Any]
    assignments: dict[str, Any]
    inputs: dict[str, Any]
    secret_inputs: list[str]
    status: str
    idempotency_key: str | None
    invoker_id: str | None
    skip_reason: str | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    owner_pid: int | None
    cancel_requested: bool
    attempts: list[StepAttempt] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def trigger(self) -> str:
        """The trigger kind (``manual``, ``session-close``, ``schedule``)."""
        return str(self.invocation.get("trigger", ""))

    def outputs(self) -> dict[str, Any]:
        """Step id -> output of its succeeded attempt (requires attempts loaded)."""
        return {a.step_id: a.output for a in self.attempts if a.status == "succeeded"}

    def to_json(self, *, detail: bool = False) -> dict[str, Any]:
        """A JSON-able dict; with `detail`, attempts, events and outputs too."""
        doc = {k: v for k, v in self.__dict__.items() if k not in ("attempts", "events")}
        if detail:
            doc["attempts"] = [a.to_json() for a in self.attempts]
            doc["events"] = self.events
            doc["outputs"] = self.outputs()
        return doc


def _expanded(action: str, output: Any) -> Any:
    """An action step's stored output as the action returned it: expanded by the action's
    `OutputStorage` (`wardian.engine.actions`), else as stored. A storage that fails reads
    as stored, never as an error."""
    from wardian.engine.actions import output_storage

    storage = output_storage(action)
    if storage is None or output is None:
        return output
    try:
        return storage.expand(output)
    except Exception:
        return output


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def read_running_runs(
    conn: Connection,
) -> list[tuple[str, str, int | None, float | None]] | None:
    """``(run id, blueprint id, owner pid, owner start time)`` of every run recorded
    ``running``, oldest first; None when the ``runs`` table does not exist yet. Read-only,
    over any connection to ``state.db`` (``wardian doctor`` passes a read-only one)."""
    from wardian._db import has_table

    if not has_table(conn, "runs"):
        return None
    rows = conn.execute(
        "SELECT id, blueprint_id, owner_pid, owner_started FROM runs"
        " WHERE status = 'running' ORDER BY created_at").fetchall()
    return [(str(r[0]), str(r[1]), r[2], r[3]) for r in rows]


class RunStore:
    """The run store over ``state.db`` (component ``runs``).

    Args:
        db: the open state database (`wardian.config.open_state_db`).
        recover: mark runs owned by dead processes as ``interrupted`` on open.
    """

    def __init__(self, db: StateDB, *, recover: bool = True) -> None:
        self.db = db
        self.path = db.path
        db.require("runs", MIGRATIONS)
        self.conn = db.conn
        self._leased = db.backend.shared_across_machines
        self._renewed: dict[str, float] = {}
        """run id -> monotonic time of this process's last lease renewal (PostgreSQL)."""
        if recover:
            self.mark_interrupted_orphans()

    # --- creation ------------------------------------------------------------------------

    def create_run(
        self,
        *,
        blueprint_id: str,
        agent_id: str | None,
        assignments: dict[str, Any],
        inputs: dict[str, Any],
        invocation: dict[str, Any],
        idempotency_key: str | None = None,
        invoker_id: str | None = None,
        status: str = "queued",
        skip_reason: str | None = None,
        blueprint_hash: str | None = None,
        blueprint_path: str | None = None,
        secret_inputs: Sequence[str] | None = None,
        workspace: str | None = None,
        blueprint: LoadedBlueprint | None = None,
    ) -> tuple[Run, bool]:
        """Record a new run (atomic), or return the run that already has `idempotency_key`.

        Args:
            blueprint_id: the blueprint's id.
            agent_id: the run's principal, or None.
            assignments: role -> assignment (snapshot; stored as given).
            inputs: input values; names in `secret_inputs` are stored as ``"***"``.
            invocation: ``{"trigger": "manual"|"session-close"|"schedule", "payload": {...}}``.
            idempotency_key: UNIQUE across runs; a duplicate returns ``(existing, False)``.
            status: ``queued`` or ``skipped`` (then give `skip_reason`).
            blueprint_hash/blueprint_path: the exact blueprint version (filled from the
                library by id when omitted and resolvable).
            secret_inputs: input names never stored in clear; None (not given) = the
                blueprint's declared secret inputs. With hash, path and secret_inputs all
                given, or `blueprint`, the blueprint is not looked up at all.
            workspace: the absolute workspace (default: the invocation payload's).
            blueprint: the validated blueprint the caller already loaded: its hash, path
                and declared secret inputs fill in what is not given.

        Returns:
            ``(run, created)``.

        Raises:
            UsageError: a bad status or trigger.
        """
        if status not in ("queued", "skipped"):
            raise UsageError(f"a new run is queued or skipped, not {status!r}")
        if invocation.get("trigger") not in ("manual", "session-close", "schedule"):
            raise UsageError(f"unknown trigger {invocation.get('trigger')!r}",
                             hint="use manual, session-close or schedule")
        if blueprint_hash is None or blueprint_path is None or secret_inputs is None:
            blueprint_hash, blueprint_path, secret_inputs = self._blueprint_facts(
                blueprint_id, blueprint_hash, blueprint_path, secret_inputs, blueprint)
        payload = invocation.get("payload") or {}
        workspace = workspace or payload.get("workspace")
        stored_inputs = {k: (REDACTED if k in secret_inputs else v) for k, v in inputs.items()}
        run_id = new_id()
        now = utc_now_iso()
        # Narrow (PostgreSQL: beside other workers' run writes): the key's lock orders two
        # creators of one idempotency key, so the second finds the first's committed run.
        keys = () if idempotency_key is None else (f"run:{idempotency_key}",)
        with atomic(self.conn, locks=keys):
            if idempotency_key is not None:
                row = self.conn.execute("SELECT id FROM runs WHERE idempotency_key = ?",
                                        (idempotency_key,)).fetchone()
                if row is not None:
                    return self.get(row["id"]), False
            self.conn.execute(
                "INSERT INTO runs (id, blueprint_id, blueprint_hash, blueprint_path, agent_id,"
                " workspace, invocation, assignments, inputs, secret_inputs, status,"
                " idempotency_key, invoker_id, skip_reason, created_at, finished_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, blueprint_id, blueprint_hash, blueprint_path, agent_id, workspace,
                 _dumps(invocation), _dumps(assignments), _dumps(stored_inputs),
                 _dumps(sorted(secret_inputs)), status, idempotency_key, invoker_id,
                 skip_reason, now, now if status == "skipped" else None),
            )
            self.add_event_in_transaction(run_id, "run.created",
                                          {"status": status, "skip_reason": skip_reason,
                                           "trigger": invocation.get("trigger")})
        # The row just written, as `get` would read it back (JSON columns through JSON),
        # without the read: one round trip fewer for every run a worker creates.
        return Run(
            id=run_id, blueprint_id=blueprint_id, blueprint_hash=blueprint_hash,
            blueprint_path=blueprint_path, agent_id=agent_id, workspace=workspace,
            invocation=json.loads(_dumps(invocation)),
            assignments=json.loads(_dumps(assignments)),
            inputs=json.loads(_dumps(stored_inputs)),
            secret_inputs=json.loads(_dumps(sorted(secret_inputs))), status=status,
            idempotency_key=idempotency_key, invoker_id=invoker_id, skip_reason=skip_reason,
            error=None, created_at=now, started_at=None,
            finished_at=now if status == "skipped" else None, owner_pid=None,
            cancel_requested=False), True

    @staticmethod
    def _blueprint_facts(blueprint_id: str, bp_hash: str | None, bp_path: str | None,
                         secrets: Sequence[str] | None, loaded: LoadedBlueprint | None
                         ) -> tuple[str | None, str | None, builtins.list[str]]:
        """Fill in the blueprint's hash, path and declared secret inputs from `loaded`, or
        else from the library (read-only)."""
        from wardian.blueprints.library import find_blueprint
        from wardian.engine.actions import known_actions

        given = set(secrets or ())
        if loaded is None:
            try:
                loaded = find_blueprint(bp_path or blueprint_id, known_actions=known_actions())
            except WardianError:  # a broken or missing blueprint fails the run when it runs
                return bp_hash, bp_path, sorted(given)
        declared = {n for n, spec in loaded.blueprint.inputs.items() if spec.secret}
        return (bp_hash or loaded.source_hash, bp_path or str(loaded.path),
                sorted(given | declared))

    # --- reads ---------------------------------------------------------------------------

    def _row_to_run(self, row: Row) -> Run:
        return Run(
            id=row["id"], blueprint_id=row["blueprint_id"], blueprint_hash=row["blueprint_hash"],
            blueprint_path=row["blueprint_path"], agent_id=row["agent_id"],
            workspace=row["workspace"], invocation=_loads(row["invocation"]),
            assignments=_loads(row["assignments"]), inputs=_loads(row["inputs"]),
            secret_inputs=_loads(row["secret_inputs"]), status=row["status"],
            idempotency_key=row["idempotency_key"], invoker_id=row["invoker_id"],
            skip_reason=row["skip_reason"], error=row["error"], created_at=row["created_at"],
            started_at=row["started_at"], finished_at=row["finished_at"],
            owner_pid=row["owner_pid"], cancel_requested=bool(row["cancel_requested"]),
        )

    def get(self, run_id: str, *, detail: bool = False) -> Run:
        """The run with id `run_id` (or a unique prefix of it); `detail` loads attempts and
        events. Read-only.

        Raises:
            NotFoundError: no such run. AmbiguousIdError: the prefix matches several.
        """
        require_ref(run_id, "run id", hint="see `wardian automation runs`")
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            rows = self.conn.execute("SELECT * FROM runs WHERE lower(id) LIKE lower(?) LIMIT 11",
                                     (run_id.replace("%", "").replace("_", "") + "%",)
                                     ).fetchall() if len(run_id) >= 4 else []
            if len(rows) > 1:
                raise AmbiguousIdError("run", run_id, [r["id"][:8] for r in rows])
            if not rows:
                raise NotFoundError(f"no run with id {run_id!r}",
                                    hint="see `wardian automation runs`")
            row = rows[0]
        run = self._row_to_run(row)
        if detail:
            run.attempts = self.attempts(run.id)
            run.events = self.events(run.id)
        return run

    def list(self, *, blueprint_id: str | None = None, status: str | None = None,
             invoker_id: str | None = None, limit: int = 100) -> list[Run]:
        """Runs, newest first, filtered by blueprint, status and invoker. Read-only."""
        if status is not None and status not in RUN_STATUSES:
            raise UsageError(f"unknown status {status!r}",
                             hint="one of " + ", ".join(RUN_STATUSES))
        where, args = [], []
        for column, value in (("blueprint_id", blueprint_id), ("status", status),
                              ("invoker_id", invoker_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = "SELECT * FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id LIMIT ?"
        rows = self.conn.execute(sql, (*args, limit)).fetchall()
        return [self._row_to_run(r) for r in rows]

    def lease_expired(self, limit: int = 200) -> builtins.list[tuple[str, bool]]:
        """``(run id, has secret inputs)`` of runs interrupted because their lease expired
        (`LEASE_EXPIRED`), newest first, at most `limit`. Read-only; one indexed query
        that a drain pass makes whether or not there are any."""
        rows = self.conn.execute(
            "SELECT id, secret_inputs FROM runs WHERE status = 'interrupted' AND error = ?"
            " ORDER BY created_at DESC, id LIMIT ?", (LEASE_EXPIRED, limit)).fetchall()
        return [(str(r[0]), bool(_loads(r[1]))) for r in rows]

    def attempts(self, run_id: str) -> builtins.list[StepAttempt]:
        """Every step attempt of a run, in order, inputs resolved (`OutputRef`) and action
        outputs stored in a short form expanded (`wardian.engine.actions.OutputStorage`).
        Read-only.

        A reference whose output is missing (it cannot be, short of a hand-edited
        database) reads as the text ``<missing: steps.<id>.output…>``, never an error.
        """
        rows = self.conn.execute("SELECT * FROM step_attempts WHERE run_id = ? ORDER BY id",
                                 (run_id,)).fetchall()
        found = [StepAttempt(r["step_id"], r["step_index"], r["attempt"], r["status"],
                             _loads(r["input"]), _loads(r["output"]), r["error"],
                             r["started_at"], r["finished_at"], r["duration_ms"],
                             [OutputRef.from_json(d) for d in _loads(r["input_refs"]) or []])
                 for r in rows]
        for a in found:
            if a.status == "succeeded" and isinstance(a.input, dict) and isinstance(
                    a.input.get("action"), str):
                a.output = _expanded(a.input["action"], a.output)
        outputs = {(a.step_id, a.attempt): a.output for a in found if a.status == "succeeded"}
        for a in found:
            for ref in a.input_refs:
                value = value_at(outputs.get((ref.step, ref.attempt), _MISSING), ref.path)
                if value is _MISSING:
                    value = f"<missing: {ref.source()} (attempt {ref.attempt})>"
                a.input = _placed(a.input, ref.at, value)
        return found

    def action_outputs(self, run_id: str, action: str) -> builtins.list[tuple[str, Any]]:
        """``(step id, output)`` of the run's succeeded attempts of steps running `action`,
        in order. Read-only; only those attempts' outputs are read (a run's other outputs,
        e.g. a large snapshot, are not)."""
        rows = self.conn.execute(
            "SELECT id, step_id, input FROM step_attempts WHERE run_id = ? AND "
            "status = 'succeeded' ORDER BY id", (run_id,)).fetchall()
        found: builtins.list[tuple[str, Any]] = []
        for row in rows:
            given = _loads(row["input"])
            if not isinstance(given, dict) or given.get("action") != action:
                continue
            output = self.conn.execute("SELECT output FROM step_attempts WHERE id = ?",
                                       (row["id"],)).fetchone()
            found.append((str(row["step_id"]),
                          _expanded(action, _loads(output["output"]) if output else None)))
        return found

    def events(self, run_id: str) -> builtins.list[dict[str, Any]]:
        """The run's event log, in order. Read-only."""
        rows = self.conn.execute("SELECT * FROM run_events WHERE run_id = ? ORDER BY id",
                                 (run_id,)).fetchall()
        return [{"id": r["id"], "at": r["at"], "kind": r["kind"], "step_id": r["step_id"],
                 "attempt": r["attempt"], "data": _loads(r["data"])} for r in rows]

    def cancel_requested(self, run_id: str) -> bool:
        """True once `request_cancel` was called for the run. Read-only."""
        row = self.conn.execute("SELECT cancel_requested FROM runs WHERE id = ?",
                                (run_id,)).fetchone()
        return bool(row and row[0])

    # --- writes --------------------------------------------------------------------------

    def add_event_in_transaction(self, run_id: str, kind: str, data: dict[str, Any] | None = None,
                                 *, step_id: str | None = None, attempt: int | None = None
                                 ) -> None:
        """Append an event; the caller holds the transaction."""
        self.conn.execute(
            "INSERT INTO run_events (run_id, at, kind, step_id, attempt, data)"
            " VALUES (?,?,?,?,?,?)",
            (run_id, utc_now_iso(), kind, step_id, attempt, _dumps(data or {})))

    def add_event(self, run_id: str, kind: str, data: dict[str, Any] | None = None, *,
                  step_id: str | None = None, attempt: int | None = None) -> None:
        """Append an event (atomic; narrow: an insert into an append-only log)."""
        with atomic(self.conn, locks=()):
            self.add_event_in_transaction(run_id, kind, data, step_id=step_id, attempt=attempt)

    def claim(self, run_id: str) -> bool:
        """Move a queued run to running, owned by this process (atomic; only one wins).

        On PostgreSQL the claim is a lease (`lease_seconds`, judged by the server's clock)
        taken with ``FOR UPDATE SKIP LOCKED``: a run another worker is claiming right now is
        skipped, not waited for, and no schema-wide writer lock is taken. The executor
        renews it (`keep_lease`); one left to expire is reclaimed by the next worker that
        opens the store (`mark_interrupted_orphans`).
        """
        from wardian._process import current

        me = current()
        identity = (me.pid, me.started_at)
        if self._leased:
            return self._claim_leased(run_id, identity)
        with atomic(self.conn):
            cursor = self.conn.execute(
                "UPDATE runs SET status = 'running', owner_pid = ?, owner_started = ?,"
                " started_at = COALESCE(started_at, ?), finished_at = NULL, error = NULL"
                " WHERE id = ? AND status = 'queued'",
                (identity[0], identity[1], utc_now_iso(), run_id))
            if cursor.rowcount != 1:
                return False
            self.add_event_in_transaction(run_id, "run.started",
                                          {"pid": identity[0]})
        return True

    def _claim_leased(self, run_id: str, identity: tuple[int, float]) -> bool:
        """`claim` on PostgreSQL (see there)."""
        from wardian._pg_coord import row_transaction

        with row_transaction(self.conn) as conn:  # type: ignore[arg-type]
            row = conn.execute(
                "UPDATE runs SET status = 'running', owner_pid = ?, owner_started = ?,"
                " started_at = COALESCE(started_at, ?), finished_at = NULL, error = NULL,"
                f" lease_owner = ?, lease_expires = {_SERVER_NOW} + ?"
                " WHERE id = (SELECT id FROM runs WHERE id = ? AND status = 'queued'"
                " FOR UPDATE SKIP LOCKED) RETURNING id",
                (identity[0], identity[1], utc_now_iso(), _lease_owner(), lease_seconds(),
                 run_id)).fetchone()
            if row is None:
                return False
            conn.execute(
                "INSERT INTO run_events (run_id, at, kind, step_id, attempt, data)"
                " VALUES (?,?,?,?,?,?)",
                (run_id, utc_now_iso(), "run.started", None, None,
                 _dumps({"pid": identity[0], "lease_owner": _lease_owner()})))
        import time

        self._renewed[run_id] = time.monotonic()
        return True

    def keep_lease(self, run_id: str) -> None:
        """Renew this process's lease on a running run when a third of it has passed
        (PostgreSQL; a no-op on SQLite, where the owner's pid is its claim). The executor
        calls it whenever it checks for a cancel request.

        Raises:
            LeaseLost: the lease expired and another worker took the run over.
        """
        if not self._leased:
            return
        import time

        now = time.monotonic()
        lease = lease_seconds()
        if now - self._renewed.get(run_id, 0.0) < lease / 3:
            return
        cursor = self.conn.execute(
            f"UPDATE runs SET lease_expires = {_SERVER_NOW} + ? WHERE id = ?"
            " AND status = 'running' AND lease_owner = ?",
            (lease, run_id, _lease_owner()))
        if cursor.rowcount != 1:
            self._renewed.pop(run_id, None)
            raise LeaseLost(run_id)
        self._renewed[run_id] = now

    def finish(self, run_id: str, status: str, error: str | None = None) -> None:
        """Record the final status of a running run (atomic).

        Narrow on PostgreSQL (`wardian._db.atomic`): it writes only the run's row, which
        this process holds (its claim or lease), and appends to its log."""
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "UPDATE runs SET status = ?, error = ?, finished_at = ?, owner_pid = NULL,"
                " owner_started = NULL, lease_owner = NULL, lease_expires = NULL WHERE id = ?",
                (status, error, utc_now_iso(), run_id))
            self.add_event_in_transaction(run_id, "run.finished",
                                          {"status": status, "error": error})
        self._renewed.pop(run_id, None)

    def request_cancel(self, run_id: str) -> Run:
        """Ask a run to stop at its next safe point (atomic). A queued or interrupted run is
        cancelled at once; a finished run is refused.

        Raises:
            UsageError: the run already finished.
        """
        run = self.get(run_id)
        if run.status in FINAL_STATUSES:
            raise UsageError(f"run {run.id[:8]} already {run.status}; nothing to cancel")
        with atomic(self.conn):
            self.conn.execute("UPDATE runs SET cancel_requested = 1 WHERE id = ?", (run.id,))
            self.add_event_in_transaction(run.id, "run.cancel_requested", {})
            if run.status in ("queued", "interrupted"):
                self.conn.execute(
                    "UPDATE runs SET status = 'cancelled', finished_at = ?,"
                    " error = 'cancelled before it ran' WHERE id = ? AND status IN"
                    " ('queued','interrupted')", (utc_now_iso(), run.id))
                self.add_event_in_transaction(run.id, "run.finished",
                                              {"status": "cancelled"})
        return self.get(run.id)

    def requeue(self, run_id: str) -> Run:
        """Put an interrupted, failed or cancelled run back in the queue for `resume` (atomic).

        Raises:
            UsageError: the run is queued, running, succeeded or skipped.
        """
        run = self.get(run_id)
        with atomic(self.conn):
            cursor = self.conn.execute(
                "UPDATE runs SET status = 'queued', cancel_requested = 0, finished_at = NULL"
                " WHERE id = ? AND status IN ('interrupted','failed','cancelled')", (run.id,))
            if cursor.rowcount != 1:
                raise UsageError(
                    f"run {run.id[:8]} is {run.status}; only interrupted, failed or cancelled "
                    "runs can be resumed")
            self.add_event_in_transaction(run.id, "run.resumed", {"from": run.status})
        return self.get(run.id)

    def start_attempt(self, run_id: str, step_id: str, step_index: int, attempt: int,
                      rendered_input: Any, input_refs: Sequence[OutputRef] = ()) -> None:
        """Record a step attempt as running, with its (redacted) rendered input (atomic).

        Args:
            rendered_input: the input with null where `input_refs` point at earlier
                steps' outputs of this run (each must be a succeeded attempt's).
        """
        refs = _dumps([r.to_json() for r in input_refs]) if input_refs else None
        # Narrow: rows of a run this process holds; UNIQUE (run, step, attempt) refuses a
        # second writer of the same attempt.
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "INSERT INTO step_attempts (run_id, step_id, step_index, attempt, status,"
                " input, input_refs, started_at) VALUES (?,?,?,?, 'running', ?, ?, ?)",
                (run_id, step_id, step_index, attempt, _dumps(rendered_input), refs,
                 utc_now_iso()))
            self.add_event_in_transaction(run_id, "step.started", {}, step_id=step_id,
                                          attempt=attempt)

    def finish_attempt(self, run_id: str, step_id: str, attempt: int, status: str, *,
                       output: Any = None, error: str | None = None,
                       duration_ms: float | None = None, event: str | None = None,
                       event_data: dict[str, Any] | None = None) -> None:
        """Record how an attempt ended, plus its event (atomic; narrow, as `start_attempt`)."""
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "UPDATE step_attempts SET status = ?, output = ?, error = ?, finished_at = ?,"
                " duration_ms = ? WHERE run_id = ? AND step_id = ? AND attempt = ?",
                (status, None if output is None else _dumps(output), error, utc_now_iso(),
                 duration_ms, run_id, step_id, attempt))
            self.add_event_in_transaction(run_id, event or f"step.{status}",
                                          {"error": error, **(event_data or {})},
                                          step_id=step_id, attempt=attempt)

    def record_skipped_step(self, run_id: str, step_id: str, step_index: int, attempt: int,
                            reason: str) -> None:
        """Record a step whose `when` was false (atomic; narrow, as `start_attempt`)."""
        now = utc_now_iso()
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "INSERT INTO step_attempts (run_id, step_id, step_index, attempt, status,"
                " started_at, finished_at, duration_ms, error)"
                " VALUES (?,?,?,?, 'skipped', ?, ?, 0, ?)",
                (run_id, step_id, step_index, attempt, now, now, None))
            self.add_event_in_transaction(run_id, "step.skipped", {"reason": reason},
                                          step_id=step_id, attempt=attempt)

    def mark_interrupted_orphans(self) -> builtins.list[str]:
        """Mark runs left ``running`` by a dead owner process as ``interrupted`` (atomic), and
        their running attempts too. Returns the ids marked.

        On PostgreSQL the owner may be another machine's process: a run is an orphan when
        its lease expired by the server's clock (no lease at all: a run copied in from
        SQLite, whose owner cannot renew it), and it is marked with `LEASE_EXPIRED`.
        """
        if self._leased:
            rows = self.conn.execute(
                "SELECT id FROM runs WHERE status = 'running' AND (lease_expires IS NULL"
                f" OR lease_expires < {_SERVER_NOW})").fetchall()
            dead = [r["id"] for r in rows]
            why = LEASE_EXPIRED
            expired = f" AND (lease_expires IS NULL OR lease_expires < {_SERVER_NOW})"
        else:
            from wardian._process import is_alive

            rows = self.conn.execute(
                "SELECT id, owner_pid, owner_started FROM runs WHERE status = 'running'"
            ).fetchall()
            dead = [r["id"] for r in rows
                    if not is_alive(r["owner_pid"], r["owner_started"])]
            why = ("the process running it died; `wardian automation run resume` "
                   "continues from the last completed step")
            expired = ""
        if not dead:
            return []
        now = utc_now_iso()
        marked = []
        with atomic(self.conn):
            for run_id in dead:
                cursor = self.conn.execute(
                    "UPDATE runs SET status = 'interrupted', finished_at = ?, error = ?,"
                    " owner_pid = NULL, owner_started = NULL WHERE id = ? AND status = 'running'"
                    + expired, (now, why, run_id))
                if cursor.rowcount != 1:
                    continue
                self.conn.execute(
                    "UPDATE step_attempts SET status = 'interrupted', finished_at = ?,"
                    " error = 'process died' WHERE run_id = ? AND status = 'running'",
                    (now, run_id))
                self.add_event_in_transaction(
                    run_id, "run.interrupted",
                    {"reason": "lease expired" if self._leased else "owner process died"})
                marked.append(run_id)
        return marked
