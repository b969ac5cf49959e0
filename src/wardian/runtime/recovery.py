"""Recovery: record the agent's earlier sessions that no hook reported.

Hosts fire no session-end hook when the terminal is closed or the process is killed;
Codex before 0.145.0 has none at all and Gemini does not wait for its own (docs/hosts.md).
So at every SessionStart hook, at every ``wardian agent launch``/``agent exec`` start (a
*request* is queued and the detached drain worker sweeps) and in ``wardian session
recover``, Wardian looks at the transcripts of the agent's workspaces:

* Claude Code: ``$CLAUDE_CONFIG_DIR|~/.claude/projects/<cwd, non-alphanumerics as ->/*.jsonl``
* Codex: ``$CODEX_HOME|~/.codex/sessions/**/rollout-*.jsonl`` whose ``session_meta`` cwd is
  in the workspace;
* Gemini CLI: ``$GEMINI_CLI_HOME|~/.gemini/tmp/<project>/chats/*.json`` and ``*.jsonl``,
  where ``<project>`` is the folder the CLI's project registry names for the workspace
  (``~/.gemini/projects.json``, or the folder's ``.project_root`` marker naming the
  workspace or a folder inside it; CLI 0.61) or, for older CLIs, the hex SHA-256 of the
  workspace path. A ``.json`` session the CLI has since continued as ``.jsonl`` (it does so
  on resume) is read from the ``.jsonl`` only.
* opencode: the top-level sessions in its database (``$XDG_DATA_HOME|~/.local/share/
  opencode/opencode.db``) whose directory is in the workspace, each exported to a file
  (`wardian.runtime.opencode_sessions`).

A transcript is *unreported* when it holds messages past what the agent's archive holds
from it (`ArchiveStore.held_count`) and no pending event names it; each becomes one
session-close event with boundary ``recovered`` and session id ``<session>@<messages>``:
a session closed by its hook (and archived) is never recovered again, and a session that
grew afterwards is recovered once for its new part. A transcript another agent's archive
or events already claim is left to that agent, and one that Wardian's own automation step
produced (a curator's provider call, `wardian.runtime.automation_sessions`) is never a
session at all. Unchanged files are skipped cheaply (size
and mtime marks). Needs ``conversation_logging.enabled`` for the agent: without an archive
there is nothing to compare with. Never runs inside a hook (hooks only queue a request).

Spec: docs/hosts.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import utc_now_iso
from wardian.config import state_db_path

__all__ = [
    "RECOVERED",
    "RecoveryReport",
    "candidate_transcripts",
    "claude_project_dir",
    "request_recovery",
    "sweep",
]

RECOVERED = "recovered"
"""The boundary of a session-close event recorded by recovery."""

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_recovery_requests", """
    CREATE TABLE recovery_requests (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL,
        workspace TEXT,
        exclude_path TEXT,
        requested_at TEXT NOT NULL
    );
    CREATE TABLE transcript_marks (
        agent_id TEXT NOT NULL,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        checked_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, path)
    );
    """),
]


def _conn(state: StateDB | None = None) -> sqlite3.Connection:
    """The connection of the open state database `state` (default: the installation's),
    with the recovery tables migrated; never closed here."""
    db = state or StateDB.open(state_db_path())
    db.require("recovery", _MIGRATIONS)
    return db.conn


def request_recovery(agent_id: str, workspace: str | None = None, *,
                     exclude_path: str | None = None, state: StateDB | None = None) -> None:
    """Queue a sweep of `agent_id`'s sessions in `workspace` for the next drain worker
    (one INSERT; the caller starts the worker). `exclude_path` is the live session's own
    transcript, which is not a past session. `state`: the open state database (default:
    the installation's)."""
    conn = _conn(state)
    with atomic(conn):
        conn.execute(
            "INSERT INTO recovery_requests (agent_id, workspace, exclude_path,"
            " requested_at) VALUES (?, ?, ?, ?)",
            (agent_id, workspace, exclude_path, utc_now_iso()))


def has_requests(state: StateDB | None = None) -> bool:
    """Whether a recovery request is queued in the open state database `state` (default:
    the installation's). Read-only."""
    conn = _conn(state)
    return conn.execute("SELECT 1 FROM recovery_requests LIMIT 1").fetchone() is not None


def claude_project_dir(workspace: str) -> Path:
    """Where Claude Code keeps the transcripts of sessions started in `workspace`."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    root = Path(base) if base else Path.home() / ".claude"
    return root / "projects" / re.sub(r"[^A-Za-z0-9]", "-", workspace)


def _codex_sessions() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "sessions"


_MARKER_BYTES = 4096
"""The most read of a Gemini ``.project_root`` marker or looked at in ``projects.json``'s
entries (a path), bytes."""
_REGISTRY_BYTES = 4 << 20
"""The largest Gemini ``projects.json`` read, bytes (a larger one is not consulted)."""


def _gemini_root() -> Path:
    base = os.environ.get("GEMINI_CLI_HOME")
    return (Path(base) if base else Path.home()) / ".gemini"


def _gemini_chats(workspace: str) -> list[Path]:
    """The ``chats`` folders of Gemini CLI sessions started in `workspace` (or inside it).
    Read-only; bounded reads; unreadable registry entries are ignored."""
    root = _gemini_root()
    tmp = root / "tmp"
    found = [tmp / hashlib.sha256(workspace.encode("utf-8")).hexdigest()]
    try:
        registry = root / "projects.json"
        if registry.is_file() and registry.stat().st_size <= _REGISTRY_BYTES:
            projects = json.loads(registry.read_text(encoding="utf-8")).get("projects")
            for path, slug in (projects.items() if isinstance(projects, dict) else ()):
                if (isinstance(path, str) and isinstance(slug, str) and slug
                        and "/" not in slug and slug not in {".", ".."}
                        and _within(os.path.realpath(path), workspace)):
                    found.append(tmp / slug)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        folders = sorted(tmp.iterdir()) if tmp.is_dir() else []
    except OSError:
        folders = []
    for folder in folders:
        try:
            with (folder / ".project_root").open("rb") as handle:
                owner = handle.read(_MARKER_BYTES).decode("utf-8", "replace").strip()
        except OSError:
            continue
        if owner and _within(os.path.realpath(owner), workspace):
            found.append(folder)
    return [f / "chats" for f in dict.fromkeys(found)]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _codex_cwd(path: Path) -> str | None:
    """The cwd a rollout's first line (``session_meta``) names, reading one line only."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1 << 20)
        record = json.loads(first)
    except (OSError, ValueError):
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None


def candidate_transcripts(workspace: str) -> Iterator[tuple[str, Path]]:
    """``(host, path)`` of every transcript of sessions started in `workspace` (absolute).
    Read-only on the hosts' files (opencode's sessions are exported from its database into
    Wardian's data dir, `wardian.runtime.opencode_sessions`); missing folders yield
    nothing."""
    project = claude_project_dir(workspace)
    if project.is_dir():
        for path in sorted(project.glob("*.jsonl")):
            yield "claude-code", path
    sessions = _codex_sessions()
    if sessions.is_dir():
        for path in sorted(sessions.glob("**/rollout-*.jsonl")):
            cwd = _codex_cwd(path)
            if cwd and _within(os.path.realpath(cwd), workspace):
                yield "codex", path
    for chats in _gemini_chats(workspace):
        if not chats.is_dir():
            continue
        try:
            names = {p.name for p in chats.iterdir() if p.suffix in {".json", ".jsonl"}}
        except OSError:
            continue
        for name in sorted(names):
            if name.endswith(".json") and f"{name}l" in names:
                continue  # continued as JSONL: the .jsonl holds the whole session
            path = chats / name
            if path.is_file():
                yield "gemini", path
    from wardian.runtime.opencode_sessions import workspace_sessions

    for path in workspace_sessions(workspace):
        yield "opencode", path


@dataclass
class RecoveryReport:
    """What one sweep did: events recorded (with their transcripts) and files looked at."""

    recorded: list[dict[str, Any]] = field(default_factory=list)
    checked: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        """Count a transcript left alone, by reason."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"recorded": self.recorded, "checked": self.checked, "skipped": self.skipped}


def _workspaces(conn: sqlite3.Connection, agent: Any) -> list[str]:
    """The agent's workspace and every workspace its sessions reported."""
    found = [agent.workspace] if agent.workspace else []
    try:
        rows = conn.execute("SELECT DISTINCT workspace FROM session_events WHERE agent_id = ?"
                            " AND workspace IS NOT NULL", (agent.id,)).fetchall()
    except sqlite3.OperationalError:
        rows = []
    found += [r[0] for r in rows]
    return list(dict.fromkeys(os.path.realpath(w) for w in found))


def _claimed_elsewhere(conn: sqlite3.Connection, agent_id: str, path: str) -> bool:
    """Another agent's events or archive already name this transcript."""
    for sql in ("SELECT 1 FROM session_events WHERE transcript_path = ? AND agent_id != ?"
                " LIMIT 1",
                "SELECT 1 FROM conversations WHERE source_path = ? AND agent_id != ? LIMIT 1"):
        try:
            if conn.execute(sql, (path, agent_id)).fetchone():
                return True
        except sqlite3.OperationalError:
            continue
    return False


def _pending_for(conn: sqlite3.Connection, agent_id: str, path: str) -> bool:
    try:
        return conn.execute(
            "SELECT 1 FROM session_events WHERE agent_id = ? AND transcript_path = ?"
            " AND status = 'pending' LIMIT 1", (agent_id, path)).fetchone() is not None
    except sqlite3.OperationalError:
        return False


AUTOMATION_SKIP = "an automation step's own session"
"""Skip reason of a transcript a Wardian automation step produced (never an agent's)."""

_UUID_TAIL = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                        r"[0-9a-fA-F]{12}$")


def _host_session_ids(host: str, path: Path, conv: Any) -> list[str]:
    """The host's session ids of a transcript: its own (``sessionId``, Codex
    ``session_meta.id``), and the one its file name carries (Claude Code names the file
    after the session; a Codex rollout ends with its thread id)."""
    found = [str(conv.session_id)] if getattr(conv, "session_id", None) else []
    if host == "claude-code":
        found.append(path.stem)
    tail = _UUID_TAIL.search(path.stem)
    if tail:
        found.append(tail.group(0))
    return list(dict.fromkeys(found))


def _sweep_agent(conn: sqlite3.Connection, agent: Any, workspaces: list[str],
                 exclude: set[str], report: RecoveryReport, *, start_drain: bool) -> None:
    from wardian.config import SettingsStore, open_state_db
    from wardian.runtime.archives import ArchiveStore
    from wardian.runtime.automation_sessions import is_automation_transcript
    from wardian.runtime.session_events import record_session_close
    from wardian.transcripts import detect_format, load_transcript

    state_db = open_state_db()
    settings = SettingsStore(state_db)
    if not settings.get("conversation_logging.enabled", agent_id=agent.id):
        report.skip("conversation logging disabled")
        return
    archives = ArchiveStore(state_db)
    for workspace in workspaces:
        for host, path in candidate_transcripts(workspace):
            source = str(path.absolute())
            report.checked += 1
            if source in exclude:
                report.skip("the live session")
                continue
            try:
                stat = path.stat()
            except OSError:
                report.skip("unreadable")
                continue
            mark = conn.execute(
                "SELECT size, mtime_ns FROM transcript_marks WHERE agent_id = ? AND"
                " path = ?", (agent.id, source)).fetchone()
            if mark is not None and (mark[0], mark[1]) == (stat.st_size, stat.st_mtime_ns):
                report.skip("unchanged since the last sweep")
                continue
            if _pending_for(conn, agent.id, source):
                report.skip("a pending event will archive it")
                continue
            if _claimed_elsewhere(conn, agent.id, source):
                report.skip("another agent's session")
                continue
            if is_automation_transcript(source):
                report.skip(AUTOMATION_SKIP)
                continue
            try:
                conv = load_transcript(path, fmt=detect_format(path))
            except Exception:  # a transcript we cannot read is not a session to recover
                report.skip("unreadable")
                continue
            if is_automation_transcript(source, _host_session_ids(host, path, conv)):
                report.skip(AUTOMATION_SKIP)  # named by its session id, not its path
                continue
            total = len(conv.messages)
            held = archives.held_count(agent.id, source)
            if total == 0 or held >= total:
                report.skip("already archived" if total else "no messages")
            else:
                # Claude Code names the file after the session (what its hooks report)
                session = (path.stem if host == "claude-code" else None) or \
                    conv.session_id or path.stem
                event_id = record_session_close(
                    agent.id, RECOVERED, session_id=f"{session}@{total}",
                    transcript_path=source, provider=host, workspace=workspace,
                    source="recovery", start_drain=start_drain)
                report.recorded.append({"event_id": event_id, "agent_id": agent.id,
                                        "host": host, "transcript_path": source,
                                        "messages": total, "already_archived": held})
            with atomic(conn):
                conn.execute(
                    "INSERT INTO transcript_marks (agent_id, path, size, mtime_ns,"
                    " checked_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id, path)"
                    " DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,"
                    " checked_at = excluded.checked_at",
                    (agent.id, source, stat.st_size, stat.st_mtime_ns, utc_now_iso()))


def sweep(*, agent_id: str | None = None, workspace: str | None = None,
          requests_only: bool = False, start_drain: bool = False) -> RecoveryReport:
    """Record every unreported session (module docstring) as a ``recovered`` event.

    Args:
        agent_id: only this agent (default: every agent).
        workspace: only this workspace (default: each agent's workspace and the ones its
            sessions reported).
        requests_only: sweep what queued requests ask for (and consume them) — the drain
            worker's mode; otherwise a full sweep (requests are consumed too).
        start_drain: start a drain worker for the recorded events (False inside one).
    """
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.automation_sessions import adopt_held_records

    # What a provider supervisor named when its engine died mid-step is the step's own
    # session: known before any transcript is looked at.
    adopt_held_records()
    conn = _conn()
    report = RecoveryReport()
    try:
        with atomic(conn):
            requests = conn.execute(
                "SELECT id, agent_id, workspace, exclude_path FROM recovery_requests"
                " ORDER BY id").fetchall()
            if requests:
                conn.execute("DELETE FROM recovery_requests WHERE id <= ?",
                             (requests[-1]["id"],))
        registry = AgentRegistry(open_state_db())
        agents = {a.id: a for a in registry.list()}
        plan: dict[str, tuple[list[str], set[str]]] = {}
        if requests_only:
            for req in requests:
                agent = agents.get(req["agent_id"])
                if agent is None or (agent_id and agent.id != agent_id):
                    continue
                spaces, exclude = plan.setdefault(agent.id, ([], set()))
                for space in ([req["workspace"]] if req["workspace"] else []) + \
                        _workspaces(conn, agent):
                    real = os.path.realpath(space)
                    if real not in spaces:
                        spaces.append(real)
                if req["exclude_path"]:
                    exclude.add(req["exclude_path"])
        else:
            for agent in agents.values():
                if agent_id and agent.id != agent_id:
                    continue
                spaces = [os.path.realpath(workspace)] if workspace else _workspaces(conn, agent)
                plan[agent.id] = (spaces, set())
        for aid, (spaces, exclude) in plan.items():
            _sweep_agent(conn, agents[aid], spaces, exclude, report, start_drain=start_drain)
    finally:
        del conn  # the connection belongs to the state file's StateDB
    return report
