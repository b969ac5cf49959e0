"""The drain: turn pending session-close events into exactly one run per (event, invoker).

For each pending event, oldest first:

1. decide the archive once: import the transcript into the agent's archive when conversation
   logging was on at close time (idempotent per event), else record why there is none
   (``conversation logging disabled`` · ``no transcript`` · ``unreadable transcript: …``);
2. for each **enabled** session-close invoker of the event's agent whose boundaries match
   (none configured = any), create its run with ``RunStore.create_run(idempotency_key=
   "session-close:<invoker id>:<event id>")`` — the engine's UNIQUE key makes a second
   attempt (a restarted worker, a racing worker, the daemon) return the same run — or a
   ``skipped`` run with the reason when the invoker requires an archive and there is none;
3. mark the event processed, only after every matching invoker has its run.

Then queued runs are executed (`execute_run` claims each atomically, so two drains never
run one twice). Automation failures are recorded on runs and events; they never block or
undo the lifecycle event itself.

``session_close_fires`` (component ``session_close_fires``) links each (event, invoker) to
its run, for ``history`` and so that runs created by a crashed worker are executed later.

Spec: DESIGN.md "Invokers".
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import utc_now_iso
from wardian.config import open_state_db
from wardian.errors import StoreError, UsageError, WardianError
from wardian.invokers.store import Invoker, InvokerStore
from wardian.runtime.archives import ArchiveStore, TranscriptUnreadable
from wardian.runtime.session_events import (
    LOGGING_DISABLED,
    SessionEvent,
    SessionEventQueue,
    drain_lock,
)

if TYPE_CHECKING:  # the engine and pydantic models: imported when a run is created
    from wardian.blueprints.validate import LoadedBlueprint
    from wardian.engine.runs import Run, RunStore

__all__ = [
    "MAX_EVENT_ATTEMPTS",
    "DrainReport",
    "FireLog",
    "drain_once",
    "drain_until",
    "idempotency_key",
    "run_worker",
    "worker_main",
]

MAX_EVENT_ATTEMPTS = 5
"""After this many failed attempts an event is marked processed with its last error."""

REASON_LOGGING_DISABLED = LOGGING_DISABLED
REASON_NO_TRANSCRIPT = "no transcript"
REASON_UNREADABLE = "unreadable transcript"

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_session_close_fires", """
    CREATE TABLE session_close_fires (
        event_id TEXT NOT NULL,
        invoker_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        outcome TEXT NOT NULL,
        skip_reason TEXT,
        created_at TEXT NOT NULL,
        dispatched_at TEXT,
        PRIMARY KEY (event_id, invoker_id)
    );
    CREATE INDEX session_close_fires_invoker ON session_close_fires (invoker_id, created_at);
    CREATE INDEX session_close_fires_undispatched ON session_close_fires (dispatched_at)
        WHERE dispatched_at IS NULL;
    """),
]


def idempotency_key(invoker_id: str, event_id: str) -> str:
    """``session-close:<invoker id>:<boundary id>`` (the boundary id is the event id)."""
    return f"session-close:{invoker_id}:{event_id}"


@dataclass
class DrainReport:
    """What one drain pass did (counts), plus error messages that did not stop it."""

    events: int = 0
    runs_created: int = 0
    skipped: int = 0
    executed: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, other: DrainReport) -> None:
        """Accumulate another report into this one."""
        self.events += other.events
        self.runs_created += other.runs_created
        self.skipped += other.skipped
        self.executed += other.executed
        self.errors.extend(other.errors)

    @property
    def idle(self) -> bool:
        """True when the pass found nothing to do."""
        return self.events == 0 and self.executed == 0


@dataclass(frozen=True)
class Fire:
    """One (event, invoker) -> run link."""

    event_id: str
    invoker_id: str
    run_id: str
    outcome: str
    skip_reason: str | None
    created_at: str
    dispatched_at: str | None


class FireLog:
    """The ``session_close_fires`` table.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("session_close_fires", _MIGRATIONS)
        self.conn: sqlite3.Connection = self.db.conn

    def link(self, event_id: str, invoker_id: str, run_id: str, outcome: str,
             skip_reason: str | None) -> None:
        """Record the run of (event, invoker) unless already recorded (atomic; narrow: the
        primary key (event, invoker) keeps the first)."""
        dispatched = utc_now_iso() if outcome != "queued" else None
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "INSERT INTO session_close_fires (event_id, invoker_id, run_id, outcome,"
                " skip_reason, created_at, dispatched_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (event_id, invoker_id, run_id, outcome, skip_reason, utc_now_iso(), dispatched),
            )

    def linked_invokers(self, event_id: str) -> set[str]:
        """Invoker ids that already have a run for `event_id`. Read-only."""
        rows = self.conn.execute(
            "SELECT invoker_id FROM session_close_fires WHERE event_id = ?", (event_id,)
        ).fetchall()
        return {r["invoker_id"] for r in rows}

    def undispatched(self, limit: int = 500) -> list[Fire]:
        """Fires whose queued run has not been handed to the executor yet. Read-only."""
        rows = self.conn.execute(
            "SELECT * FROM session_close_fires WHERE dispatched_at IS NULL"
            " ORDER BY created_at LIMIT ?", (limit,)
        ).fetchall()
        return [Fire(**dict(r)) for r in rows]

    def mark_dispatched(self, event_id: str, invoker_id: str) -> None:
        """Note that the run was handed to the executor (atomic, idempotent; narrow)."""
        with atomic(self.conn, locks=()):
            self.conn.execute(
                "UPDATE session_close_fires SET dispatched_at = ? WHERE event_id = ?"
                " AND invoker_id = ? AND dispatched_at IS NULL",
                (utc_now_iso(), event_id, invoker_id),
            )

    def for_invoker(self, invoker_id: str, limit: int = 100) -> list[Fire]:
        """An invoker's fires, newest first. Read-only."""
        rows = self.conn.execute(
            "SELECT * FROM session_close_fires WHERE invoker_id = ?"
            " ORDER BY created_at DESC LIMIT ?", (invoker_id, limit)
        ).fetchall()
        return [Fire(**dict(r)) for r in rows]

    def count(self) -> int:
        """How many fires are recorded. Read-only."""
        return int(self.conn.execute("SELECT COUNT(*) FROM session_close_fires").fetchone()[0])


class _Drain:
    """One drain pass's stores, over the open state database `state_db`."""

    def __init__(self, state_db: StateDB) -> None:
        from wardian.engine.runs import RunStore

        self.queue = SessionEventQueue(state_db)
        self.invokers = InvokerStore(state_db)
        self.archives = ArchiveStore(state_db)
        self.fires = FireLog(state_db)
        # PostgreSQL: orphans are leases that expired, marked by `_reclaim` in this pass.
        self.runs: RunStore = RunStore(self.fires.db, recover=self.fires.db.dialect != "postgres")
        self._created: dict[str, str] = {}
        """run id -> blueprint id of the queued runs this pass created (`fire`)."""
        self._agent_names: dict[str, str | None] = {}
        self._blueprints: dict[str, LoadedBlueprint | None] = {}

    # --- archive ------------------------------------------------------------------------

    def archive_for(self, event: SessionEvent) -> SessionEvent:
        """Decide (once) whether the event has an archive, importing the transcript if so."""
        if event.archive_status is not None:
            return event
        if not event.logging_enabled:
            return self.queue.set_archive(event.id, "unavailable", REASON_LOGGING_DISABLED, None)
        if not event.transcript_path:
            return self.queue.set_archive(event.id, "unavailable", REASON_NO_TRANSCRIPT, None)
        try:
            manifest = self.archives.import_transcript(
                event.agent_id, event.transcript_path, event_id=event.id,
                provider=event.provider, session_id=event.session_id, boundary=event.boundary,
            )
        except TranscriptUnreadable as exc:
            return self.queue.set_archive(
                event.id, "unavailable", f"{REASON_UNREADABLE}: {exc.reason}", None
            )
        return self.queue.set_archive(event.id, "available", None, manifest.id)

    # --- runs ---------------------------------------------------------------------------

    def agent_name(self, agent_id: str) -> str | None:
        if agent_id not in self._agent_names:
            from wardian.runtime.agents import AgentRegistry

            agent = AgentRegistry(self.queue.db).find(agent_id)
            self._agent_names[agent_id] = agent.name if agent else None
        return self._agent_names[agent_id]

    def blueprint(self, blueprint_id: str) -> LoadedBlueprint | None:
        """The validated blueprint, loaded once per pass and handed to both the run's
        creation and its execution (the library scan and validation are the expensive part
        of both). None when missing or broken: the run is still created and fails when it
        executes, saying why."""
        if blueprint_id not in self._blueprints:
            from wardian.blueprints.library import find_blueprint
            from wardian.engine.actions import known_actions

            try:
                self._blueprints[blueprint_id] = find_blueprint(
                    blueprint_id, known_actions=known_actions())
            except WardianError:
                self._blueprints[blueprint_id] = None
        return self._blueprints[blueprint_id]

    def trigger_payload(self, event: SessionEvent, invoker: Invoker) -> dict[str, Any]:
        """The run's trigger input (DESIGN.md "Invokers")."""
        manifest = (
            self.archives.get(event.conversation_id) if event.conversation_id else None
        )
        return {
            "agent_id": event.agent_id,
            "agent_name": self.agent_name(event.agent_id),
            "workspace": event.workspace,
            "provider": event.provider,
            "session_id": event.session_id,
            "boundary": event.boundary,
            "boundary_id": event.id,
            "archive_available": event.archive_status == "available",
            "archive_reason": event.archive_detail,
            "conversation_id": event.conversation_id,
            "archive_seq_range": (
                [manifest.first_seq, manifest.last_seq]
                if manifest and manifest.first_seq is not None else None
            ),
            "transcript_path": event.transcript_path,
            "idempotency_key": idempotency_key(invoker.id, event.id),
            "invoker_id": invoker.id,
        }

    def fire(self, event: SessionEvent, invoker: Invoker, report: DrainReport) -> None:
        """Create (or find) the one run of (event, invoker) and link it. A broken invoker
        (`wardian.invokers.health`) gets no run: the fire is recorded ``blocked`` with the
        reason. The blueprint is loaded once (per pass) for the health check, the run's
        creation and its execution."""
        from wardian.invokers.health import invoker_problem

        loaded = self.blueprint(invoker.blueprint_id)
        problem = invoker_problem(invoker, blueprint=loaded, state=self.fires.db)
        if problem is not None:
            self.fires.link(event.id, invoker.id, "", "blocked",
                            f"invoker broken: {problem.reason}")
            report.skipped += 1
            return
        key = idempotency_key(invoker.id, event.id)
        payload = self.trigger_payload(event, invoker)

        def create(status: str, skip_reason: str | None = None) -> tuple[Run, bool]:
            return self.runs.create_run(
                blueprint_id=invoker.blueprint_id, agent_id=event.agent_id,
                assignments=invoker.assignments, inputs=invoker.inputs,
                invocation={"trigger": "session-close", "payload": payload},
                idempotency_key=key, invoker_id=invoker.id, status=status,
                skip_reason=skip_reason, blueprint=loaded)

        skip_reason: str | None = None
        if invoker.config.get("require_archive") and event.archive_status != "available":
            skip_reason = event.archive_detail or REASON_NO_TRANSCRIPT
        # The run and its fire link commit together: a crash between them can no longer
        # leave a run that no fire points at (the stores share the file's one connection).
        # Narrow on PostgreSQL: workers on several machines fire side by side, and the
        # lock on the (event, invoker) key makes a second one find the first's run.
        with self.fires.db.atomic(locks=(f"run:{key}",)):
            if skip_reason is None:
                try:
                    run, created = create("queued")
                except StoreError:
                    raise  # the database, not the automation: retry the event later
                except WardianError as exc:
                    # The run cannot even be created (blueprint gone, assignments invalid):
                    # record that as this invoker's outcome instead of blocking the event.
                    skip_reason = f"could not create run: {exc.render()}"
            if skip_reason is not None:
                run, created = create("skipped", skip_reason)
            status = str(run.status)
            outcome = "queued" if status == "queued" else status
            self.fires.link(event.id, invoker.id, run.id, outcome, run.skip_reason)
            if created and outcome == "queued":
                self._created[run.id] = invoker.blueprint_id
            if created and outcome == "queued" and self.fires.db.dialect == "postgres":
                # The other workers skip this event (`SessionEventQueue.processing`): wake
                # them at commit to run it while this one fires the event's other invokers.
                from wardian._pg_coord import EVENTS_CHANNEL, notify

                notify(self.fires.conn, EVENTS_CHANNEL, f"run:{run.id}")
        if created:
            if status == "skipped":
                report.skipped += 1
            else:
                report.runs_created += 1

    def process(self, event: SessionEvent, report: DrainReport) -> None:
        """Archive, fire every matching invoker, then mark the event processed.

        One invoker's failure does not keep the others from firing: each is tried, and the
        event is retried later for those left without a run (a database error stops the
        pass at once). After `MAX_EVENT_ATTEMPTS` failed attempts each of them gets a
        ``skipped`` run saying why, so every (event, invoker) ends with a recorded outcome,
        and the event is marked processed with its last error.
        """
        try:
            event = self.archive_for(event)
            done = self.fires.linked_invokers(event.id)
            pending = [inv for inv in self.invokers.matching_session_close(
                event.agent_id, event.boundary) if inv.id not in done]
        except Exception as exc:  # an automation failure never blocks the lifecycle event
            self._failed(event, exc, report, [])
            return
        failures: list[tuple[Invoker, BaseException]] = []
        for invoker in pending:
            try:
                self.fire(event, invoker, report)
            except StoreError as exc:  # the database, not the automation: retry it all later
                failures.append((invoker, exc))
                break
            except Exception as exc:
                failures.append((invoker, exc))
        if failures:
            self._failed(event, failures[0][1], report, pending, invoker=failures[0][0])
            return
        self.queue.mark_processed(event.id)
        report.events += 1

    def _failed(self, event: SessionEvent, exc: BaseException, report: DrainReport,
                pending: list[Invoker], invoker: Invoker | None = None) -> None:
        """Count a failed attempt at `event`; on the last one, record a skip for each of
        `pending` still without a run and mark the event processed."""
        where = f" invoker {invoker.id[:8]}" if invoker is not None else ""
        message = f"event {event.id[:8]}{where}: {type(exc).__name__}: {exc}"
        report.errors.append(message)
        print(f"wardian drain: {message}\n{traceback.format_exc()}", file=sys.stderr)
        attempts = self.queue.record_failure(event.id, message)
        if attempts < MAX_EVENT_ATTEMPTS:
            return
        reason = f"gave up after {attempts} attempts: {message}"
        try:
            done = self.fires.linked_invokers(event.id)
            for inv in pending:
                if inv.id not in done:
                    self._give_up(event, inv, reason, report)
        except Exception as give_up_exc:  # the event is settled regardless
            report.errors.append(f"event {event.id[:8]}: recording skips: {give_up_exc}")
        self.queue.mark_processed(event.id, error=f"gave up: {message}")

    def _give_up(self, event: SessionEvent, invoker: Invoker, reason: str,
                 report: DrainReport) -> None:
        """Record a ``skipped`` run for (event, invoker) with only what is sure to be valid."""
        key = idempotency_key(invoker.id, event.id)
        loaded = self.blueprint(invoker.blueprint_id)
        with self.fires.db.atomic(locks=(f"run:{key}",)):  # as in `fire`
            run, created = self.runs.create_run(
                blueprint_id=invoker.blueprint_id, agent_id=event.agent_id, assignments={},
                inputs={}, invocation={"trigger": "session-close", "payload": {
                    "agent_id": event.agent_id, "boundary": event.boundary,
                    "boundary_id": event.id, "idempotency_key": key, "invoker_id": invoker.id}},
                idempotency_key=key, invoker_id=invoker.id, status="skipped", skip_reason=reason,
                blueprint=loaded,
            )
            self.fires.link(event.id, invoker.id, run.id, str(run.status), run.skip_reason)
        if created:
            report.skipped += 1

    def execute_pending(self, report: DrainReport,
                        stop: threading.Event | None = None) -> None:
        """Hand every undispatched queued run to the executor (one claims it); when `stop`
        is set, the rest stay undispatched for the next pass.

        On PostgreSQL, where workers on several machines share the fires: a run another
        worker is running (its lease is live) stays undispatched for that worker to finish,
        and a run whose lease expired (`LEASE_EXPIRED`: its worker was killed or cut off)
        is resumed here from its last completed step.
        """
        from wardian.engine.executor import execute_claimed, execute_run, resume_run
        from wardian.engine.runs import LEASE_EXPIRED

        shared = self.runs.db.dialect == "postgres"
        for fire in self.fires.undispatched():
            if stop is not None and stop.is_set():
                return
            try:
                blueprint_id = self._created.pop(fire.run_id, None)
                # A run this pass created is queued unless another worker has claimed it
                # since: claim it at once, with no read first.
                if blueprint_id is not None and self.runs.claim(fire.run_id):
                    execute_claimed(fire.run_id, store=self.runs,
                                    blueprint=self._blueprints.get(blueprint_id), detail=False)
                    report.executed += 1
                    self.fires.mark_dispatched(fire.event_id, fire.invoker_id)
                    continue
                run = self.runs.get(fire.run_id)
                # This pass's copy when it loaded the run's blueprint (the executor checks
                # it is the run's version), else the executor loads it.
                loaded = self._blueprints.get(run.blueprint_id)
                if run.status == "queued":
                    execute_run(fire.run_id, store=self.runs, blueprint=loaded,
                                detail=False)
                    report.executed += 1
                elif shared and run.status == "running":
                    continue  # its worker marks it dispatched when it ends
                elif shared and run.status == "interrupted" and run.error == LEASE_EXPIRED:
                    try:
                        resume_run(fire.run_id, store=self.runs, blueprint=loaded)
                    except UsageError:
                        continue  # another worker resumed it first; it dispatches it
                    report.executed += 1
            except Exception as exc:  # a failed automation must not stop the drain
                message = f"run {fire.run_id[:8]}: {type(exc).__name__}: {exc}"
                report.errors.append(message)
                print(f"wardian drain: {message}", file=sys.stderr)
            self.fires.mark_dispatched(fire.event_id, fire.invoker_id)


def _recover_requested(report: DrainReport, state_db: StateDB) -> None:
    """Sweep what queued recovery requests ask for (`wardian.runtime.recovery`), before
    the queue is read, so the ``recovered`` events it records are drained in this pass.
    A failing sweep is reported, never fatal (its requests are consumed; the next hook or
    ``wardian session recover`` asks again)."""
    from wardian.runtime.recovery import has_requests, sweep

    try:
        if has_requests(state_db):
            sweep(requests_only=True)
    except WardianError as exc:
        report.errors.append(f"recovery sweep: {exc.render()}")
    except (OSError, sqlite3.Error) as exc:
        report.errors.append(f"recovery sweep: {type(exc).__name__}: {exc}")


def drain_once(*, limit: int = 100, execute: bool = True,
               stop: threading.Event | None = None) -> DrainReport:
    """Process up to `limit` pending session-close events, then execute their queued runs.

    A pass is one unit of work over ``state.db``: opened once here and passed to its
    stores, checks and the recovery queue (a file replaced between passes is reopened).
    Safe to call from several processes at once and after a crash at any point: runs are
    created under the engine's UNIQUE idempotency key and claimed atomically. Used by the
    detached drain worker (`run_worker`) and by ``wardian serve``'s loop.

    Args:
        limit: at most this many events per call.
        execute: also execute the queued runs (False: only create them).
        stop: when set (``wardian serve`` stopping), the pass ends before its next event or
            run; what it did not reach stays pending / undispatched for the next pass.

    Returns:
        Counts of what was done; errors that were recorded but did not stop the pass.
    """
    report = DrainReport()
    state_db = open_state_db()
    _recover_requested(report, state_db)
    drain = _Drain(state_db)
    for event in drain.queue.pending(limit):
        if stop is not None and stop.is_set():
            break
        with drain.queue.processing(event) as claimed:
            # None: another worker fires it (PostgreSQL); this one goes on, and runs
            # what the other creates as its fires commit.
            if claimed is not None:
                drain.process(claimed, report)
    if execute:
        # Reclaim first: a session-close run it resumes to the end is then final when
        # its fire is read below, and is marked dispatched in this same pass. The other
        # order left the fire undispatched whenever this pass was a worker's last (its
        # run was still "running" when the fires were read).
        _reclaim(drain.runs, report, stop)
        drain.execute_pending(report, stop)
    return report


def _reclaim(runs: RunStore, report: DrainReport, stop: threading.Event | None) -> None:
    """PostgreSQL: resume runs of any kind whose lease expired (their worker was killed
    or cut off; `wardian.engine.reclaim`), so whichever worker drains next continues them.
    Nothing on SQLite."""
    if runs.db.dialect != "postgres":
        return
    from wardian.engine.reclaim import resume_expired

    reclaimed = resume_expired(runs, stop=stop)
    report.executed += len(reclaimed.resumed)
    report.errors.extend(f"resuming an expired lease: {line}" for line in reclaimed.errors)


def drain_until(stop: threading.Event, *, log: Callable[[str], None],
                poll_s: float = 0.02, fallback_s: float = 1.0) -> None:
    """Drain session-close events as they arrive until `stop` is set: ``wardian serve``'s
    drain thread, and any long-lived worker sharing a PostgreSQL database.

    SQLite: polls the queue every `poll_s` seconds (an indexed read). PostgreSQL:
    sleeps on ``LISTEN`` (`wardian._pg_coord`), so an event committed on any machine wakes
    every listening worker at its commit; it also wakes every `fallback_s` seconds to
    resume runs whose lease expired elsewhere (nobody notifies about a worker that died),
    which is also how soon a set `stop` is seen without a notification.

    Args:
        stop: ends the loop (between events and before each run, as `drain_once`).
        log: receives one line per pass that did something, and each recorded error.
        poll_s / fallback_s: seconds, see above.

    Raises:
        StoreError: the PostgreSQL server cannot be reached to listen. A failing pass is
            logged, never raised.
    """
    state_db = open_state_db()
    queue = SessionEventQueue(state_db)
    fires = FireLog(state_db)
    listener: Any = None
    runs: Any = None
    try:
        if queue.db.dialect == "postgres":
            from wardian._pg_coord import EVENTS_CHANNEL, Listener
            from wardian.engine.runs import RunStore

            listener = Listener(queue.conn.url, EVENTS_CHANNEL)  # type: ignore[attr-defined]
            runs = RunStore(state_db, recover=False)
        notified = False
        while not stop.is_set():
            again = False
            try:
                report = DrainReport()
                # A notification is news of work (an event, a queued run): drain without
                # looking first; otherwise look (two indexed reads) before a whole pass.
                if notified or queue.has_pending() or fires.undispatched(limit=1):
                    report = drain_once(stop=stop)  # also resumes expired leases
                    # SQLite: go again at once (an undispatched fire is work here). On
                    # PostgreSQL it may be another machine's running run: wait for news.
                    again = listener is None
                elif runs is not None:  # each wake-up, the 1 s fallback included
                    _reclaim(runs, report, stop)
                for line in report.errors:
                    log(f"drain: {line}")
                if report.events or report.executed:
                    log(f"drain: {report.events} event(s), {report.runs_created} run(s)"
                        f" created, {report.skipped} skipped, {report.executed} executed")
                    again = True
            except Exception as exc:  # keep draining after a hiccup
                log(f"drain failed: {type(exc).__name__}: {exc}")
            notified = False
            if again:
                continue
            if listener is not None:
                notified = bool(listener.wait(fallback_s))
            else:
                stop.wait(poll_s)
    finally:
        if listener is not None:
            listener.close()


def run_worker(*, batch: int = 100) -> DrainReport:
    """The detached drain worker: hold the drain lock and drain until the queue is empty.

    Exits at once when another worker holds the lock. After releasing the lock it looks at
    the queue again, so an event committed while it was finishing is never left waiting
    (its writer saw the lock held and started no worker).

    Returns:
        The accumulated report.
    """
    total = DrainReport()
    lock = drain_lock()
    while True:
        if not lock.acquire():
            return total
        try:
            while True:
                report = drain_once(limit=batch)
                total.add(report)
                if report.idle:
                    break
        finally:
            lock.release()
        state_db = open_state_db()
        again = SessionEventQueue(state_db).has_pending()
        from wardian.runtime.recovery import has_requests

        again = again or has_requests(state_db)
        fires = FireLog(state_db)
        # On PostgreSQL an undispatched fire may be another machine's running run: it
        # is no reason to drain again at once (that would spin until the run ends).
        if fires.db.dialect == "sqlite":
            again = again or bool(fires.undispatched(limit=1))
        if not again:
            return total


def worker_main() -> int:
    """Entry of the detached worker process (see `wardian.runtime.session_events.drain_command`).

    Imports only the drain's own dependencies (not the Typer CLI), which shortens a cold
    worker's start-up and so the event -> run start latency. Errors go to stderr (the
    worker's log file); the exit code is always 0 because every failure is recorded on the
    event or run it concerns.
    """
    report = run_worker()
    for message in report.errors:
        print(f"drain: {message}", file=sys.stderr)
    return 0
