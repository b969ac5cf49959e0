"""``wardian doctor`` check ``launches``: recorded launches and live capabilities that cannot
name a launch's supervisor (`wardian.memory.capabilities.launch_row_problem`): pid 1 or
another namespace's process recorded from inside a pid namespace by an older version, or a
start time that no supervisor can have. Such a row can make every operator command refuse
(pid 1 is everyone's ancestor) or keep a token alive; the operator guard ignores them, and
``wardian agent clear-bad-launches`` removes them.

Read-only like every doctor check: ``memory.db`` is opened read-only and not migrated.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

from wardian.app.doctor import DoctorContext, Finding

__all__: list[str] = []

FIX = "`wardian agent clear-bad-launches` (deletes those launch rows, revokes the capabilities)"


def _launches(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.config import owner_namespaces
    from wardian.memory.capabilities import read_bad_launches

    name = "launches"
    conn = ctx.db("memory.db")
    if conn is None:
        yield Finding.ok(name, "no launches recorded")
        return
    with closing(conn):
        bad = read_bad_launches(conn, owner_namespaces(record=False))
    if bad is None:
        yield Finding.ok(name, "no launches recorded")
        return
    for one in bad:
        what = (f"launch {one.key[:8]}" if one.table == "launches"
                else f"a live capability ({one.key[:8]})")
        yield Finding.problem(
            name, f"{what} of agent {one.agent_id[:8]} {one.reason} (pid {one.pid})",
            fix=FIX, subject=one.key)
    if not bad:
        yield Finding.ok(name, "every recorded launch names a possible supervisor")
