"""The installation's databases, as a surface opens them for one unit of work.

A CLI command, a web request or an MCP call opens ``state.db`` (`open_state_db`) and
``memory.db`` (`open_memory_db`) here, in the app layer, and passes them to the service
functions it calls, which take the open database and never open one themselves. The
surfaces import only ``wardian.app`` and the base modules, so ``memory.db``'s opener is
named here for them.
"""

from __future__ import annotations

from wardian._db import StateDB
from wardian.config import open_state_db
from wardian.memory.db import MemoryDB, open_memory_db

__all__ = ["MemoryDB", "StateDB", "open_existing_memory_db", "open_memory_db",
           "open_state_db"]


def open_existing_memory_db() -> MemoryDB | None:
    """The installation's ``memory.db`` opened (`open_memory_db`), or None when it does
    not exist yet (nothing is created)."""
    from wardian._db import database_exists
    from wardian.config import memory_db_path

    if not database_exists(memory_db_path(create_dir=False)):
        return None
    return open_memory_db()
