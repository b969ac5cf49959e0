"""A component's SQLite and PostgreSQL migrations stay twins.

Each backend owns its migrations (`wardian._db.Migrations`), so nothing rewrites one list
into the other, and a migration appended to one list only would go unnoticed: the pinned
lists (`test_migrations_pinned`) and the PostgreSQL catalog (`test_pg_schema_catalog`)
each check one side. These tests check the two sides against each other: the same names
in the same order, and a fresh SQLite ``state.db`` holding the same tables and columns as
the checked PostgreSQL catalog's ``state`` schema (PostgreSQL's emulated ``rowid`` aside).
"""

from __future__ import annotations

from pathlib import Path

from wardian._db import StateDB
from wardian.app.state_schema import migrate_every_component, state_components

CATALOG = Path(__file__).parent / "data" / "pg_catalog.txt"


def test_each_component_names_the_same_migrations_on_both_backends() -> None:
    for component, migrations in state_components().items():
        sqlite = [(m.name, callable(m.apply)) for m in migrations.sqlite]
        postgres = [(m.name, callable(m.apply)) for m in migrations.postgres]
        assert sqlite == postgres, (
            f"{component}: its SQLite and PostgreSQL migrations differ; a migration "
            "belongs in both lists, under one name, at one position")


def _catalog_columns(schema: str) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    current = None
    for line in CATALOG.read_text().splitlines():
        if line.startswith("schema "):
            current = line.split()[1]
        elif current == schema and line.strip().startswith("column "):
            table, _position, name = (part.strip() for part in
                                      line.strip()[len("column "):].split("|")[:3])
            if name != "rowid":
                tables.setdefault(table, []).append(name)
    return tables


def test_a_fresh_sqlite_state_db_has_the_postgres_catalogs_columns(tmp_path: Path) -> None:
    with StateDB.open(tmp_path / "state.db") as db:
        migrate_every_component(db)
        names = [r[0] for r in db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        sqlite = {t: [r[1] for r in db.conn.execute(f'PRAGMA table_info("{t}")')]
                  for t in names}
    postgres = _catalog_columns("state")
    assert postgres, f"no state schema in {CATALOG}"
    assert sqlite == postgres, (
        "the SQLite and PostgreSQL migrations build different tables or columns; add "
        "the change to both lists of the component (and rewrite the catalog with "
        "WRITE_PG_CATALOG=1 once the PostgreSQL side is checked)")
