"""Shipped migrations are append-only: each keeps its number, name and SQL forever.

`PINNED` is every migration Wardian has shipped, per component and backend (``_postgres``:
the PostgreSQL list), as (name, first 12 hex of the SHA-256 of its SQL; ``"function"`` for
one written in Python). Editing an old migration, renaming it or inserting one before it
fails here; a new migration is appended to its list and to `PINNED`. DESIGN.md "Storage":
forward-only migrations.

A state component's PostgreSQL migrations carry its SQLite migrations' names: until each
backend had its own, PostgreSQL ran the SQLite list translated, and its stores recorded
those names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from wardian._db import Migrations, NamedMigration, StateDB
from wardian.config import _SETTINGS_MIGRATIONS
from wardian.engine.runs import MIGRATIONS as RUNS
from wardian.invokers.drain import _MIGRATIONS as FIRES
from wardian.invokers.slots import _MIGRATIONS as SLOTS
from wardian.invokers.store import _MIGRATIONS as INVOKERS
from wardian.memory.db import MemoryDB
from wardian.memory.maintenance.previews import _MIGRATIONS as PREVIEWS
from wardian.memory.schema import MIGRATIONS as MEMORY
from wardian.memory.schema_pg import POSTGRES_MIGRATIONS as MEMORY_POSTGRES
from wardian.providers.catalog import _MIGRATIONS as CATALOG
from wardian.runtime.agents import _MIGRATIONS as AGENTS
from wardian.runtime.archives import _MIGRATIONS as ARCHIVES
from wardian.runtime.automation_sessions import _MIGRATIONS as AUTOMATION_SESSIONS
from wardian.runtime.recovery import _MIGRATIONS as RECOVERY
from wardian.runtime.session_events import _MIGRATIONS as EVENTS

STATE: dict[str, Migrations] = {
    "agents": AGENTS, "archives": ARCHIVES, "automation_sessions": AUTOMATION_SESSIONS,
    "recovery": RECOVERY, "session_events": EVENTS, "model_catalog": CATALOG,
    "settings": _SETTINGS_MIGRATIONS, "runs": RUNS, "schedule_slots": SLOTS,
    "session_close_fires": FIRES, "invokers": INVOKERS, "maintenance_previews": PREVIEWS,
}
SHIPPED: dict[str, Sequence[NamedMigration]] = {
    "memory": MEMORY, **{name: steps.sqlite for name, steps in STATE.items()},
    "memory_postgres": MEMORY_POSTGRES,
    **{f"{name}_postgres": steps.postgres for name, steps in STATE.items()},
}

PINNED: dict[str, list[tuple[str, str]]] = {
    "memory": [
        ("create_records", "2a4c2449ad50"),
        ("index_records_startup", "253c8dd8b0f7"),
        ("create_launches", "48864caf0e50"),
        ("index_records_page", "7bc972a18ac4"),
        ("flag_secret_records", "function"),
        ("create_capability_refusals", "573c53312684"),
        ("create_record_vectors", "7de8836fd333"),
        ("add_launch_namespaces", "af3be7384204"),
        ("create_memory_version", "7490e3ec4315"),
    ],
    "agents": [("create_agents", "867ed884b537")],
    "automation_sessions": [("create_automation_sessions", "293517d034c6")],
    "archives": [
        ("create_conversations", "3f1b7d64d564"),
        ("add_conversations_source_offset", "263b441722a1"),
        ("add_conversations_secrets_redacted", "86ab87b11534"),
    ],
    "recovery": [("create_recovery_requests", "09d59a35bb23")],
    "session_events": [
        ("create_session_events", "da69661d148a"),
        ("create_session_close_subscribers", "function"),
        ("add_session_events_recorded_host", "8cc912bb79ad"),
    ],
    "model_catalog": [
        ("create_model_catalog", "13f88080e659"),
        ("add_model_catalog_last_error_hint", "a44ef703d1e9"),
    ],
    "settings": [("create_settings", "d40d45364a2f")],
    "runs": [("create_runs", "7fcc46bf7796"), ("add_run_leases", "935321909f22"),
             ("add_step_attempt_input_refs", "d2ba1840be77")],
    "schedule_slots": [
        ("create_schedule_slots", "000d361c023f"),
        ("add_schedule_slots_settled_at", "d72b1538c19e"),
        ("schedule_slots_blocked_outcome", "f87c0439e23b"),
    ],
    "session_close_fires": [("create_session_close_fires", "1078590e9b19")],
    "invokers": [
        ("create_invokers", "7b14a954d1d1"),
        ("sync_session_close_subscribers", "function"),
        ("unique_invoker_names", "function"),
    ],
    "maintenance_previews": [("create_maintenance_previews", "4e804ce58fce")],
    # The memory schema on PostgreSQL (issue 18); appended to beside "memory".
    "memory_postgres": [("create_memory_schema", "29c86b2f1379"),
                        ("fts_tokens_as_fts5", "96c77ea03625"),
                        # 3 and 5 built the FTS5 emulation that 7 drops from every
                        # store: superseded, they run a no-op (their shipped SQL is
                        # tests/memory/data/pg_fts5_emulation.sql, for the upgrade test).
                        ("fts_fold_as_unicode61", "2fbbe9ae5dd0"),
                        ("drop_bm25_term", "156cf7143c9c"),
                        ("fts_stem_as_fts5", "2fbbe9ae5dd0"),
                        ("add_launch_namespaces", "5e35c703fd31"),
                        ("fts_native", "682a21cedc01")],
    # Each state component on PostgreSQL, under the names of its SQLite migrations.
    "agents_postgres": [("create_agents", "b150d8dad579")],
    "archives_postgres": [("create_conversations", "4044c394cb56"),
                          ("add_conversations_source_offset", "3fb9cedfeaa7"),
                          ("add_conversations_secrets_redacted", "8781d0b78f77")],
    "automation_sessions_postgres": [("create_automation_sessions", "25a28e473e3f")],
    "invokers_postgres": [("create_invokers", "5eae30aee5a3"),
                          ("sync_session_close_subscribers", "function"),
                          ("unique_invoker_names", "function")],
    "maintenance_previews_postgres": [("create_maintenance_previews", "c67d4f7e432b")],
    "model_catalog_postgres": [("create_model_catalog", "203411c90e2f"),
                               ("add_model_catalog_last_error_hint", "a44ef703d1e9")],
    "recovery_postgres": [("create_recovery_requests", "489c3e047c94")],
    "runs_postgres": [("create_runs", "11f0d75fe231"), ("add_run_leases", "31d78660cb4c"),
                      ("add_step_attempt_input_refs", "d2ba1840be77")],
    "schedule_slots_postgres": [("create_schedule_slots", "f9a98b55d53b"),
                                ("add_schedule_slots_settled_at", "d72b1538c19e"),
                                ("schedule_slots_blocked_outcome", "8f9b1f0e3d2e")],
    "session_close_fires_postgres": [("create_session_close_fires", "c25e4ddfe095")],
    "session_events_postgres": [("create_session_events", "b242cd15614a"),
                                ("create_session_close_subscribers", "function"),
                                ("add_session_events_recorded_host", "8cc912bb79ad")],
    "settings_postgres": [("create_settings", "b65af15b9784")],
}


def _digest(migration: NamedMigration) -> str:
    if callable(migration.apply):
        return "function"
    return hashlib.sha256(migration.apply.encode()).hexdigest()[:12]


def test_shipped_migrations_are_append_only() -> None:
    found = {component: [(m.name, _digest(m)) for m in migrations]
             for component, migrations in SHIPPED.items()}
    for component, pinned in PINNED.items():
        assert found[component][: len(pinned)] == pinned, (
            f"{component}: a shipped migration was edited, renamed or reordered; "
            "append a new migration instead")
    assert found == PINNED, "append each new migration to PINNED in " + __file__


def test_a_fresh_database_records_every_name(tmp_path: Path) -> None:
    with MemoryDB.open(tmp_path / "memory.db") as memory:
        rows = memory.conn.execute(
            "SELECT name FROM schema_migrations WHERE component = 'memory' ORDER BY version")
        assert [r[0] for r in rows] == [m.name for m in MEMORY]
    with StateDB.open(tmp_path / "state.db") as state:
        for component, steps in STATE.items():
            state.require(component, steps)
        for component, migrations in SHIPPED.items():
            if component in STATE:
                rows = state.conn.execute(
                    "SELECT name FROM schema_migrations WHERE component = ?"
                    " ORDER BY version", (component,))
                assert [r[0] for r in rows] == [m.name for m in migrations]
