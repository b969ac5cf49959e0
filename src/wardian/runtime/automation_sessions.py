"""The provider sessions Wardian's own automation steps produce, so that recovery never
files them as an agent's sessions.

A role step on a CLI provider (a curator on ``codex``, ``claude``, …) runs that CLI in the
run's workspace, and the CLI keeps a transcript of the call like any session (Codex always;
see docs/hosts.md "Automation steps are not sessions"). Recovery looks for transcripts in
the agent's workspace, so without this it would record the curator's own call as an
unreported session of the agent and consolidate it: memory about the curator's prompts.

The mechanism is exact and durable, by launch rather than by guesswork:

1. Before the provider starts, the engine records the step's *automation launch*
   (`begin_step`: launch id, run, step, provider, cwd) and puts the launch id into the
   provider's environment as ``WARDIAN_AUTOMATION_STEP`` (`ENV_AUTOMATION_STEP`). An agent-
   assigned step reuses its step launch's id (``WARDIAN_LAUNCH_ID``).
2. When the host runs Wardian's installed hooks inside that provider (they inherit its
   environment), the hook sees the variable: it records the session id and transcript path
   the host reports as the launch's own (`record_transcript`, source ``hook``) and does
   nothing else: no startup recall into the curator, no session-close event, no sweep.
   This happens at SessionStart, so it holds even when the engine dies mid-step.
3. When the step ends, however it ends, the engine records what the adapter reported: the
   session id and the transcript path (`end_step`, source ``adapter``).
   When the engine itself dies mid-step (SIGKILL, OOM, a crash) it records nothing; on
   Linux the provider's supervisor, ending the provider's tree, first writes the
   transcript files the provider held open into the launch's *held record*
   (`held_record_path`; Codex keeps its rollout open from session start, also before it
   printed ``thread.started``), and the next recovery sweep adopts it
   (`adopt_held_records`, source ``supervisor``) before it looks at any transcript. This
   needs no hook on the machine. (A step ended by timeout or cancel gets a record too;
   `end_step` adopts it at once.)
4. Recovery (`wardian.runtime.recovery`) skips a transcript whose path or host session id
   is recorded here (`is_automation_transcript`).

Nothing is matched by time, cwd or prompt text, so a session the user ran themselves —
even ``codex exec`` in the same workspace at the same minute — is still recovered.

Spec: docs/hosts.md.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import utc_now_iso
from wardian.config import data_dir, state_db_path

__all__ = [
    "ENV_AUTOMATION_STEP",
    "adopt_held_records",
    "begin_step",
    "end_step",
    "held_record_path",
    "is_automation_transcript",
    "record_transcript",
]

ENV_AUTOMATION_STEP = "WARDIAN_AUTOMATION_STEP"
"""Set in an automation step's provider environment: the step's automation launch id."""

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_automation_sessions", """
    CREATE TABLE automation_launches (
        launch_id TEXT PRIMARY KEY,
        run_id TEXT,
        step_id TEXT,
        provider TEXT,
        cwd TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT
    );
    CREATE TABLE automation_transcripts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        launch_id TEXT NOT NULL,
        host TEXT,
        session_id TEXT,
        transcript_path TEXT,
        source TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    );
    CREATE INDEX automation_transcripts_path ON automation_transcripts (transcript_path);
    CREATE INDEX automation_transcripts_session ON automation_transcripts (session_id);
    """),
]


def _conn(path: Path | None = None) -> sqlite3.Connection:
    """The state file's one connection (its `StateDB`'s; never closed here)."""
    db = StateDB.open(path or state_db_path())
    db.require("automation_sessions", _MIGRATIONS)
    return db.conn


def _absolute(path: str | None) -> str | None:
    return os.path.abspath(path) if path else None


def begin_step(launch_id: str, *, run_id: str | None, step_id: str | None,
               provider: str | None, cwd: str | None) -> None:
    """Record that automation launch `launch_id` starts (before its provider does).

    Args:
        launch_id: the value given to the provider as ``WARDIAN_AUTOMATION_STEP``.
        run_id, step_id: the run and step. provider: the adapter name. cwd: where the
            provider runs (None: a scratch directory).
    """
    conn = _conn()
    with atomic(conn):
        conn.execute(
            "INSERT INTO automation_launches (launch_id, run_id, step_id, provider, cwd,"
            " started_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (launch_id) DO NOTHING",
            (launch_id, run_id, step_id, provider, cwd, utc_now_iso()))


def record_transcript(launch_id: str, *, host: str | None, session_id: str | None,
                      transcript_path: str | None, source: str) -> bool:
    """Remember a session (id and/or transcript path) as automation launch `launch_id`'s
    own. Returns False (nothing written) when neither is given. `source`: ``hook`` or
    ``adapter``. A launch id that was never begun is still recorded: the variable is only
    ever set by the engine, and a record too many only keeps a curator call out of memory."""
    path = _absolute(transcript_path)
    if not session_id and not path:
        return False
    conn = _conn()
    with atomic(conn):
        conn.execute(
            "INSERT INTO automation_transcripts (launch_id, host, session_id, transcript_path,"
            " source, recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
            (launch_id, host, session_id or None, path, source, utc_now_iso()))
    return True


def end_step(launch_id: str, *, host: str | None = None, session_id: str | None = None,
             transcript_path: str | None = None) -> None:
    """Record the end of automation launch `launch_id` and the session its adapter reported
    (either may be None: a provider without transcripts, or a call that failed early)."""
    record_transcript(launch_id, host=host, session_id=session_id,
                      transcript_path=transcript_path, source="adapter")
    adopt_held_records(launch_id)  # what its supervisor wrote when the call was ended
    conn = _conn()
    with atomic(conn):
        conn.execute("UPDATE automation_launches SET ended_at = ? WHERE launch_id = ?",
                     (utc_now_iso(), launch_id))


HELD_DIR = "automation-held"
"""The data directory's folder of held records (`held_record_path`)."""


def held_record_path(launch_id: str) -> Path:
    """The file the provider supervisor of automation launch `launch_id` writes if the
    engine dies mid-call: JSON ``{"paths": [...]}``, the transcripts the provider held open
    (`wardian.providers.supervisor.HeldRecord`). Nothing is created here."""
    return data_dir() / HELD_DIR / f"{launch_id}.json"


def adopt_held_records(launch_id: str | None = None) -> int:
    """Record the transcripts named by held records (of `launch_id`, default every launch's)
    as their launch's own (source ``supervisor``) and delete the records. `end_step` adopts
    its launch's; the recovery sweep adopts what engines that died left, before it looks
    at any transcript. Returns how many transcripts were recorded.

    A record that cannot be read as one (not JSON, no list of paths) is deleted unrecorded:
    the supervisor replaces a record whole, so only a foreign file looks like that. One
    that cannot be read at all (an I/O or permission error, a folder of that name) is left
    for a later sweep.

    Raises:
        StoreError: the state database cannot be written (the records stay for the next
            sweep, which then fails closed in the same way).
    """
    import json

    folder = data_dir() / HELD_DIR
    try:
        records = [held_record_path(launch_id)] if launch_id else sorted(folder.glob("*.json"))
    except OSError:
        return 0
    recorded = 0
    for record in records:
        try:
            text = record.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue  # none (the usual case of one launch), or another sweep took it
        except OSError:
            # Unreadable now (a folder of that name, no permission, an I/O error): left
            # for a later sweep, never deleted unread, and no reason to fail the sweep.
            continue
        try:
            paths = json.loads(text).get("paths")
        except (ValueError, AttributeError):
            paths = None
        for path in paths if isinstance(paths, list) else []:
            if isinstance(path, str) and record_transcript(
                    record.stem, host=None, session_id=None, transcript_path=path,
                    source="supervisor"):
                recorded += 1
        record.unlink(missing_ok=True)
    return recorded


def is_automation_transcript(path: str, session_ids: Iterable[str | None] = (), *,
                             conn: sqlite3.Connection | None = None) -> bool:
    """Whether the transcript at `path` (absolute), or a session with one of `session_ids`,
    was produced by an automation step. Read-only."""
    conn = conn or _conn()
    if conn.execute("SELECT 1 FROM automation_transcripts WHERE transcript_path = ? LIMIT 1",
                    (os.path.abspath(path),)).fetchone():
        return True
    for session in session_ids:
        if session and conn.execute(
                "SELECT 1 FROM automation_transcripts WHERE session_id = ? LIMIT 1",
                (session,)).fetchone():
            return True
    return False
