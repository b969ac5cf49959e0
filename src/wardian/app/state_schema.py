"""Every component of the state database with its migrations, in one list.

Each store migrates its own component the first time it is used (`StateDB.require`), so a
database holds only the components that were used. What handles the state database whole
(`wardian db migrate`, `wardian doctor`) reads this list instead: a component added to
Wardian is added here, and a test fails when a store's component is missing.
"""

from __future__ import annotations

from wardian._db import Migrations, StateDB

__all__ = ["migrate_every_component", "state_components"]


def state_components() -> dict[str, Migrations]:
    """Component name -> its migrations on each backend, for every component of
    ``state.db``."""
    from wardian.config import _SETTINGS_MIGRATIONS
    from wardian.engine.runs import MIGRATIONS as RUNS
    from wardian.invokers.drain import _MIGRATIONS as FIRES
    from wardian.invokers.slots import _MIGRATIONS as SLOTS
    from wardian.invokers.store import _MIGRATIONS as INVOKERS
    from wardian.memory.maintenance.previews import _MIGRATIONS as PREVIEWS
    from wardian.memory.maintenance.previews import COMPONENT as PREVIEWS_COMPONENT
    from wardian.providers.catalog import _MIGRATIONS as CATALOG
    from wardian.runtime.agents import _MIGRATIONS as AGENTS
    from wardian.runtime.archives import _MIGRATIONS as ARCHIVES
    from wardian.runtime.automation_sessions import _MIGRATIONS as AUTOMATION_SESSIONS
    from wardian.runtime.recovery import _MIGRATIONS as RECOVERY
    from wardian.runtime.session_events import _MIGRATIONS as EVENTS

    return {"agents": AGENTS, "archives": ARCHIVES, "automation_sessions": AUTOMATION_SESSIONS,
            "invokers": INVOKERS, PREVIEWS_COMPONENT: PREVIEWS, "model_catalog": CATALOG,
            "recovery": RECOVERY, "runs": RUNS, "schedule_slots": SLOTS,
            "session_close_fires": FIRES, "session_events": EVENTS,
            "settings": _SETTINGS_MIGRATIONS}


def migrate_every_component(db: StateDB) -> None:
    """Apply every component's migrations to `db`, so it holds every table of ``state.db``.

    Raises:
        StoreError: a migration failed, or `db` is newer than this Wardian.
    """
    for component, migrations in state_components().items():
        db.require(component, migrations)
