"""Per-agent conversation archives (``state.db`` component ``archives``).

At session close, when ``conversation_logging.enabled`` is on for the agent, the session's
transcript is normalised by `wardian.transcripts.load_transcript` and stored as one
*conversation*: a manifest (agent, provider, session id, boundary, counts, source path and
SHA-256, malformed line count) plus its messages. Every message gets the next number of the
agent's **global** sequence, so a consolidation cursor ("consolidated up to seq N") reads
exactly what came after it with `ArchiveStore.slice`, across conversations and providers.

Importing is idempotent per session event (``event_id`` is unique), so a drain worker that
crashes mid-import and is restarted imports the conversation once. Secret values in the
messages are replaced by typed placeholders (``[REDACTED:aws-access-key]``, the shared
scanner `wardian.memory.secret_scan`) before anything is stored; the manifest counts them.
A transcript already archived for an earlier event of the agent (the same file closed
twice: a ``/clear`` inside ``wardian agent launch`` reported by the hook and again at the
launch's exit, a resumed session) adds only the messages it gained since, so no message
is archived — and consolidated — twice. Malformed transcript lines are counted, never fatal.

Spec: DESIGN.md "Invokers" (archive sequence range in the trigger input).
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import new_id, utc_now_iso
from wardian.errors import AmbiguousIdError, NotFoundError, WardianError, require_ref

if TYPE_CHECKING:
    from wardian.transcripts import Message

__all__ = [
    "ArchiveStore",
    "ConversationManifest",
    "TranscriptUnreadable",
    "redact_messages",
    "transcript_format",
]

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_conversations", """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        event_id TEXT UNIQUE,
        provider TEXT,
        session_id TEXT,
        boundary TEXT,
        cwd TEXT,
        source_path TEXT,
        source_sha256 TEXT,
        message_count INTEGER NOT NULL,
        malformed_lines INTEGER NOT NULL,
        counts_json TEXT NOT NULL,
        first_seq INTEGER,
        last_seq INTEGER,
        imported_at TEXT NOT NULL
    );
    CREATE INDEX conversations_agent ON conversations (agent_id, imported_at);
    CREATE TABLE archive_messages (
        agent_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        role TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        timestamp TEXT,
        meta_json TEXT NOT NULL,
        PRIMARY KEY (agent_id, seq)
    );
    CREATE INDEX archive_messages_conversation ON archive_messages (conversation_id, idx);
    """),
    # A transcript already archived for an earlier event contributes only what it gained
    # since: source_offset = how many of its messages earlier imports hold.
    NamedMigration("add_conversations_source_offset", """
    ALTER TABLE conversations ADD COLUMN source_offset INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX conversations_source ON conversations (agent_id, source_path);
    """),
    # Secrets are replaced by typed placeholders before a message is stored;
    # how many were replaced in this import.
    NamedMigration("add_conversations_secrets_redacted", """
    ALTER TABLE conversations ADD COLUMN secrets_redacted INTEGER NOT NULL DEFAULT 0;
    """),
]

_FORMATS = {
    "claude-code": "claude-code",
    "claude": "claude-code",
    "codex": "codex",
    "gemini": "gemini",
    "opencode": "opencode",
    "generic": "generic",
}


class TranscriptUnreadable(WardianError):
    """A transcript could not be read or parsed at all (missing, permissions, not text)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(
            f"cannot read transcript {path}: {reason}",
            hint="check the path the session reported, or pass --transcript PATH",
        )


def transcript_format(provider: str | None) -> str | None:
    """The `load_transcript` format for a provider name, or None to auto-detect."""
    return _FORMATS.get((provider or "").lower())


@dataclass(frozen=True)
class ConversationManifest:
    """One imported conversation.

    Attributes:
        id: UUID4. agent_id: whose archive. event_id: the session event it came from.
        provider, session_id, boundary, cwd: what the session reported / the transcript says.
        source_path, source_sha256: the imported file and its SHA-256 (hex).
        message_count, malformed_lines: counts; counts: messages per ``role:kind``.
        first_seq, last_seq: the agent-global sequence range (None when empty).
        imported_at: UTC ISO-8601 ``Z``.
        source_offset: messages of this transcript that earlier imports already hold
            (this conversation is the transcript's messages from there on).
        secrets_redacted: how many secret values in this import's messages were replaced
            by a ``[REDACTED:<kind>]`` placeholder before they were stored.
    """

    id: str
    agent_id: str
    event_id: str | None
    provider: str | None
    session_id: str | None
    boundary: str | None
    cwd: str | None
    source_path: str | None
    source_sha256: str | None
    message_count: int
    malformed_lines: int
    counts: dict[str, int]
    first_seq: int | None
    last_seq: int | None
    imported_at: str
    source_offset: int = 0
    secrets_redacted: int = 0

    def to_json(self) -> dict[str, Any]:
        """The manifest as a JSON-ready dict."""
        return asdict(self)


def redact_messages(messages: builtins.list[Message]) -> tuple[builtins.list[Message], list[int]]:
    """`messages` with secret values in text and meta replaced by typed placeholders
    (`wardian.memory.secret_scan.redact`), and how many were replaced in each."""
    from dataclasses import replace

    from wardian.memory.secret_scan import redact, redact_value

    out: builtins.list[Message] = []
    counts: builtins.list[int] = []
    for message in messages:
        text, found = redact(message.text)
        meta, in_meta = redact_value(message.meta or {})
        counts.append(len(found) + in_meta)
        out.append(replace(message, text=text, meta=meta) if counts[-1] else message)
    return out, counts


def _manifest(row: sqlite3.Row) -> ConversationManifest:
    data = dict(row)
    data["counts"] = json.loads(data.pop("counts_json"))
    return ConversationManifest(**data)


class ArchiveStore:
    """Conversations and their messages; a per-agent global message sequence.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("archives", _MIGRATIONS)
        self.conn: sqlite3.Connection = self.db.conn

    # --- import -------------------------------------------------------------------------

    def import_transcript(
        self,
        agent_id: str,
        path: str | Path,
        *,
        event_id: str | None = None,
        provider: str | None = None,
        session_id: str | None = None,
        boundary: str | None = None,
    ) -> ConversationManifest:
        """Normalise the transcript at `path` and append it to the agent's archive (atomic).

        Idempotent per `event_id`: a second import for the same event returns the first
        manifest and writes nothing. A file this agent's archive already holds (an earlier
        event imported it) adds only its messages beyond those (possibly none).

        Args:
            agent_id: the archive's owner.
            path: a Claude Code / Codex / Gemini / generic transcript.
            event_id: the session event this import belongs to.
            provider: picks the parser (None or unknown = auto-detect).
            session_id, boundary: recorded in the manifest (session id falls back to the
                transcript's own).

        Raises:
            TranscriptUnreadable: the file is missing, unreadable or not a transcript
                (the loader rejects it, or it yields no message and has malformed lines);
                nothing is imported.
        """
        if event_id is not None:
            existing = self._by_event(event_id)
            if existing is not None:
                return existing
        conv = self._load(path, provider)
        # Nothing secret is ever stored: values become typed placeholders first (and the
        # already-archived prefix is compared in this redacted form too).
        redacted_messages, redacted = redact_messages(conv.messages)
        source_path = str(getattr(conv, "source_path", None) or Path(path).absolute())
        conversation_id = new_id()
        with atomic(self.conn):
            if event_id is not None:
                existing = self._by_event(event_id)
                if existing is not None:
                    return existing
            offset = self._archived_prefix_in_transaction(
                agent_id, source_path, redacted_messages)
            messages = redacted_messages[offset:]
            count = sum(redacted[offset:])
            counts = Counter(f"{m.role}:{m.kind}" for m in messages)
            row = self.conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM archive_messages WHERE agent_id = ?",
                (agent_id,),
            ).fetchone()
            first = int(row[0]) + 1
            n = len(messages)
            self.conn.execute(
                "INSERT INTO conversations (id, agent_id, event_id, provider, session_id,"
                " boundary, cwd, source_path, source_sha256, message_count, malformed_lines,"
                " counts_json, first_seq, last_seq, imported_at, source_offset,"
                " secrets_redacted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conversation_id, agent_id, event_id,
                    getattr(conv, "provider", None) or provider,
                    session_id or getattr(conv, "session_id", None), boundary,
                    getattr(conv, "cwd", None), source_path,
                    getattr(conv, "source_sha256", None),
                    n, int(getattr(conv, "malformed_lines", 0) or 0),
                    json.dumps(dict(sorted(counts.items()))),
                    first if n else None, first + n - 1 if n else None, utc_now_iso(),
                    offset, count,
                ),
            )
            self.conn.executemany(
                "INSERT INTO archive_messages (agent_id, seq, conversation_id, idx, role, kind,"
                " text, timestamp, meta_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (agent_id, first + i, conversation_id, offset + i, m.role, m.kind, m.text,
                     m.timestamp, json.dumps(m.meta or {}, ensure_ascii=False, default=str))
                    for i, m in enumerate(messages)
                ],
            )
        return self.get(conversation_id)

    @staticmethod
    def _load(path: str | Path, provider: str | None) -> Any:
        from wardian.transcripts import load_transcript

        source = Path(path).expanduser()
        if not source.is_file():
            raise TranscriptUnreadable(str(source), "no such file")
        from wardian.transcripts import detect_format

        # The file's own content decides its format: a Codex rollout or a generic JSONL
        # closed for a `claude` agent was parsed as Claude Code and archived as 0 messages.
        # The provider is only the fallback for content detection cannot place.
        try:
            fmt: str | None = detect_format(source)
        except (WardianError, OSError, UnicodeDecodeError, ValueError):
            fmt = transcript_format(provider)
        try:
            conv = load_transcript(source, fmt=fmt)
        except WardianError as exc:
            raise TranscriptUnreadable(str(source), exc.message) from exc
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise TranscriptUnreadable(str(source), f"{type(exc).__name__}: {exc}") from exc
        malformed = int(getattr(conv, "malformed_lines", 0) or 0)
        if not conv.messages and malformed:
            # Parsed as the provider's format, every line was malformed (e.g. a markdown
            # file): not an empty conversation but no transcript at all. Auto-detection
            # says what was expected and what the file starts with.
            reason = (f"no messages and {malformed} malformed "
                      f"line{'' if malformed == 1 else 's'} as a {fmt or 'detected'} transcript")
            try:
                detect_format(source)
            except WardianError as exc:
                reason += f"; {exc.message}"
            except (OSError, UnicodeDecodeError, ValueError):
                pass
            raise TranscriptUnreadable(str(source), reason)
        return conv

    def _archived_prefix_in_transaction(
        self, agent_id: str, source_path: str, messages: builtins.list[Message]
    ) -> int:
        """How many leading `messages` the agent's archive already holds from this file.

        The latest import of `source_path` left the archive holding its first N messages
        (N = that import's ``source_offset + message_count``). They count as this
        transcript's first N only when it still has at least N messages and its message
        N-1 is the one archived at that position (same role and text); otherwise the file
        was replaced and is imported whole (0).
        """
        row = self.conn.execute(
            "SELECT source_offset + message_count FROM conversations"
            " WHERE agent_id = ? AND source_path = ? ORDER BY rowid DESC LIMIT 1",
            (agent_id, source_path),
        ).fetchone()
        held = int(row[0]) if row else 0
        if held == 0 or held > len(messages):
            return 0
        last = self.conn.execute(
            "SELECT m.role, m.text FROM archive_messages m JOIN conversations c"
            " ON c.id = m.conversation_id WHERE c.agent_id = ? AND c.source_path = ?"
            " AND m.idx = ? ORDER BY m.seq DESC LIMIT 1", (agent_id, source_path, held - 1),
        ).fetchone()
        boundary = messages[held - 1]
        if last is None or (last["role"], last["text"]) != (boundary.role, boundary.text):
            return 0
        return held

    def held_count(self, agent_id: str, source_path: str) -> int:
        """How many messages of the transcript at `source_path` the agent's archive holds
        (its latest import's offset + count; 0 = never imported). Read-only.

        Recovery (`wardian.runtime.recovery`) compares it with the transcript's message
        count: more messages in the file than held = messages past the archive."""
        row = self.conn.execute(
            "SELECT source_offset + message_count FROM conversations"
            " WHERE agent_id = ? AND source_path = ? ORDER BY rowid DESC LIMIT 1",
            (agent_id, source_path),
        ).fetchone()
        return int(row[0]) if row else 0

    def _by_event(self, event_id: str) -> ConversationManifest | None:
        row = self.conn.execute(
            "SELECT * FROM conversations WHERE event_id = ?", (event_id,)
        ).fetchone()
        return _manifest(row) if row else None

    # --- reading ------------------------------------------------------------------------

    def get(self, id_or_prefix: str) -> ConversationManifest:
        """A conversation by full id or unique prefix. Read-only.

        Raises:
            NotFoundError: nothing matches. AmbiguousIdError: the prefix matches several.
        """
        require_ref(id_or_prefix, "conversation id",
                    hint="list them with `wardian conversation list`")
        pattern = id_or_prefix.replace("%", "").replace("_", "") + "%"
        rows = self.conn.execute(
            "SELECT * FROM conversations WHERE lower(id) LIKE lower(?) ORDER BY id LIMIT 10",
            (pattern,)
        ).fetchall()
        exact = [r for r in rows if r["id"] == id_or_prefix]
        if exact:
            return _manifest(exact[0])
        if not rows or not id_or_prefix:
            raise NotFoundError(
                f"no conversation {id_or_prefix!r}",
                hint="list them with `wardian conversation list`",
            )
        if len(rows) > 1:
            raise AmbiguousIdError("conversation", id_or_prefix, [r["id"][:8] for r in rows])
        return _manifest(rows[0])

    def by_event(self, event_id: str) -> ConversationManifest | None:
        """The conversation imported for a session event, if any. Read-only."""
        return self._by_event(event_id)

    def list(self, *, agent_id: str | None = None, limit: int = 200) -> list[ConversationManifest]:
        """Conversations, newest first. Read-only."""
        where, params = ("", []) if agent_id is None else (" WHERE agent_id = ?", [agent_id])
        rows = self.conn.execute(
            f"SELECT * FROM conversations{where} ORDER BY imported_at DESC, id LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [_manifest(r) for r in rows]

    def messages(self, conversation_id: str) -> builtins.list[Message]:
        """One conversation's messages in order, with their agent-global seq. Read-only."""
        rows = self.conn.execute(
            "SELECT * FROM archive_messages WHERE conversation_id = ? ORDER BY idx",
            (conversation_id,),
        ).fetchall()
        return [_message(r) for r in rows]

    def slice(
        self, agent_id: str, after_seq: int | None = None, *, limit: int | None = None,
        through_seq: int | None = None,
    ) -> builtins.list[Message]:
        """The agent's archived messages with seq > `after_seq` (all when None) and, when
        `through_seq` is given, seq <= it, in order.

        Each `Message.seq` is the agent-global sequence number (what a consolidation cursor
        stores); ``meta`` gains ``conversation_id`` and ``index`` (position in its
        transcript). Read-only.
        """
        sql = "SELECT * FROM archive_messages WHERE agent_id = ? AND seq > ?"
        params: list[Any] = [agent_id, after_seq if after_seq is not None else 0]
        if through_seq is not None:
            sql += " AND seq <= ?"
            params.append(through_seq)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_message(r) for r in self.conn.execute(sql, params).fetchall()]

    def texts(self, agent_id: str) -> builtins.list[str]:
        """The text of every archived message of the agent, in seq order. Read-only (one
        query; no `Message` is built)."""
        return [str(r[0] or "") for r in self.conn.execute(
            "SELECT text FROM archive_messages WHERE agent_id = ? ORDER BY seq", (agent_id,))]

    def last_seq(self, agent_id: str) -> int:
        """The highest seq in the agent's archive (0 when empty). Read-only."""
        row = self.conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM archive_messages WHERE agent_id = ?", (agent_id,)
        ).fetchone()
        return int(row[0])


def _message(row: sqlite3.Row) -> Message:
    from wardian.transcripts import Message

    meta = json.loads(row["meta_json"])
    meta = {**meta, "conversation_id": row["conversation_id"], "index": row["idx"]}
    return Message(
        seq=row["seq"], role=row["role"], kind=row["kind"], text=row["text"],
        timestamp=row["timestamp"], meta=meta,
    )
