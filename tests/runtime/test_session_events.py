"""The durable session-event queue: identity, re-delivery, ordering, locks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wardian.config import SettingsStore, open_state_db
from wardian.errors import UsageError
from wardian.runtime.session_events import (
    SessionEventQueue,
    daemon_lock,
    daemon_running,
    drain_command,
    drain_lock,
    record_session_close,
)


def _queue() -> SessionEventQueue:
    return SessionEventQueue(open_state_db())

def test_redelivery_is_the_same_event_and_fills_missing_transcript(tmp_path: Path) -> None:
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true")
    first = record_session_close("agent-1", "clear", session_id="s1", start_drain=False)
    again = record_session_close("agent-1", "clear", session_id="s1",
                                 transcript_path=str(tmp_path / "t.jsonl"), start_drain=False)
    assert again == first
    ev = _queue().get(first)
    assert ev.deliveries == 2 and ev.status == "pending"
    assert ev.transcript_path == str(tmp_path / "t.jsonl")
    # another boundary or another session is another event
    assert record_session_close("agent-1", "shutdown", session_id="s1", start_drain=False) != first
    assert record_session_close("agent-1", "clear", session_id="s2", start_drain=False) != first
    # no session id: every close is its own session
    a = record_session_close("agent-1", "shutdown", start_drain=False)
    b = record_session_close("agent-1", "shutdown", start_drain=False)
    assert a != b
    assert len(_queue().pending()) == 5


def test_nothing_to_do_is_settled_at_close_time() -> None:
    from wardian.invokers.store import InvokerStore

    idle = record_session_close("a", "clear", start_drain=False)
    ev = _queue().get(idle)
    assert ev.status == "processed" and ev.archive_detail == "conversation logging disabled"
    store = InvokerStore(open_state_db())
    inv = store.add("session-close", name="n", blueprint_id="bp", agent_id="a", assignments={})
    assert _queue().get(record_session_close("a", "clear", start_drain=False)) \
        .status == "processed"  # a disabled invoker fires nothing either
    store.set_enabled(inv.id, True)
    busy = record_session_close("a", "clear", start_drain=False)
    assert _queue().get(busy).status == "pending"
    assert _queue().pending()[0].id == busy
    # another agent's invoker does not count
    assert _queue().get(record_session_close("b", "clear", start_drain=False)) \
        .status == "processed"
    # disabled again, or removed: settled again
    store.set_enabled(inv.id, False)
    assert _queue().get(record_session_close("a", "clear", start_drain=False)) \
        .status == "processed"
    store.set_enabled(inv.id, True)
    store.remove(inv.id)
    assert _queue().get(record_session_close("a", "clear", start_drain=False)) \
        .status == "processed"


def test_an_invoker_enabled_before_the_upgrade_still_gets_its_close(tmp_path: Path) -> None:
    # A state.db from before the runtime kept its own subscriber set: the invoker was
    # enabled then. A hook process (runtime only) must not settle the close early.
    from wardian._db import StateDB, migrate_component
    from wardian.config import state_db_path
    from wardian.invokers.store import _MIGRATIONS as INVOKERS
    from wardian.invokers.store import InvokerStore
    from wardian.runtime.session_events import _MIGRATIONS as EVENTS

    with StateDB.open(state_db_path()) as db:
        migrate_component(db.conn, "session_events", EVENTS.sqlite[:1])
        migrate_component(db.conn, "invokers", INVOKERS.sqlite[:1])
        db.conn.execute(
            "INSERT INTO invokers (id, kind, name, blueprint_id, agent_id, enabled, created_at,"
            " updated_at) VALUES ('i1', 'session-close', 'n', 'bp', 'a', 1, 'T', 'T')")
    first = record_session_close("a", "clear", start_drain=False)
    assert _queue().get(first).status == "pending"  # not known yet: the drain decides
    InvokerStore(open_state_db())  # the invokers' migration fills the set
    assert _queue().get(record_session_close("a", "clear", start_drain=False)) \
        .status == "pending"
    assert _queue().get(record_session_close("b", "clear", start_drain=False)) \
        .status == "processed"


def test_unknown_boundary_refused() -> None:
    with pytest.raises(UsageError, match="boundary"):
        record_session_close("agent-1", "exit", start_drain=False)
    assert _queue().pending() == []


def test_logging_setting_captured_at_close_time() -> None:
    settings = SettingsStore(open_state_db())
    off = record_session_close("a", "clear", session_id="1", start_drain=False)
    settings.set("conversation_logging.enabled", "true", agent_id="a")
    on = record_session_close("a", "clear", session_id="2", start_drain=False)
    q = _queue()
    assert q.get(off).logging_enabled is False
    assert q.get(on).logging_enabled is True


def test_mark_processed_and_archive_outcome_are_write_once() -> None:
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true")
    q = _queue()
    eid = record_session_close("a", "clear", start_drain=False)
    q.set_archive(eid, "unavailable", "no transcript", None)
    q.set_archive(eid, "available", None, "conv")
    assert q.get(eid).archive_detail == "no transcript"
    q.mark_processed(eid)
    assert not q.has_pending() and q.get(eid).processed_at


def test_locks_are_exclusive_across_processes_and_die_with_holder() -> None:
    lock = drain_lock()
    assert lock.acquire()
    code = (
        "from wardian.runtime.session_events import drain_lock;"
        "import sys; sys.exit(0 if not drain_lock().acquire() else 1)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 0
    lock.release()
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 1
    # the daemon lock: held by a child, seen from here; gone when the child is killed
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "from wardian.runtime.session_events import daemon_lock;import sys;"
         "l=daemon_lock(); assert l.acquire(); print('held', flush=True);"
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert daemon_running()
    finally:
        holder.kill()
        holder.wait(timeout=30)
        for pipe in (holder.stdin, holder.stdout):
            if pipe is not None:
                pipe.close()
    assert not daemon_running()
    held = daemon_lock()
    assert held.acquire()
    found = held.holder()  # the record now names this process
    assert found is not None and found.pid == os.getpid()
    # another process probing the held lock neither takes it nor touches the record
    probe = ("from wardian.runtime.session_events import daemon_running;"
             "import sys; sys.exit(0 if daemon_running() else 1)")
    assert subprocess.run([sys.executable, "-c", probe], timeout=30).returncode == 0
    assert held.holder() == found
    held.release()  # a clean release empties the record
    assert held.path.read_text() == "" and held.holder() is None


def test_no_worker_started_while_a_daemon_or_worker_holds_its_lock() -> None:
    import psutil

    from wardian.runtime.session_events import start_drain_worker

    daemon = daemon_lock()
    assert daemon.acquire()
    try:
        assert start_drain_worker() is None
    finally:
        daemon.release()
    worker = drain_lock()
    assert worker.acquire()
    try:
        assert start_drain_worker() is None
    finally:
        worker.release()
    pid = start_drain_worker()
    assert pid is not None
    proc = psutil.Process(pid)
    assert proc.wait(timeout=60) == 0  # finds nothing to do and exits cleanly


def test_the_worker_does_not_inherit_a_managed_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian.memory.principal import MANAGED_ENV
    from wardian.runtime.session_events import worker_env

    for name in MANAGED_ENV:
        monkeypatch.setenv(name, "from-the-session")
    env = worker_env()
    assert not set(MANAGED_ENV) & set(env)
    assert env["WARDIAN_HOME"] == os.environ["WARDIAN_HOME"]


def test_the_drain_worker_is_wardian_itself_without_the_cli(tmp_path: Path) -> None:
    # The runtime names no module of the invokers in its command (DESIGN.md "Layout"), and
    # the worker runs the drain without loading the Typer CLI first.
    argv = drain_command()
    assert not any(part.startswith("wardian.") for part in argv), argv
    traced = [argv[0], "-X", "importtime", *argv[1:]]
    env = {**os.environ, "WARDIAN_HOME": str(tmp_path / "home")}
    done = subprocess.run(traced, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "wardian.invokers.drain" in imported
    assert "wardian.cli.main" not in imported and "typer" not in imported
