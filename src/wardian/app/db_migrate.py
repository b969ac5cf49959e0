"""`wardian db migrate --to postgresql://…`: move a SQLite installation to PostgreSQL.

Copies every row of ``memory.db`` and ``state.db`` (records with their ids and rowids,
revisions, sources, vectors, receipts, capabilities, agents, invokers, runs, events, …)
into the ``memory`` and ``state`` schemas of one PostgreSQL database, in one transaction
on the server: it commits only after the row counts of every table match the source's and
`MemoryStore.verify` finds nothing wrong on either side, so a failed or refused migration
leaves the target as it was. The source files are only read (under their write lock, so
the copy is one consistent snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from wardian._db import Database, StateDB, atomic
from wardian.errors import ConflictError, StoreError, UsageError

if TYPE_CHECKING:
    from wardian.memory.db import MemoryDB

__all__ = ["MigrateReport", "check_sources", "migrate_to_postgres", "migration_sources"]


@dataclass
class MigrateReport:
    """What `migrate_to_postgres` copied: rows per ``schema.table`` (source = target)."""

    target: str
    """The URL, password hidden."""
    tables: dict[str, int] = field(default_factory=dict)
    records_verified: int = 0


_IN_USE = (("memory", "records"), ("memory", "revisions"), ("state", "agents"),
           ("state", "invokers"), ("state", "runs"))
"""Tables that hold rows once an installation has been used: any row there, and the
target is someone's Wardian (other tables may hold rows their migrations seeded)."""


def _in_use(target: Database) -> str | None:
    """The first ``schema.table`` of `_IN_USE` that holds a row in the target, or None."""
    for schema, table in _IN_USE:
        if target.conn.execute(f'SELECT 1 FROM "{schema}"."{table}" LIMIT 1').fetchone():
            return f"{schema}.{table}"
    return None


def migration_sources(url: str, *, memory_path: Path | None = None,
                      state_path: Path | None = None) -> tuple[str, Path, Path]:
    """Check what ``wardian db migrate --to URL`` copies, before anything is opened.

    Args:
        url: ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE``.
        memory_path / state_path: the SQLite files (default: the data directory's).

    Returns:
        ``(url, memory_path, state_path)``: the validated URL and the two source files,
        for the command to open (`check_sources`, then the target at `url`).

    Raises:
        UsageError: `url` is not a PostgreSQL URL, or neither file exists (exit 2).
    """
    from wardian._pg import validate_url
    from wardian.config import memory_db_path, state_db_path

    url = validate_url(url)
    memory_path = memory_path or memory_db_path(create_dir=False)
    state_path = state_path or state_db_path()
    if not memory_path.exists() and not state_path.exists():
        raise UsageError(f"nothing to migrate: neither {memory_path} nor {state_path} exists",
                         hint="point WARDIAN_HOME at the installation to copy")
    return url, memory_path, state_path


def check_sources(source_memory: MemoryDB, source_state: StateDB) -> None:
    """Bring the open source databases' schemas up to date and verify ``memory.db``.

    Raises:
        StoreError: the source ``memory.db`` is inconsistent (nothing is copied).
    """
    from wardian.app.state_schema import migrate_every_component
    from wardian.memory.store import MemoryStore

    migrate_every_component(source_state)
    problems = MemoryStore(source_memory).verify()
    if problems:
        raise StoreError(
            f"the source memory.db is inconsistent ({len(problems)} problem(s), first: "
            f"{problems[0]}); nothing was copied",
            hint="run `wardian doctor --check memory-history` and repair it first")


def migrate_to_postgres(url: str, source_memory: MemoryDB, source_state: StateDB,
                        target_memory: MemoryDB, target_state: StateDB) -> MigrateReport:
    """Copy this installation's SQLite files into the PostgreSQL database `url`.

    Args:
        url: the validated URL (`migration_sources`); its schemas ``memory`` and ``state``
            are created and migrated when missing, and must hold no rows.
        source_memory / source_state: the open SQLite sources, checked (`check_sources`).
        target_memory / target_state: the same PostgreSQL database opened for each
            schema (``MemoryDB.open_at(url, stands_for=memory_path)`` and likewise).

    Returns:
        `MigrateReport` with the rows copied per table.

    Raises:
        StoreError: a table or column is missing on the target, or the copy failed
            verification (rolled back).
        ConflictError: the target already holds Wardian data (exit 4; nothing written).
    """
    from wardian._pg import (
        PgConnection,
        copy_table,
        redact_url,
        schema_lock_key,
        sqlite_tables,
        table_exists,
    )
    from wardian.app.state_schema import migrate_every_component
    from wardian.memory.store import MemoryStore

    migrate_every_component(target_state)
    conn = target_memory.conn
    assert isinstance(conn, PgConnection)
    report = MigrateReport(redact_url(url))
    plan = [("memory", source_memory, sqlite_tables(source_memory.conn)),
            ("state", source_state, sqlite_tables(source_state.conn))]
    # Both source files under their write lock: one consistent snapshot, no writer between.
    with atomic(source_memory.conn), atomic(source_state.conn), conn.atomic():
        conn.execute("SELECT pg_advisory_xact_lock(?)", (schema_lock_key("state"),))
        busy = _in_use(target_memory)
        if busy is not None:
            raise ConflictError(
                f"{report.target} already holds Wardian data ({busy} has rows);"
                " nothing was copied",
                hint="migrate into an empty database (createdb), or drop its memory"
                " and state schemas first")
        for schema, source, tables in plan:
            for table in reversed(tables):  # children first: what migrations seeded goes
                if table_exists(conn, schema, table):
                    conn.execute(f'DELETE FROM "{schema}"."{table}"')
            for table in tables:
                copied = copy_table(source.conn, conn, table, schema=schema)
                report.tables[f"{schema}.{table}"] = copied
        for name, copied in report.tables.items():
            schema, table = name.split(".")
            source = source_memory if schema == "memory" else source_state
            want = int(source.conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
            got = int(conn.execute(f'SELECT COUNT(*) FROM "{schema}"."{table}"')
                      .fetchone()[0])
            if not want == got == copied:
                raise StoreError(f"{name}: {want} rows in the source, {got} in the target;"
                                 " rolled back, nothing was copied")
        problems = MemoryStore(target_memory).verify()
        if problems:
            raise StoreError(
                f"the copy does not verify ({len(problems)} problem(s), first: "
                f"{problems[0]}); rolled back, nothing was copied")
        report.records_verified = report.tables.get("memory.records", 0)
    # Freshly filled tables have no planner statistics until autovacuum reaches them:
    # recall's GIN-indexed queries right after a copy of 100k records were planned blind
    # (p95 2 s instead of tens of ms). ANALYZE is PostgreSQL's advice after a bulk load.
    for name in report.tables:
        schema, table = name.split(".")
        conn.execute(f'ANALYZE "{schema}"."{table}"')
    return report
