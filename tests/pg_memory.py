"""A PostgreSQL ``memory`` schema as an older Wardian left it, for upgrade tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def records_at_migration(url: str, upto: int, records: Sequence[tuple[str, str]],
                         probe: str | None = None) -> Any:
    """Migrate `url`'s ``memory`` schema through its first `upto` migrations only, write
    `records` ((id, text) of agent ``agent-1``) as that schema's trigger indexed them,
    and close every connection (the next `MemoryStore` migrates the rest). Returns the
    first column of `probe`'s first row, read before closing (None without one)."""
    from wardian._db import close_databases, migrate_component
    from wardian._pg import PgConnection
    from wardian.memory.schema_pg import POSTGRES_MIGRATIONS

    old = PgConnection(url, "memory")
    try:
        migrate_component(old, "memory", POSTGRES_MIGRATIONS[:upto])
        for rid, text in records:
            old.execute(
                "INSERT INTO records (id, agent_id, kind, scope_kind, text, evidence, status,"
                " created_at, updated_at, current_revision_id) VALUES (?, 'agent-1',"
                " 'stable', 'agent', ?, 'said so', 'active', '2026-01-01T00:00:00Z',"
                " '2026-01-01T00:00:00Z', 'none')", (rid, text))
        value = old.execute(probe).fetchone()[0] if probe else None
    finally:
        old.close()
    close_databases(url)
    return value
