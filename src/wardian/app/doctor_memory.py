"""``wardian doctor`` check ``memory-history``: every record equals its latest revision and
the full-text index matches the records (`MemoryStore.verify`).

Read-only like every doctor check: ``memory.db`` is opened with ``mode=ro`` and not migrated
(on PostgreSQL, the ``memory`` schema over a read-only connection).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

from wardian._backend import backend_of
from wardian.app.doctor import DoctorContext, Finding

__all__ = ["revision_findings"]


def _memory_history(ctx: DoctorContext) -> Iterator[Finding]:
    name = "memory-history"
    conn = ctx.db("memory.db")
    if conn is None:
        yield Finding.ok(name, "no memory records")
        return
    from wardian.memory.db import MemoryDB
    from wardian.memory.readonly import count_records
    from wardian.memory.store import MemoryStore

    with closing(conn):
        if count_records(conn) is None:
            yield Finding.ok(name, "no memory records")
            return
        try:
            problems = MemoryStore(MemoryDB(ctx.data_dir / "memory.db", conn)).verify()
            count = count_records(conn) or 0
        except backend_of(conn).Error as exc:
            yield Finding.problem(name, f"memory.db cannot be checked: {exc}",
                                  fix="run `wardian doctor --check data-dir`")
            return
    if ctx.url is not None:
        from wardian._pg import redact_url

        yield from revision_findings(
            name, problems, count, at=f" at {redact_url(ctx.url)}",
            restore="restore the database from a backup (pg_dump/pg_restore)")
        return
    yield from revision_findings(
        name, problems, count, restore="stop Wardian and restore memory.db from a backup")


def revision_findings(check: str, problems: list[str], count: int, *, at: str = "",
                      restore: str) -> Iterator[Finding]:
    """What `MemoryStore.verify` found, as findings of `check`: one problem per line it
    returned (the record id first), else one ``ok`` naming the `count` of records checked.

    Args:
        at: where the records are, for the ``ok`` line (`` at <url>``; empty for memory.db).
        restore: how to get the records back, the start of every problem's fix.
    """
    for line in problems:
        yield Finding.problem(
            check, line, subject=line.split(":", 1)[0],
            fix=f"{restore}; the revision history (`wardian garden memory history ID`) "
                "shows what the record last was")
    if not problems:
        yield Finding.ok(check, f"{count} record(s){at} match their latest revision and the "
                                "full-text index")
