"""The preview cache in ``state.db`` (component ``maintenance_previews``).

Spec: "Import and preview" (the preview is remembered for that owner + digest) and
"Idempotency and failure recovery" (any failed apply clears the cached preview, so a fresh
preview is required). The cache lives in ``state.db`` — never ``memory.db`` — so a preview
leaves ``memory.db`` byte-identical.

One row per (owner id, digest); a newer preview of the same plan replaces the older one.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import utc_now_iso

__all__ = ["COMPONENT", "CachedPreview", "PreviewCache"]

COMPONENT = "maintenance_previews"

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_maintenance_previews", """
    CREATE TABLE maintenance_previews (
        owner_id TEXT NOT NULL,
        preview_digest TEXT NOT NULL,
        plan_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        conflict_count INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        preview_json TEXT NOT NULL,
        PRIMARY KEY (owner_id, preview_digest)
    );
    """),
]


@dataclass(frozen=True)
class CachedPreview:
    """A remembered preview: who, which digest, how many conflicts, when."""

    owner_id: str
    digest: str
    plan_id: str
    idempotency_key: str
    conflict_count: int
    created_at: str
    document: dict[str, Any]


class PreviewCache:
    """Previews remembered per owner + digest in ``state.db``.

    Args:
        db: the open state database (`wardian.config.open_state_db`).

    Raises:
        StoreError: the component's migrations cannot be applied.
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require(COMPONENT, _MIGRATIONS)
        self.conn: sqlite3.Connection = self.db.conn

    def put(
        self,
        *,
        owner_id: str,
        digest: str,
        plan_id: str,
        idempotency_key: str,
        conflict_count: int,
        document: dict[str, Any],
    ) -> None:
        """Remember a preview (atomic; replaces an earlier one of the same owner + digest)."""
        with atomic(self.conn):
            self.conn.execute(
                "INSERT INTO maintenance_previews (owner_id, preview_digest,"
                " plan_id, idempotency_key, conflict_count, created_at, preview_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (owner_id, preview_digest) DO UPDATE"
                " SET plan_id = excluded.plan_id, idempotency_key = excluded.idempotency_key,"
                " conflict_count = excluded.conflict_count, created_at = excluded.created_at,"
                " preview_json = excluded.preview_json",
                (owner_id, digest, plan_id, idempotency_key, conflict_count, utc_now_iso(),
                 json.dumps(document, ensure_ascii=False)),
            )

    def get(self, owner_id: str, digest: str) -> CachedPreview | None:
        """The cached preview of `owner_id` with `digest`, or None. Read-only."""
        row = self.conn.execute(
            "SELECT * FROM maintenance_previews WHERE owner_id = ? AND preview_digest = ?",
            (owner_id, digest),
        ).fetchone()
        if row is None:
            return None
        return CachedPreview(
            owner_id=row["owner_id"], digest=row["preview_digest"], plan_id=row["plan_id"],
            idempotency_key=row["idempotency_key"], conflict_count=row["conflict_count"],
            created_at=row["created_at"], document=json.loads(row["preview_json"]),
        )

    def clear(self, owner_id: str, digest: str) -> bool:
        """Forget the preview of `owner_id` with `digest` (atomic). True when one existed."""
        with atomic(self.conn):
            cursor = self.conn.execute(
                "DELETE FROM maintenance_previews WHERE owner_id = ? AND preview_digest = ?",
                (owner_id, digest),
            )
        return cursor.rowcount > 0
