"""`wardian db migrate --to postgresql://…`: move this installation to PostgreSQL.

Operator-only (exit 3 inside a managed process). Exit codes: 0 copied and verified; 1 the
server cannot be reached or the copy failed (rolled back); 2 a bad URL or nothing to copy;
4 the target already holds Wardian data.
"""

from __future__ import annotations

import typer

from wardian.cli._common import JsonOption, emit_json, print_table, require_operator, stdout

app = typer.Typer(help="The database: move an installation from SQLite to PostgreSQL.",
                  no_args_is_help=True)


@app.callback()
def _group() -> None:
    """The database: move an installation from SQLite to PostgreSQL."""


@app.command("migrate")
def migrate(
    to: str = typer.Option(..., "--to", metavar="URL",
                           help="postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (empty)."),
    as_json: bool = JsonOption,
) -> None:
    """Copy memory.db and state.db into PostgreSQL (schemas memory and state), losslessly.

    Every row keeps its ids (records, revisions, sources, receipts, agents, invokers,
    runs). One transaction: it commits only when every table's row count matches and
    memory verifies on both sides. Then set WARDIAN_DATABASE_URL (or write the URL to
    database.url in the data directory) on every machine that should share it.
    """
    require_operator()
    from wardian.app.databases import MemoryDB, StateDB
    from wardian.app.db_migrate import check_sources, migrate_to_postgres, migration_sources

    # The command's subjects: the two source files, then the target (one database, both
    # schemas), opened in this order so a bad source is refused before the server is asked.
    url, memory_path, state_path = migration_sources(to)
    source_memory = MemoryDB.open_at(memory_path)
    source_state = StateDB.open_at(state_path)
    check_sources(source_memory, source_state)
    report = migrate_to_postgres(url, source_memory, source_state,
                                 MemoryDB.open_at(url, stands_for=memory_path),
                                 StateDB.open_at(url, stands_for=state_path))
    if as_json:
        emit_json({"target": report.target, "tables": report.tables,
                   "records_verified": report.records_verified})
        return
    print_table(["table", "rows"], sorted(report.tables.items()),
                title=f"copied to {report.target}")
    stdout(f"verified: row counts match in {len(report.tables)} tables; memory verify is "
           f"clean on both sides ({report.records_verified} records)")
    stdout("next: export WARDIAN_DATABASE_URL=<the URL> (or write it to database.url in the"
           " data directory) on each machine")
