"""The model catalog: what each provider offers, discovered from the provider itself.

Stored in ``state.db`` (component ``model_catalog``), one row per provider: the last good
model list with the time it was fetched, plus the last refresh error. A failed refresh
keeps the last good list and records why; discovery has a timeout and fails closed (no
list = nothing validates). The builtin provider's catalog is static and always
"refreshed". No API keys are ever stored here.

Spec: DESIGN.md "Blueprints, runs, providers".
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from wardian._db import NamedMigration, StateDB, atomic
from wardian._util import utc_now_iso
from wardian.errors import UsageError
from wardian.providers.base import ModelInfo
from wardian.providers.errors import (
    CatalogNotRefreshed,
    DiscoveryFailed,
    ProviderError,
    UnknownModel,
    UnsupportedEffort,
    refresh_command,
)
from wardian.providers.registry import get_adapter

__all__ = ["DISCOVERY_TIMEOUT_S", "CatalogEntry", "CatalogRefreshFailed", "ModelCatalog"]

DISCOVERY_TIMEOUT_S = 30.0
"""Default limit, in seconds, for one provider's model discovery."""

_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_model_catalog", """
    CREATE TABLE model_catalog (
        provider TEXT PRIMARY KEY,
        models_json TEXT,
        fetched_at TEXT,
        last_attempt_at TEXT NOT NULL,
        last_error TEXT
    );
    """),
    # The hint of the last refresh error on its own, so a later message can say how to fix
    # it and then how to retry in one sentence (last_error keeps the whole rendered text).
    NamedMigration("add_model_catalog_last_error_hint",
                   "ALTER TABLE model_catalog ADD COLUMN last_error_hint TEXT;"),
]


class CatalogRefreshFailed(CatalogNotRefreshed):
    """No model list was ever fetched because the refresh failed (exit 2); says why and when.

    A `CatalogNotRefreshed`, so callers that catch that keep working; the message names the
    time and cause of the last failed attempt, and the hint says how to fix it, then retry:
    ``the model catalog of codex was never fetched: its last refresh failed at T: the `codex`
    command was not found on PATH (install the codex CLI …, then run `wardian agent models
    --provider codex --refresh`)``.

    Args:
        provider: the provider name.
        attempted_at: UTC ISO time of the failed refresh.
        error: the failure as stored (`CatalogEntry.last_error`).
        error_hint: how to fix the failure, when the stored error had a hint.
    """

    def __init__(
        self, provider: str, attempted_at: str, error: str, error_hint: str | None = None
    ) -> None:
        self.provider = provider
        self.attempted_at = attempted_at
        self.error = error
        reason = error
        if error_hint and reason.endswith(f" ({error_hint})"):
            reason = reason[: -len(f" ({error_hint})")]
        reason = reason.removeprefix(f"{provider}: ")
        retry = f"run {refresh_command(provider)}"
        UsageError.__init__(
            self,
            f"the model catalog of {provider} was never fetched: its last refresh failed "
            f"at {attempted_at}: {reason}",
            hint=f"{error_hint}, then {retry}" if error_hint else retry,
        )


@dataclass
class CatalogEntry:
    """One provider's catalog.

    Attributes:
        provider: provider name.
        models: the last good list (empty when never fetched).
        fetched_at: UTC ISO time of the last good fetch, or None if never.
        last_error: why the last refresh failed, or None when it succeeded.
        last_attempt_at: UTC ISO time of the last refresh attempt.
        last_error_hint: how to fix the last refresh error (its hint), when it had one.
        static: the catalog is built in (the builtin provider), not discovered.
    """

    provider: str
    models: list[ModelInfo] = field(default_factory=list)
    fetched_at: str | None = None
    last_error: str | None = None
    last_attempt_at: str | None = None
    static: bool = False
    last_error_hint: str | None = None

    def find(self, model_id: str) -> ModelInfo | None:
        """The model with exactly this id, or None."""
        return next((m for m in self.models if m.id == model_id), None)

    def require_list(self) -> None:
        """Raise unless a model list is available (built in, or fetched at least once).

        Raises:
            CatalogRefreshFailed (exit 2): never fetched, and the last refresh failed
                (when and why, how to fix it, the command to retry).
            CatalogNotRefreshed (exit 2): never fetched (the command to run).
        """
        if self.static or self.fetched_at is not None:
            return
        if self.last_error is not None and self.last_attempt_at is not None:
            raise CatalogRefreshFailed(self.provider, self.last_attempt_at, self.last_error,
                                       self.last_error_hint)
        raise CatalogNotRefreshed(self.provider)

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON-ready dict (the `--json` output of `agent models`)."""
        return {
            "provider": self.provider,
            "fetched_at": self.fetched_at,
            "last_attempt_at": self.last_attempt_at,
            "last_error": self.last_error,
            "static": self.static,
            "models": [m.model_dump() for m in self.models],
        }


class ModelCatalog:
    """Read, refresh and validate against provider model catalogs.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("model_catalog", _MIGRATIONS)
        self.conn: sqlite3.Connection = self.db.conn

    def get(self, provider: str) -> CatalogEntry | None:
        """The stored catalog of `provider`, None if never attempted. Read-only.

        Raises:
            UnknownProvider (exit 2): `provider` is not registered.
        """
        adapter = get_adapter(provider)
        if adapter.name == "builtin":
            return self._static(provider)
        row = self.conn.execute(
            "SELECT * FROM model_catalog WHERE provider = ?", (provider,)
        ).fetchone()
        if row is None:
            return None
        models = [ModelInfo.model_validate(m) for m in json.loads(row["models_json"] or "[]")]
        return CatalogEntry(provider, models, row["fetched_at"], row["last_error"],
                            row["last_attempt_at"], last_error_hint=row["last_error_hint"])

    def _static(self, provider: str) -> CatalogEntry:
        models = get_adapter(provider).discover_models()
        return CatalogEntry(provider, models, fetched_at=None, static=True)

    def refresh(self, provider: str, *, timeout_s: float = DISCOVERY_TIMEOUT_S) -> CatalogEntry:
        """Ask the provider for its models and store them (atomic).

        On failure the last good list is kept and the error recorded; the returned entry
        has `last_error` set. With no previous list the failure is raised (fail closed).

        Args:
            timeout_s: discovery limit in seconds.

        Raises:
            UnknownProvider (exit 2): `provider` is not registered.
            DiscoveryFailed: discovery failed and there is no earlier list to keep.
        """
        adapter = get_adapter(provider)
        if adapter.name == "builtin":
            return self._static(provider)
        now = utc_now_iso()
        try:
            models = adapter.discover_models(timeout_s)
            if not models:
                raise DiscoveryFailed("discovery returned no models", provider=provider)
        except ProviderError as exc:
            return self._keep_last_good(provider, now, DiscoveryFailed.wrap(exc, provider))
        payload = json.dumps([m.model_dump() for m in models])
        with atomic(self.conn):
            self.conn.execute(
                "INSERT INTO model_catalog (provider, models_json, fetched_at, last_attempt_at,"
                " last_error, last_error_hint) VALUES (?, ?, ?, ?, NULL, NULL)"
                " ON CONFLICT (provider) DO UPDATE SET"
                " models_json = excluded.models_json, fetched_at = excluded.fetched_at,"
                " last_attempt_at = excluded.last_attempt_at, last_error = NULL,"
                " last_error_hint = NULL",
                (provider, payload, now, now),
            )
        entry = self.get(provider)
        assert entry is not None
        return entry

    def _keep_last_good(self, provider: str, now: str, error: DiscoveryFailed) -> CatalogEntry:
        """Record a failed refresh; return the last good list, or raise `error` if none."""
        with atomic(self.conn):
            self.conn.execute(
                "INSERT INTO model_catalog (provider, models_json, fetched_at, last_attempt_at,"
                " last_error, last_error_hint) VALUES (?, NULL, NULL, ?, ?, ?)"
                " ON CONFLICT (provider) DO UPDATE"
                " SET last_attempt_at = excluded.last_attempt_at,"
                " last_error = excluded.last_error, last_error_hint = excluded.last_error_hint",
                (provider, now, error.render(), error.hint),
            )
        entry = self.get(provider)
        if entry is None or entry.fetched_at is None:
            raise error
        return entry

    def validate_selection(
        self,
        provider: str,
        model: str | None,
        effort: str | None,
        *,
        path: str | None = None,
        step: bool = False,
    ) -> ModelInfo | None:
        """Check a selection against the stored catalog. Read-only.

        Args:
            path: the field path of the assignment, for messages (e.g. ``curator``).
            step: the selection runs a role step, which also refuses an effort the
                provider would not send as the request's effort
                (`ProviderAdapter.check_step_effort`); an agent's own selection may keep
                it (the host runs it interactively).

        Returns:
            The catalog's entry for `model`, or None when no model was given.

        Raises:
            UnknownProvider (exit 2): lists the known providers.
            CatalogNotRefreshed (exit 2): says which command to run; a
                `CatalogRefreshFailed` when a refresh was attempted and failed (when, why,
                how to fix it, then the command to retry).
            UnknownModel (exit 2): the model is not in the catalog.
            UnsupportedEffort (exit 2): the provider/model has no such effort level, or
                (with `step`) the provider would not send it as the request's effort.
        """
        adapter = get_adapter(provider)
        entry = self.get(provider)
        if entry is None:
            raise CatalogNotRefreshed(provider)
        entry.require_list()
        info = None
        if model is not None:
            info = entry.find(model)
            if info is None:
                raise UnknownModel(provider, model, [m.id for m in entry.models],
                                   path=f"{path}.model" if path else None)
        if effort is None:
            return info
        effort_path = f"{path}.effort" if path else None
        if not adapter.supports_effort:
            raise UnsupportedEffort(provider, model, effort, [], path=effort_path)
        if info is not None:
            supported = list(info.efforts)
        else:
            supported = sorted({e for m in entry.models for e in m.efforts})
        if effort not in supported:
            raise UnsupportedEffort(provider, model, effort, supported, path=effort_path)
        if step:
            adapter.check_step_effort(model, effort, supported, path=effort_path)
        return info
