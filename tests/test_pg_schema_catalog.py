"""A fresh PostgreSQL database migrated by this Wardian holds exactly the checked catalog.

`EXPECTED` (``tests/data/pg_catalog.txt``) lists, per schema, every table's columns (order,
type, nullability, default, identity, generation), constraints, indexes, triggers and
functions and sequences, as the server describes them (whitespace collapsed). Every
component's PostgreSQL migrations must build that; a change of any of them shows here as
a diff of the catalog, to be checked and then written to the file (``WRITE_PG_CATALOG=1``
rewrites it from the database).

The file was first written from the schema the SQLite migrations built when PostgreSQL
ran them translated at run time, before each backend had its own migrations: so the
hand-written PostgreSQL DDL builds what every store migrated before already holds.
"""

from __future__ import annotations

import os
from pathlib import Path

from wardian._pg import PgConnection

EXPECTED = Path(__file__).parent / "data" / "pg_catalog.txt"

_COLUMNS = """
SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
       a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = ? AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""
_CONSTRAINTS = """
SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid)
FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ?
ORDER BY c.relname, k.conname
"""
_INDEXES = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ? ORDER BY indexname"
_TRIGGERS = """
SELECT t.tgname, pg_get_triggerdef(t.oid)
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ? AND NOT t.tgisinternal
ORDER BY t.tgname
"""
_FUNCTIONS = """
SELECT p.proname, pg_get_functiondef(p.oid)
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = ?
ORDER BY p.proname
"""
_SEQUENCES = """
SELECT sequencename, data_type FROM pg_sequences WHERE schemaname = ? ORDER BY sequencename
"""


def catalog(conn: PgConnection, schema: str) -> list[str]:
    """The lines describing `schema`: columns, constraints, indexes, triggers, functions,
    sequences, each sorted, the schema's own name left out."""
    lines = [f"schema {schema}"]
    for q, tag in ((_COLUMNS, "column"), (_CONSTRAINTS, "constraint"), (_INDEXES, "index"),
                   (_TRIGGERS, "trigger"), (_FUNCTIONS, "function"),
                   (_SEQUENCES, "sequence")):
        for row in conn.execute(q, (schema,)):
            # Whitespace collapsed: a function's body reads the same however it is laid out.
            text = " | ".join("" if v is None else " ".join(str(v).split()) for v in row)
            lines.append(f"  {tag} {text.replace(f'{schema}.', '')}")
    return lines


def test_fresh_postgres_schema_matches_the_checked_catalog(pg_url: str) -> None:
    from wardian._db import StateDB
    from wardian.app.state_schema import migrate_every_component
    from wardian.memory.db import MemoryDB

    MemoryDB.open_at(pg_url)
    migrate_every_component(StateDB.open_at(pg_url))
    conn = PgConnection(pg_url, "state", read_only=True)
    try:
        found = catalog(conn, "memory") + catalog(conn, "state")
    finally:
        conn.close()
    text = "\n".join(found) + "\n"
    if os.environ.get("WRITE_PG_CATALOG") == "1":
        EXPECTED.parent.mkdir(exist_ok=True)
        EXPECTED.write_text(text, encoding="utf-8")
    assert text.splitlines() == EXPECTED.read_text(encoding="utf-8").splitlines()
