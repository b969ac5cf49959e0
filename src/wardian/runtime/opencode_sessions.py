"""opencode sessions as transcript files Wardian's archive and recovery read.

opencode keeps its sessions in its own SQLite database, not in a file per session, while a
session close names a transcript file (archived, hashed and compared by size and time).
So each opencode session is exported, read-only, from that database
(`wardian.transcripts.opencode.export_session`) into
``<data dir>/transcripts/opencode/<session id>.jsonl``, whose modification time is the
session's last update in opencode: the file changes exactly when the session did.

* the SessionEnd hook (Wardian's opencode plugin, when opencode exits) exports the session
  it closes and names that file;
* recovery exports every top-level session (not a sub-agent's) whose directory is inside
  the agent's workspace, so sessions that ran with no plugin installed, or whose opencode
  was killed, are recorded at the next start.

Spec: docs/hosts.md (opencode).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from wardian.errors import ValidationError

__all__ = ["export", "export_path", "workspace_sessions"]

_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def _export_dir() -> Path:
    from wardian.config import data_dir

    return data_dir() / "transcripts" / "opencode"


def export_path(session_id: str) -> Path:
    """Where the export of opencode session `session_id` lives (whether or not it exists).

    Raises:
        ValidationError: `session_id` is not an opencode session id (letters, digits,
            ``_`` and ``-``, at most 128), so no path outside the folder can be named.
    """
    if not _SESSION_ID.match(session_id):
        raise ValidationError(f"{session_id[:80]!r} is not an opencode session id",
                              path="session_id", hint="opencode ids look like ses_…")
    return _export_dir() / f"{session_id}.jsonl"


def export(session_id: str, *, db: Path | None = None, updated_ms: int | None = None) -> Path:
    """Export opencode session `session_id` from `db` (default opencode's database) to
    `export_path`, replacing the file atomically (mode 0600); its modification time is
    `updated_ms` (the session's last update, ms since the epoch) when given. Returns the
    path.

    Raises:
        ValidationError: a bad session id. TranscriptNotFound: no database or no such
            session (`wardian.transcripts.opencode`).
    """
    from wardian.transcripts.opencode import default_db_path, export_session

    path = export_path(session_id)
    text = export_session(db or default_db_path(), session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    if updated_ms is not None:
        os.utime(tmp, ns=(updated_ms * 1_000_000, updated_ms * 1_000_000))
    os.replace(tmp, path)
    return path


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def workspace_sessions(workspace: str, *, db: Path | None = None) -> Iterator[Path]:
    """The exports of opencode's top-level sessions whose directory is inside `workspace`
    (absolute), each exported again only when the session changed since (its last update
    differs from the file's time). Sessions that cannot be exported are left out; no
    database yields nothing. Reads opencode's database only."""
    from wardian.errors import WardianError
    from wardian.transcripts.opencode import default_db_path, list_sessions

    source = db or default_db_path()
    if not source.is_file():
        return
    try:
        sessions = list_sessions(source)
    except (WardianError, OSError):
        return
    for session in sessions:
        if session.parent_id or not session.directory:
            continue
        if not _within(os.path.realpath(session.directory), workspace):
            continue
        try:
            path = export_path(session.id)
            updated_ns = int(session.time_updated) * 1_000_000
            if not (path.is_file() and path.stat().st_mtime_ns == updated_ns):
                export(session.id, db=source, updated_ms=int(session.time_updated))
        except (WardianError, OSError, ValueError):
            continue
        yield path
