"""``memory.db`` as one database object: one connection per process, migrated once on open.

Every memory store (`MemoryStore`, the capability store, the maintenance apply) is a view
over the `MemoryDB` of its file; DESIGN.md "Storage".
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Protocol

from wardian._backend import Connection
from wardian._db import Database, migrate_component, migrate_user_version
from wardian.memory.schema import FLAG_MIGRATION, MIGRATIONS

__all__ = ["FullText", "MemoryDB", "open_memory_db"]


class FullText(Protocol):
    """The full-text statements that differ by backend: `wardian.memory.fulltext_sqlite`
    (FTS5) and `wardian.memory.fulltext_pg` (PostgreSQL's text search) both offer them."""

    def prefix_filter(self, words: Sequence[str]) -> tuple[str, list[Any]]:
        """SQL condition on ``records`` and its parameters: every one of `words` (each
        ``\\w+``) starts a word of the text or evidence (Garden's text filter)."""
        ...

    def index_problems(self, conn: Connection) -> list[str]:
        """One line per way the full-text index differs from the records ([]: none)."""
        ...


class MemoryDB(Database):
    """``memory.db``: records, revisions, sources, receipts, capabilities.

    Get it with ``MemoryDB.open(path)``; migrations (`wardian.memory.schema.MIGRATIONS`,
    counted in ``PRAGMA user_version``) run when the file is first opened in a process.
    On PostgreSQL it is the ``memory`` schema, migrated by
    `wardian.memory.schema_pg.POSTGRES_MIGRATIONS`.

    Raises:
        StoreError: the file cannot be opened, or is newer than this Wardian.
    """

    schema = "memory"

    def _migrate_on_open(self) -> None:
        if self.dialect == "postgres":
            from wardian.memory.schema_pg import POSTGRES_MIGRATIONS

            migrate_component(self.conn, "memory", POSTGRES_MIGRATIONS)
            # Every write transaction moves the version the recall caches compare.
            self.conn.before_write_commit = (  # type: ignore[attr-defined]
                "UPDATE memory_version SET changes = changes + 1")
            return
        before = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        migrate_user_version(self.conn, MIGRATIONS, component="memory")
        if 0 < before < FLAG_MIGRATION:
            self._tell_flagged()

    @property
    def fulltext(self) -> FullText:
        """This backend's full-text statements (`FullText`)."""
        if self.dialect == "postgres":
            from wardian.memory import fulltext_pg

            return fulltext_pg
        from wardian.memory import fulltext_sqlite

        return fulltext_sqlite

    def _tell_flagged(self) -> None:
        """After the upgrade secret check, tell the operator on stderr which
        agents have records set aside and how to review them; silent when none were."""
        rows = self.conn.execute(
            "SELECT agent_id, COUNT(*) AS n FROM records WHERE flagged IS NOT NULL"
            " GROUP BY agent_id ORDER BY agent_id"
        ).fetchall()
        for row in rows:
            sys.stderr.write(
                f"wardian: the upgrade check set aside {row['n']} memory record(s) of agent "
                f"{row['agent_id'][:8]} that hold what looks like a secret; they are no "
                "longer recalled or shown at startup. Review them with `wardian garden "
                f"memory list --agent {row['agent_id'][:8]} --flagged`, then retire or "
                "revise each one.\n"
            )


def open_memory_db() -> MemoryDB:
    """This installation's ``memory.db`` (`wardian.config.memory_db_path`), open and
    migrated: what an entry point passes to the memory stores it uses (`MemoryDB.open`;
    same errors)."""
    from wardian.config import memory_db_path

    return MemoryDB.open(memory_db_path())
