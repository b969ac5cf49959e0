"""``wardian serve``: the one process that fires schedules and drains session-close events.

DESIGN.md "Invokers". Start-up, in order:

1. take the daemon lock (``<data dir>/locks/serve.lock``, the same OS file lock the event
   writers check, `wardian.runtime.session_events.daemon_lock`) and, when the installation
   uses PostgreSQL, the database's scheduler lock (a session advisory lock: one scheduler
   across every machine sharing the database). While another ``serve`` holds either, this
   one is a **standby** (`ScheduleDaemon.serve`): it logs who holds the lock (pid and since
   from the lock's holder record, `wardian._lock.FileLock.holder`, or "another machine"),
   schedules and drains nothing, and takes over the moment the holder stops or dies (the OS
   drops a killed process's file lock; the server ends a killed process's session and its
   advisory lock with it); a stop signal ends a standby at once (exit 0);
2. mark runs left ``running`` by a dead process as interrupted (the engine's
   ``mark_interrupted_orphans``);
3. finish what a killed predecessor left: ``pending`` slots get their run (idempotent by
   key ``schedule:<invoker id>:<scheduled time>``), ``ran`` slots whose run is still queued
   are executed.

Then the loop, every `poll_s` (default 0.1 s) or sooner when a slot is due: read the schedule
invokers (so CLI changes apply within one poll, far under 2 s), compute each one's due slots
from its last recorded slot, decide their outcomes (`plan_due_slots`), record them (UNIQUE
``(invoker, scheduled time)``) and only then create and dispatch runs on worker threads. A
separate thread calls `drain_once` whenever the session-event queue has work.

Stopping (SIGTERM/SIGINT, `request_stop`) never waits without a bound, and says what it waits
for:

* the loop ends within the pass under way: it decides no further invoker, and slots it
  decided to run but had not dispatched stay ``pending``; nothing new starts (a run handed
  to a worker but not begun stays ``queued``, its slot unsettled); the next start finishes
  both. The drain stops between events and before each run, leaving the rest pending;
* runs already executing here (schedule runs and the drain's) get `shutdown_timeout_s` to
  finish (a second signal cuts that short), then are asked to cancel at their next safe
  point (a provider's process tree is killed); what still runs `cancel_grace_s` later is
  left behind: its workers are daemon threads, so the process exits anyway, and the run
  keeps this process's identity as its owner, which the next start (or any store open)
  finds dead and marks the run ``interrupted``, resumable with
  ``wardian automation run resume``.

The clock is injectable (`ScheduleDaemon(clock=...)`) and nothing else: ``wardian serve`` always
uses the real UTC time, and no environment variable or file can move it (tests that jump hours
ahead run the daemon body in a subprocess with their own clock).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wardian._util import format_utc, parse_utc, utc_now
from wardian.config import open_state_db
from wardian.errors import UsageError, WardianError
from wardian.invokers.daemon_lock import (
    DaemonAlreadyRunning,
    DaemonStatus,
    acquire_daemon_lock,
    daemon_status,
)
from wardian.invokers.schedule import ScheduleConfig, SlotDecision, plan_due_slots, slot_key
from wardian.invokers.slots import SlotStore, dispatch_slot, invoker_blueprint, schedule_key
from wardian.invokers.store import Invoker, InvokerStore
from wardian.runtime.session_events import (
    SessionEventQueue,
    mark_standby,
    start_drain_worker,
)

if TYPE_CHECKING:  # the engine and pydantic models: imported when the daemon starts
    from wardian.blueprints.validate import LoadedBlueprint
    from wardian.engine.runs import RunStore

__all__ = [
    "DaemonAlreadyRunning",
    "DaemonStatus",
    "ScheduleDaemon",
    "daemon_status",
    "dispatch_slot",
    "schedule_key",
]

MAX_SLOTS_PER_TICK = 10_000
"""Slots decided per invoker per loop pass; a longer backlog is worked off over passes."""


# --- the daemon -------------------------------------------------------------------------


@dataclass
class _Entry:
    updated_at: str
    config: ScheduleConfig | None
    error: str | None = None
    cursor: datetime | None = None


@dataclass
class _InFlight:
    by_invoker: dict[str, set[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, invoker_id: str, run_id: str) -> None:
        with self.lock:
            self.by_invoker.setdefault(invoker_id, set()).add(run_id)

    def done(self, invoker_id: str, run_id: str) -> None:
        with self.lock:
            self.by_invoker.get(invoker_id, set()).discard(run_id)

    def any_for(self, invoker_id: str) -> str | None:
        with self.lock:
            ids = self.by_invoker.get(invoker_id)
            return next(iter(ids)) if ids else None

    def ids(self) -> list[str]:
        with self.lock:
            return [run_id for ids in self.by_invoker.values() for run_id in ids]

    def count(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.by_invoker.values())


class _Workers:
    """Runs submitted calls on up to `size` **daemon** threads, in submission order.

    Not `concurrent.futures.ThreadPoolExecutor`: the interpreter joins its threads at exit,
    so one run that never returns (an action ignoring ``should_stop()``) kept a stopped
    ``wardian serve`` from exiting at all, after it had logged that it was leaving the run
    for the next start. A daemon thread is abandoned at exit instead; the run it was
    executing stays resumable (see the module docstring).
    """

    def __init__(self, size: int, name: str) -> None:
        self._size = size
        self._name = name
        self._calls: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, call: Callable[[], None]) -> None:
        """Queue `call`; it runs on one of the threads (started as needed, up to `size`)."""
        with self._lock:
            self._calls.put(call)
            if len(self._threads) < self._size:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self._name}-{len(self._threads)}")
                self._threads.append(thread)
                thread.start()

    def _work(self) -> None:
        while (call := self._calls.get()) is not None:
            with contextlib.suppress(Exception):  # the call logs its own failures
                call()

    def shutdown(self) -> None:
        """Let every thread end once the calls queued before this are done (never waits)."""
        with self._lock:
            for _ in self._threads:
                self._calls.put(None)


class ScheduleDaemon:
    """The ``wardian serve`` process body (see the module docstring).

    Args:
        clock: returns the current aware UTC time (default: the real clock, `utc_now`).
        poll_s: longest wait between loop passes, seconds (0.01 to 2).
        workers: threads executing runs of ``parallel`` invokers (``skip`` and ``queue``
            invokers run one at a time, each on its own thread).
        shutdown_timeout_s: how long a stop waits for in-flight runs, seconds.
        cancel_grace_s: how long it then waits for the runs asked to cancel, seconds
            (default 10; ``wardian serve`` always uses the default).
        drain: also drain session-close events (default True).
        log: one-line logger (default: print to stdout, flushed).

    Raises:
        UsageError: `poll_s`, `shutdown_timeout_s` or `cancel_grace_s` out of range.
    """

    def __init__(self, *, clock: Callable[[], datetime] | None = None, poll_s: float = 0.1,
                 workers: int = 8, shutdown_timeout_s: float = 30.0,
                 cancel_grace_s: float = 10.0, drain: bool = True,
                 log: Callable[[str], None] | None = None) -> None:
        if not 0.01 <= poll_s <= 2.0:
            raise UsageError(f"--poll {poll_s:g} is outside 0.01 to 2 seconds",
                             hint="the default 0.1 picks up CLI changes within 0.1 s")
        if shutdown_timeout_s < 0:
            raise UsageError("--shutdown-timeout must not be negative")
        if cancel_grace_s < 0:
            raise UsageError("cancel_grace_s must not be negative")
        self.clock = clock or utc_now
        self.poll_s = poll_s
        self.shutdown_timeout_s = shutdown_timeout_s
        self.cancel_grace_s = cancel_grace_s
        self.drain_enabled = drain
        self._log = log or (lambda line: print(line, flush=True))
        self.stop_event = threading.Event()
        self.hurry_event = threading.Event()
        self._pool = _Workers(workers, "run")
        self._serial: dict[str, _Workers] = {}
        self._inflight = _InFlight()
        self._changed = threading.Condition()
        """Notified when a run ends, the drain thread ends or a stop signal arrives."""
        self._drain_thread: threading.Thread | None = None
        self._closed = False
        self._entries: dict[str, _Entry] = {}
        self._local = threading.local()
        self._failed = False
        self._signals = 0  # SIGTERM/SIGINT received (written only by the handler)
        self._signals_taken = 0
        self._lock: Any = None
        self._cluster_lock: Any = None
        self._runs: RunStore | None = None
        self.invokers: InvokerStore | None = None
        self.slots: SlotStore | None = None

    # lifecycle ---------------------------------------------------------------------------

    def acquire(self) -> None:
        """Take the daemon lock and describe the holder.

        Raises:
            DaemonAlreadyRunning: another process holds it (names its pid and since).
        """
        self._lock = acquire_daemon_lock()
        mark_standby(False)  # a killed standby's mark
        from wardian._db import configured_database_url

        url = configured_database_url()
        if url is not None:
            # Machines sharing one PostgreSQL database share its scheduler too: one
            # daemon across all of them, by a session advisory lock.
            from wardian._pg import SessionLock
            from wardian.invokers.daemon_lock import serve_session_name

            self._cluster_lock = SessionLock.try_acquire(
                url, "serve", application_name=serve_session_name(utc_now()))
            if self._cluster_lock is None:
                self._lock.release()
                self._lock = None
                raise DaemonAlreadyRunning(DaemonStatus(True, None, None), elsewhere=url)

    def wait_for_locks(self) -> bool:
        """Take the daemon lock (and the database's scheduler lock on PostgreSQL), waiting
        as a standby while another ``serve`` holds one (module docstring, step 1).

        The machine's file lock is tried every `poll_s` (a non-blocking syscall); the
        database's lock is waited for in the server's lock queue, asking every second
        whether a stop signal came. Logs one line when it starts waiting, naming the
        holder, and one when it takes over.

        Returns:
            True with both locks held; False when stopped (SIGTERM/SIGINT, `request_stop`)
            before that, holding nothing.

        Raises:
            StoreError: the PostgreSQL server cannot be reached.
        """
        def stopped() -> bool:
            self._take_signals()
            return self.stop_event.is_set()

        waited = False
        while not stopped():
            try:
                self._lock = acquire_daemon_lock()
                break
            except DaemonAlreadyRunning as exc:
                if not waited:
                    who = (f"wardian serve pid {exc.status.pid} (running since"
                           f" {exc.status.since})" if exc.status.pid
                           else "another wardian serve")
                    self._standby(f"{who} holds this data directory's daemon lock")
                    waited = True
            self.stop_event.wait(self.poll_s)
        if self._lock is None:
            return False
        mark_standby(False)  # a killed standby's mark
        from wardian._db import configured_database_url

        url = configured_database_url()
        if url is not None:
            from wardian._pg import SessionLock
            from wardian.invokers.daemon_lock import serve_session_name

            # The session's name says who this is, active or waiting (`serve --status`).
            self._cluster_lock = SessionLock.try_acquire(
                url, "serve", application_name=serve_session_name(utc_now()))
            if self._cluster_lock is None:
                from wardian._pg import redact_url

                self._standby("a wardian serve on another machine (or data directory) sharing"
                              f" the database {redact_url(url)} holds its scheduler lock")
                waited = True
                try:
                    # This machine's closes still get drain workers while this one waits.
                    mark_standby(True)
                    self._drain_waiting_here()
                    self._cluster_lock = SessionLock.wait_acquire(
                        url, "serve", stopped,
                        application_name=serve_session_name(utc_now()))
                    if self._cluster_lock is not None:  # active from now on
                        self._cluster_lock.name_session(serve_session_name(utc_now()))
                        mark_standby(False)
                except BaseException:
                    self.release()
                    raise
            if self._cluster_lock is None:
                self.release()
                return False
        if waited:
            self.log(f"{self._stamp()} standby taking over: the other wardian serve stopped"
                     f" (pid {os.getpid()})")
        return True

    def _drain_waiting_here(self) -> None:
        """As a standby: a drain worker for the closes already waiting for this machine
        (their transcripts are files here; `SessionEventQueue.pending`), if any."""
        queue = SessionEventQueue(open_state_db())
        waiting = queue.has_pending()
        if waiting:
            start_drain_worker()

    def _standby(self, holder: str) -> None:
        self.log(f"{self._stamp()} standby (pid {os.getpid()}): {holder}; this one waits"
                 " and takes over when it stops (Ctrl-C or SIGTERM stops the standby)")

    def release(self) -> None:
        """Release the lock (which empties its holder record)."""
        if self._lock is None:
            return
        mark_standby(False)
        self._lock.release()
        self._lock = None
        if self._cluster_lock is not None:
            self._cluster_lock.release()
            self._cluster_lock = None

    def open(self) -> None:
        """Open the stores, mark orphaned runs interrupted and finish a predecessor's work."""
        from wardian.engine.actions import known_actions
        from wardian.engine.runs import RunStore

        # Load the actions (every plugin's, `wardian.plugins`) once, before any worker
        # thread runs: a broken plugin is then reported at start-up, not on the first fire.
        known_actions()
        self._warm_up()
        state_db = open_state_db()
        self.invokers = InvokerStore(state_db)
        self.slots = SlotStore(state_db)
        self._runs = RunStore(state_db, recover=False)
        marked = self._runs.mark_interrupted_orphans() or []
        for run_id in marked:
            self.log(f"{self._stamp()} run {run_id[:8]} was left running by a dead process: "
                     "marked interrupted")
        self.recover()

    def _warm_up(self) -> None:
        """Pay the cold start (imports, YAML/pydantic/Jinja2 first use) before the first fire,
        not on it: the first event or slot otherwise waited longer than the rest."""
        try:
            import wardian.engine.executor
            import wardian.invokers.drain  # noqa: F401
            from wardian.blueprints.library import list_library
            from wardian.engine.actions import known_actions

            list_library(known_actions=known_actions())
        except Exception as exc:  # a broken library must not stop the daemon
            self.log(f"{self._stamp()} warm-up: {type(exc).__name__}: {exc}")

    def log(self, line: str) -> None:
        """Log one line; silent once `close` has left work behind (a thread abandoned at
        exit must not write to a stream the interpreter is closing)."""
        if self._closed and threading.current_thread() is not threading.main_thread():
            return
        self._log(line)

    def close(self) -> None:
        """Stop (module docstring): start nothing new; let the runs executing here finish for
        up to `shutdown_timeout_s` (cut short by a second `request_stop`); ask the ones still
        running to cancel at their next safe point (the engine stops the step and records
        the run ``cancelled``) and wait up to `cancel_grace_s` more; then stop the worker
        pools, leaving whatever still runs to the next start. Never waits longer than that."""
        self.stop_event.set()
        self._notify()
        self._wait_idle(self.shutdown_timeout_s, "to finish", hurry=True)
        left = self._running_here()
        if left and self._runs is not None:
            why = ("on a second stop signal" if self.hurry_event.is_set()
                   else f"after {self.shutdown_timeout_s:g} s")
            self.log(f"{self._stamp()} cancelling {len(left)} run(s) still running {why}: "
                     f"{_ids(left)}")
            for run_id in left:
                with contextlib.suppress(WardianError):  # it may have finished meanwhile
                    self._runs.request_cancel(run_id)
            self._wait_idle(self.cancel_grace_s, "to stop at their next safe point")
        left = self._running_here()
        if left:
            self.log(f"{self._stamp()} exiting with {len(left)} run(s) still running "
                     f"({_ids(left)}); their owner (this process) is gone once it exits, so "
                     "the next start marks them interrupted and `wardian automation run "
                     "resume RUN` continues them")
        elif self._busy():
            self.log(f"{self._stamp()} exiting while waiting for {self._waiting_for()}; "
                     "what it leaves is finished by the next start")
        self._closed = True
        self._pool.shutdown()
        for pool in self._serial.values():
            pool.shutdown()

    def _busy(self) -> bool:
        """Whether a run is in flight here or the drain thread is still working."""
        drain = self._drain_thread
        return bool(self._inflight.count()) or (drain is not None and drain.is_alive())

    def _running_here(self) -> list[str]:
        """Runs recorded ``running`` with this process as their owner: schedule runs and
        the drain's (a queued run is not asked to cancel: the next start executes it)."""
        ids: set[str] = set()
        if self._runs is not None:
            with contextlib.suppress(Exception):  # a busy database must not stall the stop
                ids = {str(r.id) for r in self._runs.list(status="running", limit=10_000)
                       if r.owner_pid == os.getpid()}
        return sorted(ids)

    def _waiting_for(self) -> str:
        parts = []
        if self._inflight.count():
            parts.append(f"{self._inflight.count()} run(s) in flight "
                         f"({_ids(self._inflight.ids())})")
        drain = self._drain_thread
        if drain is not None and drain.is_alive():
            parts.append("the session-close drain (it stops before its next event or run)")
        return " and ".join(parts)

    def _wait_idle(self, seconds: float, what: str, *, hurry: bool = False) -> None:
        """Wait up to `seconds` until nothing runs here (woken when a run or the drain
        ends; with `hurry`, a second stop signal ends the wait at once). Logs what it
        waits for."""
        waiting = self._waiting_for()
        if not waiting:
            return
        self.log(f"{self._stamp()} stopping: waiting up to {seconds:g} s for {waiting} "
                 f"{what}")
        deadline = time.monotonic() + seconds
        with self._changed:
            while self._busy():
                self._take_signals()  # a second signal hurries (the handler only counts)
                if hurry and self.hurry_event.is_set():
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(min(left, 0.1))

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def runs_left(self) -> int:
        """How many runs still execute here (after `serve` returned: runs that ignored the
        cancel; their worker threads would keep this process alive, see `wardian serve`)."""
        return self._inflight.count()

    def request_stop(self) -> None:
        """Stop the loop (what SIGTERM/SIGINT do). A second call stops waiting for running
        runs and cancels them at once (an impatient second Ctrl-C)."""
        if self.stop_event.is_set():
            self.hurry_event.set()
        self.stop_event.set()
        self._notify()

    def serve(self) -> int:
        """Run until SIGTERM/SIGINT (or `stop_event`); returns the exit code (0).

        While another daemon holds the lock (this data directory's, or on PostgreSQL the
        database's, from any machine), wait as its standby and take over when it stops or
        dies (`wait_for_locks`); a stop signal during the wait ends it (0).

        Raises:
            StoreError: the PostgreSQL server cannot be reached.
        """
        self._install_signals()
        if not self.wait_for_locks():
            self.log(f"{self._stamp()} standby stopped before taking over (pid {os.getpid()})")
            return 0
        try:
            self.log(f"{self._stamp()} wardian serve started (pid {os.getpid()})")
            self.open()
            self.log(f"{self._stamp()} wardian serve ready (pid {os.getpid()})")
            if self.drain_enabled and not self.stop_event.is_set():
                self._drain_thread = threading.Thread(target=self._drain_loop, name="drain",
                                                      daemon=True)
                self._drain_thread.start()
            while True:
                self._take_signals()  # at most `poll_s` (<= 2 s) after a signal arrived
                if self.stop_event.is_set():
                    break
                wait = self.tick()
                self.stop_event.wait(wait)
            self.log(f"{self._stamp()} stopping: no new slots, runs or drain passes")
            self.close()
            self.log(f"{self._stamp()} wardian serve stopped")
            return 0
        finally:
            self.release()

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def handler(signum: int, _frame: Any) -> None:
            # Only a count, no lock: the handler runs in the main thread between two
            # bytecodes, which may be while that thread holds `stop_event`'s own lock (at the
            # end of `stop_event.wait`, when the signal reached another thread first). An
            # `Event.set` here would then wait for that lock for ever and the daemon would
            # never stop. The loop turns the count into `request_stop` (`_take_signals`).
            self._signals += 1

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def _take_signals(self) -> None:
        """Act on the stop signals the handler counted: one `request_stop` per signal (the
        second one hurries). Called by the main thread wherever it waits."""
        while self._signals_taken < self._signals:
            self._signals_taken += 1
            self.request_stop()

    def _stamp(self) -> str:
        return format_utc(self.clock())

    # recovery ----------------------------------------------------------------------------

    def recover(self) -> None:
        """Resolve ``pending`` slots and execute ``ran`` runs still queued (idempotent)."""
        assert self.slots is not None and self.invokers is not None
        by_id = self._finish_pending()
        for slot in self.slots.unsettled():
            if slot.run_id is None:  # pragma: no cover - 'ran' rows always carry a run id
                continue
            assert self._runs is not None  # opened by `start`, before any recovery
            run = self._runs.get(slot.run_id)
            if run.status == "queued" and slot.invoker_id in by_id:
                self._execute(by_id[slot.invoker_id], slot.run_id, slot.scheduled_time)
            else:
                self.slots.settle(slot.invoker_id, slot.scheduled_time)

    def _finish_pending(self) -> dict[str, Invoker]:
        """Create the runs of ``pending`` slots (a predecessor or a failed pass decided them)
        and dispatch the queued ones. Returns the schedule invokers by id."""
        assert self.slots is not None and self.invokers is not None and self._runs is not None
        by_id = {inv.id: inv for inv in self.invokers.list(kind="schedule")}
        for slot in self.slots.pending():
            invoker = by_id.get(slot.invoker_id)
            if invoker is None:
                self.slots.resolve(slot.invoker_id, slot.scheduled_time, outcome="skipped",
                                   run_id=None, reason="invoker removed before its run existed")
                continue
            loaded = invoker_blueprint(invoker)  # once for the slot's run, created and run
            run_id, status = dispatch_slot(self._runs, self.slots, invoker, slot.scheduled_time,
                                           late_s=slot.late_s, blueprint=loaded)
            self.log(f"{self._stamp()} finished pending slot {slot.scheduled_time} of "
                     f"{invoker.name}: run {run_id[:8]} ({status})")
            if status == "queued":
                self._execute(invoker, run_id, slot.scheduled_time, blueprint=loaded)
        return by_id

    # the loop ----------------------------------------------------------------------------

    def _entry(self, invoker: Invoker) -> _Entry:
        entry = self._entries.get(invoker.id)
        if entry is None or entry.updated_at != invoker.updated_at:
            cursor = entry.cursor if entry else None
            try:
                entry = _Entry(invoker.updated_at, ScheduleConfig.from_config(invoker.config))
            except WardianError as exc:
                entry = _Entry(invoker.updated_at, None, error=exc.render())
                self.log(f"{self._stamp()} schedule {invoker.name} ({invoker.id[:8]}) has an "
                         f"invalid config and does not fire: {entry.error}")
            entry.cursor = cursor
            self._entries[invoker.id] = entry
        return entry

    def tick(self) -> float:
        """One loop pass: decide, record and dispatch every due slot. Returns the wait, s.

        Never raises: a failed pass (a locked database, a bug) is logged and retried on the
        next pass; what it decided but did not dispatch is ``pending`` and finished then.
        """
        try:
            return self._tick()
        except Exception as exc:  # the daemon must not die on a hiccup (anchors #11)
            self.log(f"{self._stamp()} loop pass failed: {type(exc).__name__}: {exc}; "
                     "retrying")
            self._failed = True
            return max(self.poll_s, 0.5)

    def _tick(self) -> float:
        assert self.slots is not None and self.invokers is not None
        if self._failed or self.slots.pending():
            self._failed = False
            self._finish_pending()
        now = self.clock()
        wait = self.poll_s
        states = self.slots.states()
        invokers = self.invokers.list(kind="schedule")
        live = {inv.id for inv in invokers}
        for gone in set(self._entries) - live:
            del self._entries[gone]
        for invoker in invokers:
            if self.stop_event.is_set():  # the next start decides the rest (its cursor)
                break
            try:
                wait = min(wait, self._tick_invoker(invoker, states.get(invoker.id), now))
            except WardianError as exc:
                self.log(f"{self._stamp()} schedule {invoker.name} ({invoker.id[:8]}): "
                         f"{exc.render()}")
        return wait

    def _tick_invoker(self, invoker: Invoker, state: Any, now: datetime) -> float:
        assert self.slots is not None
        wait = self.poll_s
        if invoker.enabled and (state is None or state.disabled_at is not None):
            # Enabled without our CLI's bookkeeping (or the daemon saw no transition).
            config = self._entry(invoker).config
            if config is not None:
                self.slots.record_disabled_period(invoker.id, config, now=now)
            self.slots.mark_enabled(invoker.id, invoker.updated_at)
            state = self.slots.state(invoker.id)
        elif not invoker.enabled and state is not None and state.disabled_at is None:
            self.slots.mark_disabled(invoker.id, invoker.updated_at)
            state = self.slots.state(invoker.id)
        if state is None:
            return wait
        entry = self._entry(invoker)
        if entry.config is None:
            return wait
        if entry.cursor is None:
            entry.cursor = self.slots.last_slot(invoker.id)
        since = parse_utc(state.active_since)
        cursor = max(entry.cursor, since) if entry.cursor else since
        end = now if state.disabled_at is None else min(now, parse_utc(state.disabled_at))
        due = entry.config.fire_times.between(cursor, end, limit=MAX_SLOTS_PER_TICK)
        if due:
            after = next(entry.config.fire_times.iter_after(due[-1]), None)
            backlog = len(due) >= MAX_SLOTS_PER_TICK and after is not None and after <= end
            self._fire(invoker, entry.config, due, now,
                       disabled=state.disabled_at is not None, backlog=backlog)
            entry.cursor = due[-1]
            if backlog:
                return 0.0
        if state.disabled_at is None:
            nxt = next(entry.config.fire_times.iter_after(max(now, entry.cursor or cursor)),
                       None)
            if nxt is not None:
                wait = min(wait, max(0.0, (nxt - self.clock()).total_seconds()))
        return wait

    def _busy_run(self, invoker_id: str) -> str | None:
        """A run of the invoker in flight here, or running in another live process
        (``run-now``).

        Queued runs elsewhere do not count: one nobody executes would block the schedule.
        Neither does a run left ``running`` by a process that died after this daemon started
        (it is marked interrupted here), or overlap ``skip`` would skip every slot forever."""
        busy = self._inflight.any_for(invoker_id)
        if busy is None and self._runs is not None:
            found = self._runs.list(invoker_id=invoker_id, status="running", limit=1)
            if found:
                for run_id in self._runs.mark_interrupted_orphans() or []:
                    self.log(f"{self._stamp()} run {run_id[:8]} was left running by a dead "
                             "process: marked interrupted")
                found = self._runs.list(invoker_id=invoker_id, status="running", limit=1)
            if found:
                return str(found[0].id)
        return busy

    def _fire(self, invoker: Invoker, config: ScheduleConfig, due: list[datetime],
              now: datetime, *, disabled: bool, backlog: bool = False) -> None:
        assert self.slots is not None and self._runs is not None
        if backlog:
            # More than MAX_SLOTS_PER_TICK slots are owed and newer ones follow: this oldest
            # chunk never runs (no flood); the policy applies to the newest chunk.
            decisions = [SlotDecision(s, "skipped", f"misfired by {(now - s).total_seconds():.0f}"
                                      f" s; backlog of more than {MAX_SLOTS_PER_TICK} slots",
                                      (now - s).total_seconds()) for s in due]
        else:
            busy = self._busy_run(invoker.id) if config.overlap == "skip" else None
            decisions = plan_due_slots(config, due, now, busy_run_id=busy, disabled=disabled)
        fresh = self.slots.record(invoker.id, decisions, decided_at=now)
        for d in fresh:
            if d.outcome != "run":
                self._log_outcome(invoker, d, None)
                continue
            key = slot_key(d.scheduled)
            if self.stop_event.is_set():
                self.log(f"{self._stamp()} schedule {invoker.name} ({invoker.id[:8]}) slot "
                         f"{key}: left pending for the next start (stopping)")
                continue
            loaded = invoker_blueprint(invoker)  # once for the slot's run, created and run
            run_id, status = dispatch_slot(self._runs, self.slots, invoker, key, late_s=d.late_s,
                                           blueprint=loaded)
            self._log_outcome(invoker, d, (run_id, status))
            if status == "queued":
                self._execute(invoker, run_id, key, overlap=config.overlap, blueprint=loaded)

    def _log_outcome(self, invoker: Invoker, d: SlotDecision,
                     run: tuple[str, str] | None) -> None:
        what = f"schedule {invoker.name} ({invoker.id[:8]}) slot {slot_key(d.scheduled)}"
        if run is not None:
            run_id, status = run
            if status == "blocked":
                self.log(f"{self._stamp()} {what}: blocked (the invoker is broken; see "
                         f"`wardian automation schedule show {invoker.id[:8]}`)")
                return
            outcome = "ran" if status != "skipped" else "skipped (blocked assignment)"
            self.log(f"{self._stamp()} {what}: {outcome} run {run_id[:8]} late {d.late_s:.3f} s")
        elif d.outcome == "coalesced":
            self.log(f"{self._stamp()} {what}: coalesced into slot {slot_key(d.into)}"
                     f" ({d.reason})" if d.into else f"{self._stamp()} {what}: coalesced")
        else:
            self.log(f"{self._stamp()} {what}: skipped ({d.reason})")

    def _execute(self, invoker: Invoker, run_id: str, scheduled_time: str,
                 *, overlap: str | None = None,
                 blueprint: LoadedBlueprint | None = None) -> None:
        if overlap is None:
            try:
                overlap = ScheduleConfig.from_config(invoker.config).overlap
            except WardianError:
                overlap = "skip"
        self._inflight.add(invoker.id, run_id)
        pool = self._pool
        if overlap != "parallel":  # skip and queue: one run of the invoker at a time
            pool = self._serial.setdefault(invoker.id, _Workers(1, "queue"))

        def work() -> None:
            from wardian.engine.executor import execute_run

            try:
                if self.stop_event.is_set():
                    # Stopping: leave it queued with its slot unsettled; the next start
                    # executes it (`recover`) instead of this stop waiting for it.
                    self.log(f"{self._stamp()} run {run_id[:8]} of {invoker.name} left "
                             "queued for the next start (stopping)")
                    return
                try:
                    run = execute_run(run_id, store=self._thread_runs(), blueprint=blueprint)
                    self.log(f"{self._stamp()} run {run_id[:8]} of {invoker.name} finished: "
                             f"{run.status}")
                except Exception as exc:  # a failed run must not kill the daemon
                    self.log(f"{self._stamp()} run {run_id[:8]} of {invoker.name} failed to "
                             f"execute: {type(exc).__name__}: {exc}")
                try:
                    self._thread_slots().settle(invoker.id, scheduled_time)
                except Exception as exc:  # e.g. a locked database; `recover` settles it
                    self.log(f"{self._stamp()} slot {scheduled_time} of {invoker.name} not "
                             f"settled ({type(exc).__name__}: {exc}); the next start does")
            finally:
                self._inflight.done(invoker.id, run_id)
                self._notify()

        pool.submit(work)

    def _thread_runs(self) -> RunStore:
        """This worker thread's own engine RunStore (one connection per thread:
        sqlite3 connections are not shared across threads that write), with its SlotStore
        (`_thread_slots`) over the same database, opened on the thread's first use."""
        from wardian.engine.runs import RunStore

        store: RunStore | None = getattr(self._local, "runs", None)  # a threading.local
        if store is None:
            state_db = open_state_db()
            store = self._local.runs = RunStore(state_db, recover=False)
            self._local.slots = SlotStore(state_db)
        return store

    def _thread_slots(self) -> SlotStore:
        """The SlotStore of this worker thread's database (`_thread_runs`)."""
        self._thread_runs()
        slots: SlotStore = self._local.slots
        return slots

    # session-close drain -----------------------------------------------------------------

    def _drain_loop(self) -> None:
        try:
            from wardian.invokers.drain import drain_until
        except ImportError as exc:
            self.log(f"{self._stamp()} session-close drain unavailable: {exc}")
            return
        try:
            # The fallback is read at each start (tests set it): PostgreSQL's drain sleeps
            # on LISTEN, SQLite's polls (`drain_until`).
            drain_until(self.stop_event, log=lambda line: self.log(f"{self._stamp()} {line}"),
                        fallback_s=NOTIFY_FALLBACK_S)
        except Exception as exc:  # the server went away before the drain listened
            self.log(f"{self._stamp()} session-close drain stopped: "
                     f"{type(exc).__name__}: {exc}")
        finally:
            self._notify()


NOTIFY_FALLBACK_S = 1.0
"""PostgreSQL: the longest the drain sleeps without a notification, seconds (also how soon
a stop request ends the drain thread)."""


def _ids(run_ids: list[str]) -> str:
    """Short run ids for a log line (at most ten, then a count)."""
    shown = ", ".join(run_id[:8] for run_id in run_ids[:10])
    return shown + (f" and {len(run_ids) - 10} more" if len(run_ids) > 10 else "")
