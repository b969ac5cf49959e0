"""The ``memory.db`` schema: forward-only migrations counted in ``PRAGMA user_version``.

Tables (DESIGN.md "Storage"):

* ``records`` — current state of each memory record (one row per record id).
* ``record_sources`` — the record's current sources, de-duplicated on (type, locator).
* ``revisions`` — immutable full snapshots, one per change, with actor, reason and time.
* ``records_fts`` — FTS5 (BM25) index over text + evidence, kept in sync by triggers.
* ``capabilities`` — launch-scoped capability hashes bound to agent and process identity.
* ``record_vectors`` — each record's sentence vector for semantic recall (migration 5).
* ``launches`` — every managed launch's supervisor identity, memory enabled or not, so
  operator commands recognise a managed process by its ancestry (migration 3).
* ``loaded_events`` — each ``Memory loaded`` event with the exact context given.
* ``maintenance_receipts`` — receipts of applied maintenance plans (idempotency).
* ``consolidation_receipts`` / ``consolidation_cursors`` — `memory.commit` idempotency and
  how far each agent's archive has been consolidated; committed with the changes.
"""

from __future__ import annotations

import json

from wardian._backend import Connection
from wardian._db import NamedMigration

__all__ = ["FLAG_MIGRATION", "MIGRATIONS", "flag_secret_records"]


def flag_secret_records(conn: Connection) -> int:
    """Migration 5: add ``records.flagged`` and set aside every record holding a secret.

    Runs once on upgrade, inside the migration's transaction. Each record's text, evidence
    and source locators go through the shared scanner (`wardian.memory.secret_scan`); a
    hit sets ``flagged`` to ``secret_detected: <detector> in <field>, ...`` (never the
    value). ``status`` stays; recall and the startup context skip flagged records, and the
    operator reviews them with ``wardian garden memory list --agent A --flagged``.

    The stored ``Memory loaded`` contexts (copies of what earlier startups were given) get
    their secret values replaced by ``[REDACTED:<kind>]`` placeholders.

    Returns:
        How many records were flagged.
    """
    from wardian.memory.secret_scan import redact, scan_fields

    conn.execute("ALTER TABLE records ADD COLUMN flagged TEXT")
    flagged = 0
    rows = conn.execute(
        "SELECT r.id, r.text, r.evidence, (SELECT json_group_array(locator) FROM"
        " record_sources s WHERE s.record_id = r.id) AS locators FROM records r"
    ).fetchall()
    for row in rows:
        fields: dict[str, str | None] = {"text": row["text"], "evidence": row["evidence"]}
        for index, locator in enumerate(json.loads(row["locators"] or "[]")):
            fields[f"sources[{index}].locator"] = locator
        findings = scan_fields(fields)
        if findings:
            reason = "secret_detected: " + ", ".join(
                sorted({f"{f.detector} in {f.field}" for f in findings}))
            conn.execute("UPDATE records SET flagged = ? WHERE id = ?", (reason, row["id"]))
            flagged += 1
    for event in conn.execute("SELECT id, context FROM loaded_events").fetchall():
        clean, found = redact(event["context"])
        if found:
            conn.execute("UPDATE loaded_events SET context = ? WHERE id = ?",
                         (clean, event["id"]))
    return flagged


def _discard(_count: int) -> None:
    """A migration returns nothing; the count is read back by `MemoryStore` for its notice."""


FLAG_MIGRATION = 5
"""The migration (``PRAGMA user_version``) that adds and fills ``records.flagged``."""

MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_records", """
    CREATE TABLE records (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('stable', 'current')),
        scope_kind TEXT NOT NULL CHECK (scope_kind IN ('agent', 'workspace')),
        scope_path TEXT NOT NULL DEFAULT '',
        text TEXT NOT NULL,
        evidence TEXT NOT NULL CHECK (length(evidence) > 0),
        status TEXT NOT NULL CHECK (status IN ('active', 'removed')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        current_revision_id TEXT NOT NULL,
        removed_reason TEXT
    );
    CREATE INDEX records_agent_status ON records (agent_id, status, kind, scope_kind);
    CREATE INDEX records_updated ON records (agent_id, updated_at);

    CREATE TABLE record_sources (
        record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        source_type TEXT NOT NULL,
        locator TEXT NOT NULL,
        is_primary INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (record_id, source_type, locator)
    );

    CREATE TABLE revisions (
        revision_id TEXT PRIMARY KEY,
        record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        snapshot_json TEXT NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (record_id, seq)
    );

    CREATE VIRTUAL TABLE records_fts USING fts5(
        text, evidence, content='records', content_rowid='rowid', tokenize='porter unicode61'
    );
    CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
        INSERT INTO records_fts (rowid, text, evidence) VALUES (new.rowid, new.text, new.evidence);
    END;
    CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
        INSERT INTO records_fts (records_fts, rowid, text, evidence)
        VALUES ('delete', old.rowid, old.text, old.evidence);
    END;
    CREATE TRIGGER records_au AFTER UPDATE OF text, evidence ON records BEGIN
        INSERT INTO records_fts (records_fts, rowid, text, evidence)
        VALUES ('delete', old.rowid, old.text, old.evidence);
        INSERT INTO records_fts (rowid, text, evidence) VALUES (new.rowid, new.text, new.evidence);
    END;

    CREATE TABLE capabilities (
        token_hash TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pid INTEGER NOT NULL,
        process_started_at REAL NOT NULL,
        workspace TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        revoked_reason TEXT
    );
    CREATE INDEX capabilities_agent ON capabilities (agent_id);

    CREATE TABLE loaded_events (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pid INTEGER,
        process_started_at REAL,
        workspace TEXT,
        created_at TEXT NOT NULL,
        context TEXT NOT NULL,
        record_ids_json TEXT NOT NULL,
        omitted_count INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL
    );
    CREATE INDEX loaded_events_agent ON loaded_events (agent_id, created_at);

    CREATE TABLE maintenance_receipts (
        owner_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        plan_id TEXT NOT NULL,
        preview_digest TEXT NOT NULL,
        applied_at TEXT NOT NULL,
        receipt_json TEXT NOT NULL,
        PRIMARY KEY (owner_id, idempotency_key)
    );

    CREATE TABLE consolidation_receipts (
        agent_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        batch_digest TEXT NOT NULL,
        committed_at TEXT NOT NULL,
        result_json TEXT NOT NULL,
        PRIMARY KEY (agent_id, idempotency_key)
    );

    CREATE TABLE consolidation_cursors (
        agent_id TEXT PRIMARY KEY,
        cursor_seq INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        updated_by TEXT NOT NULL
    );
    """),
    # 2: the startup set (agent scope + one workspace, stable before current, newest first)
    # reads only this index, so building a launch's context stays cheap at 100k records.
    NamedMigration("index_records_startup", """
    CREATE INDEX records_startup
        ON records (agent_id, status, kind, scope_kind, scope_path, updated_at);
    """),
    # 3: every managed launch, memory enabled or not: a launch with memory disabled mints no
    # capability, yet its processes must still be refused operator commands after clearing
    # their environment (`require_operator` matches their ancestors against this table).
    NamedMigration("create_launches", """
    CREATE TABLE launches (
        launch_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pid INTEGER NOT NULL,
        process_started_at REAL NOT NULL,
        workspace TEXT,
        memory_enabled INTEGER NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX launches_process ON launches (pid, process_started_at);
    """),
    # 4: Garden's paged record lists (one owner and status, newest first) step through this
    # index alone, so page 200 of 10k records costs what page 1 does.
    NamedMigration("index_records_page", """
    CREATE INDEX records_page ON records (agent_id, status, updated_at, id);
    """),
    # 5: existing stores are checked once for secrets; holders are set aside.
    NamedMigration("flag_secret_records", lambda conn: _discard(flag_secret_records(conn))),
    # 6: a valid capability presented from outside its launch's process tree (read from
    # /proc, or a copied environment replayed): refused, and kept here naming both launches.
    NamedMigration("create_capability_refusals", """
    CREATE TABLE capability_refusals (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        holder_agent_id TEXT NOT NULL,
        holder_launch_id TEXT,
        caller_agent_id TEXT,
        caller_launch_id TEXT,
        caller_pid INTEGER NOT NULL,
        reason TEXT NOT NULL
    );
    """),
    # 7: a record's sentence vector for semantic recall, computed from the text
    # of the revision it names by the optional embedding model (`wardian.memory.embedding`)
    # at save/update time. Records saved without the model have none (lexical recall only).
    NamedMigration("create_record_vectors", """
    CREATE TABLE record_vectors (
        record_id TEXT PRIMARY KEY REFERENCES records (id) ON DELETE CASCADE,
        revision_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    """),
    # 8: the pid and user namespace a launch's supervisor ran in (inode numbers of
    # /proc/<pid>/ns/pid and /ns/user; NULL off Linux and for rows of older versions): a
    # pid names a process only inside one pid namespace, so a capability is honoured only
    # for callers in its launch's namespaces.
    NamedMigration("add_launch_namespaces", """
    ALTER TABLE launches ADD COLUMN pid_ns INTEGER;
    ALTER TABLE launches ADD COLUMN user_ns INTEGER;
    ALTER TABLE capabilities ADD COLUMN pid_ns INTEGER;
    ALTER TABLE capabilities ADD COLUMN user_ns INTEGER;
    """),
    # 9: a counter every change to a record or its vector moves (PostgreSQL's table of
    # the same name counts write transactions): what a memory-mapped vector set on disk
    # (`wardian.memory.vector_file`) is valid for. SQLite's data_version only says what
    # changed since the same connection last looked.
    NamedMigration("create_memory_version", """
    CREATE TABLE memory_version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        changes INTEGER NOT NULL
    );
    INSERT INTO memory_version VALUES (1, 0);
    CREATE TRIGGER memory_version_records_insert AFTER INSERT ON records
    BEGIN UPDATE memory_version SET changes = changes + 1; END;
    CREATE TRIGGER memory_version_records_update AFTER UPDATE ON records
    BEGIN UPDATE memory_version SET changes = changes + 1; END;
    CREATE TRIGGER memory_version_records_delete AFTER DELETE ON records
    BEGIN UPDATE memory_version SET changes = changes + 1; END;
    CREATE TRIGGER memory_version_vectors_insert AFTER INSERT ON record_vectors
    BEGIN UPDATE memory_version SET changes = changes + 1; END;
    CREATE TRIGGER memory_version_vectors_update AFTER UPDATE ON record_vectors
    BEGIN UPDATE memory_version SET changes = changes + 1; END;
    CREATE TRIGGER memory_version_vectors_delete AFTER DELETE ON record_vectors
    BEGIN UPDATE memory_version SET changes = changes + 1; END;
    """),
]
