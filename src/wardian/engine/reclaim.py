"""Reclaiming runs whose lease expired (PostgreSQL): any worker resumes them.

On PostgreSQL a running run belongs to whoever renews its lease (`RunStore.claim`). When
that worker is killed or cut off, the lease runs out and `RunStore.mark_interrupted_orphans`
marks the run ``interrupted`` with `LEASE_EXPIRED`. `resume_expired` then continues it
from its last completed step (`resume_run`, which claims it again): a scheduled run, a
manual one and a session-close one alike, on whichever machine asks first (the requeue is
one conditional update: a second worker finds the run taken and leaves it).

Not resumed here, left to ``wardian automation run resume RUN``: runs with secret inputs
(their values were never stored; the operator gives them again), and anything on SQLite,
where one machine's dead process is reported and resumed by hand (DESIGN.md "Runs").
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from wardian.engine.runs import RunStore
from wardian.errors import UsageError

__all__ = ["ReclaimReport", "resume_expired"]

SCAN_LIMIT = 200
"""Interrupted runs looked at per call (newest first); the rest wait for the next call."""


@dataclass
class ReclaimReport:
    """What `resume_expired` did: run ids resumed here, left (secret inputs), failed."""

    resumed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def resume_expired(store: RunStore, *, stop: threading.Event | None = None) -> ReclaimReport:
    """Mark runs whose lease expired ``interrupted`` and resume each one here, in turn.

    Args:
        store: the engine's `RunStore` (PostgreSQL; on SQLite nothing is done).
        stop: when set, no further run is resumed (the rest wait for the next call).

    Returns:
        `ReclaimReport`. A run that fails while resuming is recorded failed on the run
        itself, as any run is; an error here (e.g. its blueprint is gone) is listed.
    """
    from wardian.engine.executor import resume_run

    report = ReclaimReport()
    if not store.db.backend.shared_across_machines:
        return report
    store.mark_interrupted_orphans()
    for run_id, secret in store.lease_expired(SCAN_LIMIT):
        if stop is not None and stop.is_set():
            break
        if secret:
            report.left.append(run_id)
            continue
        try:
            resume_run(run_id, store=store)
        except UsageError:
            continue  # another worker requeued it first: it is that worker's now
        except Exception as exc:  # one run must not stop the others
            report.errors.append(f"run {run_id[:8]}: {type(exc).__name__}: {exc}")
            continue
        report.resumed.append(run_id)
    return report
