"""The model catalog as ``wardian agent models`` shows it (CLI.md "agent models"): each
provider's model ids, effort levels and default effort, discovered from the provider and
cached with their fetch time (`wardian.providers.catalog`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wardian.providers.errors import refresh_command

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.providers.catalog import CatalogEntry

__all__ = ["model_list", "refresh_command"]


def model_list(state: StateDB, provider: str, *, refresh: bool = False, timeout_s: float = 30.0
               ) -> CatalogEntry:
    """`provider`'s cached model list, asking the provider for its current one first when
    `refresh` (waiting at most `timeout_s` seconds).

    A failed refresh keeps the last good list: the entry's ``last_error`` and
    ``last_attempt_at`` then say why and when.

    Raises:
        CatalogNotRefreshed (exit 2): no list at all (never refreshed, or only failed
            refreshes); names when and why, and the command to retry.
    """
    from wardian.providers.catalog import ModelCatalog
    from wardian.providers.errors import CatalogNotRefreshed

    catalog = ModelCatalog(state)
    entry = catalog.refresh(provider, timeout_s=timeout_s) if refresh else \
        catalog.get(provider)
    if entry is None:
        raise CatalogNotRefreshed(provider)
    entry.require_list()
    return entry
