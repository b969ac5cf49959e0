"""``memory.db`` as one database object: one connection per process, migrated once on open.

Every memory store (`MemoryStore`, the capability store, the maintenance apply) is a view
over the `MemoryDB` of its file; DESIGN.md "Storage".
"""

from __future__ import annotations

from wardian._db import Database, migrate_user_version
from wardian.memory.schema import MIGRATIONS

__all__ = ["MemoryDB"]


class MemoryDB(Database):
    """``memory.db``: records, revisions, sources, receipts, capabilities.

    Get it with ``MemoryDB.open(path)``; migrations (`wardian.memory.schema.MIGRATIONS`,
    counted in ``PRAGMA user_version``) run when the file is first opened in a process.

    Raises:
        StoreError: the file cannot be opened, or is newer than this Wardian.
    """

    def _migrate_on_open(self) -> None:
        migrate_user_version(self.conn, MIGRATIONS)
