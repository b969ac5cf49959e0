"""A session-close event whose transcript lives on another machine (issue 18).

Workers on several machines share one PostgreSQL queue, but a transcript is a file on the
machine whose hook or CLI recorded the close. Each event records that machine
(``recorded_host``: ``WARDIAN_HOST_NAME``, else the host name); while its transcript is
still to be imported, only a worker on that machine takes it (a worker elsewhere could not
read the file and would settle the event as "unreadable transcript" for good). That worker
is the one the closing hook starts, also when the machine's ``wardian serve`` is a standby
(it holds the machine's daemon lock while it waits, so it marks itself a standby and the
hook still starts one).

Two data directories stand for two machines; `WARDIAN_HOST_NAME` names them. Waits poll
the database; the timeout marker is a safety net.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.invokers.test_daemon_standby import _serve, _until

from wardian.config import SettingsStore, open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.session_events import SessionEventQueue, record_session_close

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _env(home: Path, host: str) -> dict[str, str]:
    return {**os.environ, "WARDIAN_HOME": str(home), "WARDIAN_HOST_NAME": host}


def _transcript(path: Path, words: str) -> str:
    path.write_text(json.dumps({"role": "user", "content": words}) + "\n"
                    + json.dumps({"role": "assistant", "content": "ok"}) + "\n",
                    encoding="utf-8")
    return str(path)


def test_only_a_worker_on_the_recording_machine_imports_its_transcript(
        pg_url: str, wardian_home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    home_a, home_b = wardian_home, tmp_path / "machine-b"
    home_b.mkdir(mode=0o700)
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true")
    queue = SessionEventQueue(open_state_db())
    serve_b = _serve(home_b, tmp_path / "b.log", host="machine-b")
    serve_a: subprocess.Popen[bytes] | None = None
    try:
        _until(lambda: f"ready (pid {serve_b.pid})" in (tmp_path / "b.log").read_text(),
               [serve_b], "machine B's serve active")
        # A close on machine A (its worker not started yet), then a later one on B.
        monkeypatch.setenv("WARDIAN_HOST_NAME", "machine-a")
        on_a = record_session_close(
            agent, "clear", transcript_path=_transcript(tmp_path / "a.jsonl", "from A"),
            provider="generic", start_drain=False)
        monkeypatch.setenv("WARDIAN_HOST_NAME", "machine-b")
        on_b = record_session_close(
            agent, "clear", transcript_path=_transcript(tmp_path / "b.jsonl", "from B"),
            provider="generic", start_drain=False)
        assert queue.get(on_a).recorded_host == "machine-a"
        _until(lambda: queue.get(on_b).status == "processed", [serve_b], "B draining B's")
        # B drains oldest first: it passed A's event over, leaving its archive undecided.
        event = queue.get(on_a)
        assert (event.status, event.archive_status) == ("pending", None), event
        assert queue.get(on_b).archive_status == "available"

        # Machine A's serve waits as B's standby; a close reported on A still gets a
        # worker on A, which imports both of A's transcripts.
        serve_a = _serve(home_a, tmp_path / "a.log", host="machine-a")
        _until(lambda: f"standby (pid {serve_a.pid})" in (tmp_path / "a.log").read_text(),
               [serve_a, serve_b], "machine A's serve on standby")
        done = subprocess.run(
            [sys.executable, "-m", "wardian", "session", "close", "--agent", "coder",
             "--boundary", "clear", "--provider", "generic", "--json", "--transcript",
             _transcript(tmp_path / "a2.jsonl", "from A again")],
            capture_output=True, text=True, check=False,
            env=_env(home_a, "machine-a"))
        assert done.returncode == 0, done.stderr
        again = json.loads(done.stdout)["event_id"]
        _until(lambda: all(queue.get(e).status == "processed" for e in (on_a, again)),
               [serve_a, serve_b], "A's worker draining A's events")
        for event_id in (on_a, again):
            event = queue.get(event_id)
            assert (event.archive_status, event.recorded_host) == ("available", "machine-a")
        for serving in (serve_a, serve_b):
            serving.send_signal(signal.SIGTERM)
            assert serving.wait() == 0
    finally:
        for proc in (serve_a, serve_b):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_doctor_names_the_machine_whose_closes_wait_for_it(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A close recorded on a machine that drains nothing any more waits for ever: after
    ten minutes ``wardian doctor`` says which machine, how many, and how to drain them."""
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    agent = AgentRegistry(open_state_db()).add("coder", "claude").id
    SettingsStore(open_state_db()).set("conversation_logging.enabled", "true")
    monkeypatch.setenv("WARDIAN_HOST_NAME", "machine-gone")
    waiting = record_session_close(agent, "clear", transcript_path="/nowhere/t.jsonl",
                                   provider="generic", start_drain=False)
    record_session_close(agent, "clear", transcript_path="/nowhere/fresh.jsonl",
                         provider="generic", start_drain=False)  # too recent to warn
    queue = SessionEventQueue(open_state_db())
    queue.conn.execute("UPDATE session_events SET created_at = '2026-01-01T00:00:00.000000Z'"
                       " WHERE id = ?", (waiting,))
    monkeypatch.setenv("WARDIAN_HOST_NAME", "machine-here")
    done = subprocess.run([sys.executable, "-m", "wardian", "doctor", "--check", "database",
                           "--json"], capture_output=True, text=True, timeout=120,
                          check=False, env=dict(os.environ))
    report = json.loads(done.stdout)
    (check,) = report["checks"]
    found = [f for f in check["findings"] if f.get("subject") == "machine-gone"]
    assert len(found) == 1, check["findings"]
    assert found[0]["status"] == "warning" and "1 session close(s)" in found[0]["message"]
    assert "WARDIAN_HOST_NAME=machine-gone" in found[0]["fix"]
