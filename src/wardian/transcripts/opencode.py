"""opencode sessions (SQLite, `$XDG_DATA_HOME/opencode/opencode.db`) → Conversation.

opencode keeps no transcript file: its sessions live in the tables `session`, `message`
(`data` JSON: role, modelID, agent, time…) and `part` (`data` JSON discriminated by
`type`). `export_session` reads one session, read-only, into the Wardian "opencode"
transcript shape, JSONL text that `load_transcript` (format "opencode") reads back:

* line 1: ``{"opencode_session": {id, directory, title, version, parent_id, time_created,
  time_updated, parts_omitted}}``;
* then one line per part, in message order (message time, message id) then part order
  (part time, part id): ``{"opencode_part": <part data>, "part_id", "message_id", "role",
  "agent", "model", "time"}`` (times in ms since the epoch; `model` the message's model
  id or null; `opencode_part` null when the stored part data is not JSON).

`parse_opencode` keeps text parts (user text classified like every other format's; a
`synthetic` user part is `injected`; an assistant text of the `compaction` agent is a
`compaction`), tool parts (a tool call, then its output, or its error; a refused permission
or dismissed question is a `tool_rejection`; a `question` answer is the user's `answer`),
user `file` and `subtask` parts (as `injected`). Dropped: `reasoning`, `step-start`,
`step-finish`, `snapshot`, `patch`, `agent`, `retry`, `compaction` markers.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from wardian.transcripts._build import Builder, json_objects
from wardian.transcripts.classify import classify_user_text
from wardian.transcripts.errors import TranscriptFormatError, TranscriptNotFound
from wardian.transcripts.models import Conversation

__all__ = [
    "BUSY_TIMEOUT_S",
    "MAX_PARTS",
    "MAX_PART_BYTES",
    "OpencodeSession",
    "default_db_path",
    "export_session",
    "list_sessions",
    "parse_opencode",
]

MAX_PARTS = 20_000
"""At most this many parts of one session are exported (the first ones, in order); the
header's `parts_omitted` counts the rest."""
MAX_PART_BYTES = 256 * 1024
"""A part whose stored JSON is larger than this (UTF-8 bytes) is not read whole: only its
type, tool, call id, status, small input, and its text, output and error (each cut to its
head and tail, `_KEEP_CHARS` characters in all) are exported, with `oversized_bytes` set to
its size."""
BUSY_TIMEOUT_S = 5.0
"""How long a read waits for a lock held by a running opencode, in seconds."""
_KEEP_CHARS = 32 * 1024
_INPUT_KEYS = ("command", "filePath", "path", "pattern", "url", "query", "description",
               "prompt")
"""Keys of an oversized part's tool input that are kept (each cut to `_KEEP_CHARS`)."""
_REJECTIONS = (
    "The user rejected permission to use this specific tool call",
    "The user dismissed this question",
    "QuestionRejectedError",
)
"""Tool errors opencode writes when the user refuses a call or dismisses a question."""
_SKIPPED = frozenset(
    {"reasoning", "step-start", "step-finish", "snapshot", "patch", "agent", "retry",
     "compaction"})


class OpencodeSession(NamedTuple):
    """One session row: its id, working directory, parent session (a subagent's) or None,
    and last update (ms since the epoch)."""

    id: str
    directory: str
    parent_id: str | None
    time_updated: int


def default_db_path(env: Mapping[str, str] | None = None) -> Path:
    """Where opencode keeps its database: ``$XDG_DATA_HOME/opencode/opencode.db``, else
    ``$HOME/.local/share/opencode/opencode.db`` (`env` defaults to the process's; a
    relative XDG_DATA_HOME is ignored, as the XDG spec says). ``OPENCODE_DB`` moves it, as
    opencode reads it: an absolute path as it is, a relative one inside that folder."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_DATA_HOME") or ""
    if xdg and Path(xdg).is_absolute():
        data = Path(xdg)
    else:
        home = env.get("HOME")
        data = (Path(home) if home else Path.home()) / ".local" / "share"
    override = env.get("OPENCODE_DB") or ""
    if override and override != ":memory:":
        return Path(override) if Path(override).is_absolute() else data / "opencode" / override
    return data / "opencode" / "opencode.db"


def _connect(db: Path) -> sqlite3.Connection:
    """Open `db` read-only; never creates it nor writes to it.

    A WAL database whose ``-wal`` file is absent has no open connection (SQLite removes that
    file when the last connection closes): it is opened immutable, so that no
    ``-wal``/``-shm`` file is created beside it. Otherwise it is opened ``mode=ro`` and sees
    what a running opencode has committed.

    Raises:
        TranscriptNotFound: `db` is not a readable file.
    """
    try:
        with db.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise TranscriptNotFound(
            f"cannot read opencode database {db}: {exc.strerror or exc}",
            hint="check the path (opencode keeps it in $XDG_DATA_HOME/opencode/opencode.db)",
        ) from exc
    wal_mode = len(header) >= 20 and header[18] == 2
    quiescent = wal_mode and not Path(f"{db}-wal").exists()
    uri = f"file:{quote(str(db))}?mode=ro" + ("&immutable=1" if quiescent else "")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise TranscriptNotFound(f"cannot open opencode database {db}: {exc}") from exc
    return conn


def _not_opencode(db: Path, exc: sqlite3.Error) -> TranscriptFormatError:
    return TranscriptFormatError(
        f"{db} is not a readable opencode database ({exc})",
        hint="pass the opencode.db that opencode itself writes",
    )


def list_sessions(db: Path, *, directory: str | None = None) -> list[OpencodeSession]:
    """The sessions in opencode database `db`, oldest update first.

    Archived sessions (opencode sets `time_archived`) are left out; `directory` keeps only
    the sessions run in that directory (compared as stored, an absolute path).

    Raises:
        TranscriptNotFound: `db` cannot be read.
        TranscriptFormatError: `db` has no opencode `session` table.
    """
    conn = _connect(db)
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(session)")}
        where = ["time_archived IS NULL"] if "time_archived" in columns else []
        params: list[Any] = []
        if directory is not None:
            where.append("directory = ?")
            params.append(directory)
        sql = "SELECT id, directory, parent_id, time_updated FROM session"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = conn.execute(sql + " ORDER BY time_updated, id", params).fetchall()
    except sqlite3.Error as exc:
        raise _not_opencode(db, exc) from exc
    finally:
        conn.close()
    return [OpencodeSession(str(r[0]), str(r[1] or ""), r[2], int(r[3] or 0)) for r in rows]


def _cut(expr: str) -> str:
    """SQL: the string `expr` whole up to `_KEEP_CHARS`, else its head and tail."""
    head, tail = _KEEP_CHARS * 3 // 4, _KEEP_CHARS // 4
    return (f"CASE WHEN length({expr}) > {_KEEP_CHARS} THEN substr({expr}, 1, {head}) "
            f"|| char(10) || '[… cut …]' || char(10) || substr({expr}, -{tail}) "
            f"ELSE {expr} END")


def _field(path: str) -> str:
    return f"json_extract(p.data, '$.{path}')"


_SMALL_INPUT = (
    f"CASE WHEN json_type(p.data, '$.state.input') = 'object' "
    f"AND length({_field('state.input')}) <= {_KEEP_CHARS} THEN json({_field('state.input')}) "
    "ELSE json_object("
    + ", ".join(f"'{key}', {_cut(_field(f'state.input.{key}'))}" for key in _INPUT_KEYS)
    + ") END"
)
_SIZE = "length(CAST(p.data AS BLOB))"
_PART_DATA = f"""CASE
  WHEN {_SIZE} <= {MAX_PART_BYTES} THEN p.data
  WHEN NOT json_valid(p.data) THEN json_object('oversized_bytes', {_SIZE})
  ELSE json_object(
    'type', {_field('type')},
    'synthetic', {_field('synthetic')},
    'filename', {_cut(_field('filename'))},
    'text', {_cut(_field('text'))},
    'tool', {_field('tool')},
    'callID', {_field('callID')},
    'state', json_object(
      'status', {_field('state.status')},
      'input', {_SMALL_INPUT},
      'output', {_cut(_field('state.output'))},
      'error', {_cut(_field('state.error'))}),
    'oversized_bytes', {_SIZE})
END"""
_MSG = "CASE WHEN json_valid(m.data) THEN json_extract(m.data, '{path}') END"
_PARTS_SQL = f"""
SELECT p.id, p.message_id, p.time_created, {_PART_DATA},
       {_MSG.format(path='$.role')}, {_MSG.format(path='$.agent')},
       coalesce({_MSG.format(path='$.modelID')}, {_MSG.format(path='$.model.modelID')})
FROM part AS p JOIN message AS m ON m.id = p.message_id
WHERE p.session_id = ?
ORDER BY m.time_created, m.id, p.time_created, p.id
LIMIT {MAX_PARTS}
"""


def export_session(db: Path, session_id: str) -> str:
    """Session `session_id` of opencode database `db` as "opencode" transcript JSONL text.

    The database is opened read-only (see the module docstring for the shape; at most
    `MAX_PARTS` parts, each read up to `MAX_PART_BYTES`). Nothing is written.

    Raises:
        TranscriptNotFound: `db` cannot be read, or holds no session `session_id`.
        TranscriptFormatError: `db` is not an opencode database.
    """
    conn = _connect(db)
    try:
        head = conn.execute(
            "SELECT id, directory, title, version, parent_id, time_created, time_updated "
            "FROM session WHERE id = ?",
            (session_id,),
        ).fetchone()
        if head is None:
            raise TranscriptNotFound(
                f"no opencode session {session_id!r} in {db}",
                hint="list the sessions with list_sessions",
            )
        rows = conn.execute(_PARTS_SQL, (session_id,)).fetchall()
        total = conn.execute(
            "SELECT count(*) FROM part WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
    except sqlite3.Error as exc:
        raise _not_opencode(db, exc) from exc
    finally:
        conn.close()
    keys = ("id", "directory", "title", "version", "parent_id", "time_created", "time_updated")
    session = dict(zip(keys, head, strict=True))
    session["parts_omitted"] = max(0, int(total) - len(rows))
    lines = [json.dumps({"opencode_session": session}, ensure_ascii=False)]
    for part_id, message_id, time, data, role, agent, model in rows:
        try:
            part = json.loads(data)
        except (TypeError, ValueError):
            part = None
        lines.append(json.dumps(
            {"opencode_part": part, "part_id": part_id, "message_id": message_id,
             "role": role, "agent": agent, "model": model, "time": time},
            ensure_ascii=False,
        ))
    return "\n".join(lines) + "\n"


def parse_opencode(lines: list[str]) -> Conversation:
    """Normalise "opencode" transcript lines (`export_session` output); lines that are not
    JSON objects, and parts that are not objects, are counted as malformed."""
    conv = Conversation(provider="opencode")
    out = Builder()
    models: list[str] = []
    for _, rec in json_objects(lines, conv):
        head = rec.get("opencode_session")
        if isinstance(head, dict):
            conv.session_id = conv.session_id or _str(head.get("id"))
            conv.cwd = conv.cwd or _str(head.get("directory"))
            for key in ("title", "version", "parent_id"):
                if _str(head.get(key)):
                    conv.meta[key] = head[key]
            if head.get("parts_omitted"):
                conv.meta["parts_omitted"] = head["parts_omitted"]
            continue
        part = rec.get("opencode_part")
        if not isinstance(part, dict):
            conv.malformed_lines += 1
            continue
        model = _str(rec.get("model"))
        if model and rec.get("role") == "assistant" and model not in models:
            models.append(model)
        try:
            _part(out, rec, part)
        except (AttributeError, TypeError, KeyError):
            conv.malformed_lines += 1
    conv.messages = out.messages
    conv.meta["format"] = "opencode"
    if models:
        conv.meta["models"] = models
    return conv


def _part(out: Builder, rec: dict[str, Any], part: dict[str, Any]) -> None:
    ptype = part.get("type")
    if ptype in _SKIPPED:
        return
    role = rec.get("role")
    ts = _iso(rec.get("time"))
    meta: dict[str, Any] = {}
    if _str(rec.get("message_id")):
        meta["message_id"] = rec["message_id"]
    if role == "assistant" and _str(rec.get("model")):
        meta["model"] = rec["model"]
    if part.get("oversized_bytes"):
        meta["oversized_bytes"] = part["oversized_bytes"]
    if ptype == "text":
        text = str(part.get("text") or "")
        if role == "user":
            kind = "injected" if part.get("synthetic") else classify_user_text(text)
            out.add("user", kind, text, ts, meta)
        elif role == "assistant":
            kind = "compaction" if rec.get("agent") == "compaction" else "text"
            out.add("assistant", kind, text, ts, meta)
    elif ptype == "tool":
        _tool(out, part, ts, meta)
    elif ptype == "file" and role == "user":
        name = part.get("filename") or part.get("url") or "file"
        out.add("user", "injected", f"[file {name}]", ts, meta)
    elif ptype == "subtask" and role == "user":
        out.add("user", "injected", str(part.get("prompt") or ""), ts,
                {**meta, "agent": part.get("agent")})


def _tool(out: Builder, part: dict[str, Any], ts: str | None, meta: dict[str, Any]) -> None:
    name = str(part.get("tool") or "tool")
    raw = part.get("state")
    state: dict[str, Any] = raw if isinstance(raw, dict) else {}
    call = {**meta, "call_id": part.get("callID")}
    out.tool_call(name, state.get("input"), ts, call)
    status = state.get("status")
    if status == "completed":
        text = str(state.get("output") or "")
        if name == "question":
            out.add("user", "answer", text, ts, call)
        else:
            out.tool_result(text, ts, "tool_result", call)
    elif status == "error":
        text = str(state.get("error") or "")
        rejected = any(marker in text for marker in _REJECTIONS)
        out.tool_result(text, ts, "tool_rejection" if rejected else "tool_result",
                        {**call, "is_error": True})


def _iso(ms: Any) -> str | None:
    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return None
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
