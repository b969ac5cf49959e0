"""Read-only questions about ``memory.db`` for readers that must write nothing.

``wardian doctor`` opens the file with `wardian._db.open_readonly` (no migration, no
pragma) and asks these; the SQL over the memory tables stays in the memory package
(DESIGN.md "Layout": no SQL on another component's tables). Each function takes any
connection to ``memory.db`` and answers None when the file predates what it asks about.
"""

from __future__ import annotations

from wardian._backend import Connection
from wardian._db import has_table, table_columns

__all__ = ["active_without_vector", "count_records", "flagged_by_agent"]


def count_records(conn: Connection) -> int | None:
    """How many records (any status) the file holds; None when it has no ``records``."""
    if not has_table(conn, "records"):
        return None
    return int(conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])


def flagged_by_agent(conn: Connection) -> list[tuple[str, int]] | None:
    """``(agent id, active records set aside as holding a secret)`` per agent with any,
    by agent id; None when the upgrade secret check has not run on the file yet
    (no ``records.flagged`` column)."""
    if "flagged" not in table_columns(conn, "records"):
        return None
    rows = conn.execute(
        "SELECT agent_id, COUNT(*) AS n FROM records WHERE flagged IS NOT NULL"
        " AND status = 'active' GROUP BY agent_id ORDER BY agent_id").fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def active_without_vector(conn: Connection, model: str) -> int | None:
    """How many active records have no sentence vector of `model`; None when the
    file has no ``record_vectors`` table yet."""
    if not has_table(conn, "record_vectors"):
        return None
    return int(conn.execute(
        "SELECT COUNT(*) FROM records r LEFT JOIN record_vectors v"
        " ON v.record_id = r.id AND v.model = ? WHERE r.status = 'active'"
        " AND v.record_id IS NULL", (model,)).fetchone()[0])
