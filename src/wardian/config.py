"""The data directory and typed settings.

Every path Wardian touches derives from `data_dir()`: ``WARDIAN_HOME`` when set,
else the platform's user data directory (platformdirs). Settings live in
``state.db`` (component ``settings``); each key is declared once in `SETTINGS`
with its type, default and description, and every value is validated on write.

Spec: "Agent memory" (disabled by default; read at launch), CLI.md settings keys.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlparse

from wardian._backend import Connection
from wardian._db import Migrations, NamedMigration, StateDB, atomic
from wardian._util import utc_now_iso
from wardian.errors import UsageError

if TYPE_CHECKING:
    from typing import Any

    from wardian._process import Namespaces

__all__ = [
    "SETTINGS",
    "Setting",
    "SettingsStore",
    "archives_dir",
    "data_dir",
    "memory_db_path",
    "namespace_mismatch",
    "owner_namespaces",
    "read_settings",
    "state_db_path",
    "user_library_dir",
]

ENV_HOME = "WARDIAN_HOME"


def data_dir(*, create: bool = True) -> Path:
    """The data directory: ``$WARDIAN_HOME`` if set, else the platform user data dir.

    Every other path derives from this one.

    Args:
        create: create the directory when missing (default); False for callers that must
            write nothing, such as a memory command that is about to fail closed.
    """
    override = os.environ.get(ENV_HOME)
    if override:
        base = Path(override).expanduser()
    else:
        import platformdirs  # only when needed: it costs several ms of start-up

        base = Path(platformdirs.user_data_dir("wardian", appauthor=False))
    if base.exists() and not base.is_dir():
        raise UsageError(
            f"the data directory {base} is not a directory"
            + (f" ({ENV_HOME}={override})" if override else ""),
            hint=f"point {ENV_HOME} at a directory (or remove the file that is in its place)",
        )
    if create:
        _open_data_dir(base)
    return base


_checked: set[Path] = set()


def _open_data_dir(base: Path) -> None:
    """Create the data directory as 0700, or tighten an existing wider one (once per
    process, with a one-line notice on stderr): its databases hold every agent's memory."""
    if base in _checked:
        return
    from wardian._fs import private_dir, tighten_dir

    try:
        if base.is_dir():
            wider = tighten_dir(base)
            if wider is not None:
                import sys

                sys.stderr.write(
                    f"wardian: made the data directory {base} private (mode {wider:04o} -> "
                    "0700): other local users could read every agent's memory\n")
        else:
            private_dir(base)
        _record_namespaces(base)
    except FileExistsError as exc:
        raise UsageError(
            f"cannot create the data directory {base}: {exc.filename or base} is a file",
            hint=f"point {ENV_HOME} at a directory (or remove the file that is in its place)",
        ) from exc
    except PermissionError as exc:
        raise UsageError(
            f"cannot create or use the data directory {base}: permission denied",
            hint=f"make it yours and writable, or point {ENV_HOME} at a folder you own",
        ) from exc
    _checked.add(base)


NAMESPACES_FILE = "namespaces.json"
"""In the data directory: the pid and user namespace of its owner (`owner_namespaces`)."""

_NAMESPACES_MAX_BYTES = 4096


def _record_namespaces(base: Path) -> None:
    """Write ``<base>/namespaces.json`` with this process's namespaces unless it exists
    (the first writer wins: a hard link never replaces a file); nothing off Linux."""
    from wardian._process import namespaces

    target = base / NAMESPACES_FILE
    mine = namespaces()
    if mine is None or target.exists():
        return
    from wardian._fs import write_private

    tmp = base / f".{NAMESPACES_FILE}.{os.getpid()}.new"
    try:
        write_private(tmp, json.dumps({"pid_ns": mine.pid, "user_ns": mine.user,
                                       "recorded_at": utc_now_iso()}) + "\n")
        os.link(tmp, target)
    except FileExistsError:
        pass
    except OSError:
        return  # a read-only data directory: `owner_namespaces` finds no record
    finally:
        tmp.unlink(missing_ok=True)


def owner_namespaces(*, record: bool = True) -> Namespaces | None:
    """The pid and user namespace of the data directory's owner (a
    `wardian._process.Namespaces`), or None off Linux.

    Recorded in ``<data dir>/namespaces.json`` by the first Wardian process that opens the
    data directory (normally the operator's first command) and never rewritten; launches,
    capabilities and the operator guard trust process identities read only in these
    namespaces. Without a data directory nothing is recorded and this process's own
    namespaces are returned (there is nothing to protect yet).

    Args:
        record: write the record when it is missing (False: a reader that writes nothing,
            such as ``doctor``, gets this process's namespaces instead).

    Raises:
        IdentityUnavailable (exit 3): the record cannot be read or is not one.
    """
    from wardian._process import Namespaces, namespaces
    from wardian.errors import IdentityUnavailable

    mine = namespaces()
    if mine is None:
        return None
    base = data_dir(create=False)
    if not base.is_dir():
        return mine
    path = base / NAMESPACES_FILE
    if not path.exists():
        if record:
            _record_namespaces(base)
        if not path.exists():  # nowhere to record it (read-only): nothing recorded to trust
            return mine
    try:
        from wardian._fs import read_regular_file

        raw = json.loads(read_regular_file(path, _NAMESPACES_MAX_BYTES))
        return Namespaces(int(raw["pid_ns"]), int(raw["user_ns"]))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise IdentityUnavailable(
            f"the namespace record {path} cannot be read ({exc})",
            hint="from your own shell, delete it; the next wardian command records your "
            "namespaces again") from None


def namespace_mismatch() -> str | None:
    """Why this process does not run in the data directory owner's pid and user namespace
    (one line naming both inode numbers), or None when it does (and off Linux).

    Raises:
        IdentityUnavailable (exit 3): the record cannot be read, or (Linux) this process's
            own namespaces cannot.
    """
    from wardian._process import namespaces
    from wardian.errors import IdentityUnavailable

    owner = owner_namespaces()
    if owner is None:
        return None
    mine = namespaces()
    if mine is None:
        raise IdentityUnavailable("this process's namespaces cannot be read (/proc/self/ns)",
                                  hint="run wardian where /proc is mounted")
    diffs = [f"{kind} namespace {have}, not the operator's {want}"
             for kind, have, want in (("pid", mine.pid, owner.pid),
                                      ("user", mine.user, owner.user)) if have != want]
    if not diffs:
        return None
    return (f"this process runs in {' and '.join(diffs)} (recorded in "
            f"{data_dir(create=False) / NAMESPACES_FILE})")


def memory_db_path(*, create_dir: bool = True) -> Path:
    """``memory.db``: records, revisions, sources, receipts, capabilities.

    Args:
        create_dir: create the data directory when missing (see `data_dir`).
    """
    return data_dir(create=create_dir) / "memory.db"


def state_db_path() -> Path:
    """``state.db``: settings, agents, invokers, events, runs, model catalog."""
    return data_dir() / "state.db"


def open_state_db() -> StateDB:
    """This installation's ``state.db`` (`state_db_path`), open and migrated: what an
    entry point passes to the state stores it uses (`StateDB.open`; same errors)."""
    return StateDB.open(state_db_path())


def user_library_dir() -> Path:
    """The user's editable blueprint library."""
    return data_dir() / "library"


def archives_dir() -> Path:
    """Where imported conversation archives are kept."""
    return data_dir() / "archives"


# --- settings ---------------------------------------------------------------------------


def _parse_bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"true", "1", "yes", "on"}:
        return True
    if lowered in {"false", "0", "no", "off"}:
        return False
    raise ValueError("expected true or false")


MIN_STARTUP_BUDGET_CHARS = 2_000
"""Smallest ``memory.startup_budget_chars``: the direct-retention instructions and headings
alone take about 1,450 characters and are always given, so a smaller budget could not be
kept (`wardian.memory.recall.build_startup_context`)."""


def _parse_budget(raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError("expected a whole number of characters") from None
    if value < MIN_STARTUP_BUDGET_CHARS:
        raise ValueError(
            f"expected at least {MIN_STARTUP_BUDGET_CHARS} characters (the direct-retention "
            "instructions alone take about 1,450)"
        )
    return value


def _parse_days(raw: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError("expected a whole number of days") from None
    if value < 1:
        raise ValueError("expected at least 1 day")
    return value


def _parse_url(raw: str) -> str:
    parsed = urlparse(raw.strip())
    if parsed.scheme not in {"http", "https"} or not parsed.netloc:
        raise ValueError("expected an http:// or https:// URL such as http://127.0.0.1:11434/v1")
    return raw.strip().rstrip("/")


class Setting(NamedTuple):
    """One typed setting: its parser, default, help text, and whether agents may override it."""

    key: str
    parse: Callable[[str], Any]
    default: Any
    description: str
    values: str
    per_agent: bool = False


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            "agent_memory.enabled", _parse_bool, False,
            "Direct memory, startup recall and capabilities for newly launched processes.",
            "true|false",
        ),
        Setting(
            "conversation_logging.enabled", _parse_bool, False,
            "Import session transcripts into the agent's archive at session close.",
            "true|false", per_agent=True,
        ),
        Setting(
            "memory.startup_budget_chars", _parse_budget, 12_000,
            "Size budget of the startup recall context, in characters.",
            f"integer >= {MIN_STARTUP_BUDGET_CHARS}",
        ),
        Setting(
            "memory.current_review_days", _parse_days, 14,
            "Age in days after which a `current` checkpoint is marked stale at startup and "
            "listed by `wardian garden memory stale`.",
            "integer >= 1",
        ),
        Setting(
            "providers.openai.base_url", _parse_url, "https://api.openai.com/v1",
            "Base URL of the OpenAI-compatible HTTP API (Ollama, vLLM, LM Studio, llama.cpp).",
            "http(s) URL",
        ),
        Setting(
            "providers.anthropic.base_url", _parse_url, "https://api.anthropic.com",
            "Base URL of the Anthropic Messages API.",
            "http(s) URL",
        ),
    )
}

_SETTINGS_MIGRATIONS = Migrations(sqlite=[
    NamedMigration("create_settings", """
    CREATE TABLE settings (
        key TEXT NOT NULL,
        agent_id TEXT NOT NULL DEFAULT '',
        value_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (key, agent_id)
    );
    """),
], postgres=[
    NamedMigration("create_settings", """
    CREATE TABLE settings (
        key TEXT NOT NULL,
        agent_id TEXT NOT NULL DEFAULT '',
        value_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (key, agent_id),
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY
    );
    """),
])


def _unknown_key(key: str) -> UsageError:
    return UsageError(
        f"unknown setting {key!r}",
        hint=f"valid keys: {', '.join(sorted(SETTINGS))}",
    )


def read_settings(conn: Connection) -> list[tuple[str, str | None, str]] | None:
    """Every stored setting as ``(key, agent_id or None, value_json)``; None when the
    ``settings`` table does not exist yet. Read-only, over any connection to ``state.db``
    (``wardian doctor`` passes a `wardian._db.open_readonly` one)."""
    from wardian._db import has_table

    if not has_table(conn, "settings"):
        return None
    rows = conn.execute("SELECT key, agent_id, value_json FROM settings").fetchall()
    return [(str(r[0]), r[1], str(r[2])) for r in rows]


class SettingsStore:
    """Typed settings in ``state.db``; values are validated by their `Setting` on write.

    Args:
        db: the open state database (`wardian.config.open_state_db`).
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db
        self.db.require("settings", _SETTINGS_MIGRATIONS)
        self.conn: Connection = self.db.conn

    @staticmethod
    def definition(key: str) -> Setting:
        """The declared setting for `key`.

        Raises:
            UsageError: the key is unknown (the message lists the valid keys).
        """
        try:
            return SETTINGS[key]
        except KeyError:
            raise _unknown_key(key) from None

    def get(self, key: str, *, agent_id: str | None = None) -> Any:
        """The effective value of `key`: agent override, else global value, else default.

        Read-only. Raises `UsageError` for an unknown key.
        """
        setting = self.definition(key)
        scopes = [agent_id, ""] if agent_id and setting.per_agent else [""]
        for scope in scopes:
            row = self.conn.execute(
                "SELECT value_json FROM settings WHERE key = ? AND agent_id = ?", (key, scope)
            ).fetchone()
            if row is not None:
                return json.loads(row[0])
        return setting.default

    def set(self, key: str, raw_value: str, *, agent_id: str | None = None) -> Any:
        """Validate `raw_value` for `key` and store it (atomic). Returns the parsed value.

        Raises:
            UsageError: unknown key, a bad value (the message names the valid values), or a
                per-agent value for a key that has no per-agent override.
        """
        setting = self.definition(key)
        if agent_id and not setting.per_agent:
            per_agent = sorted(k for k, s in SETTINGS.items() if s.per_agent)
            raise UsageError(
                f"setting {key!r} has no per-agent override",
                hint=f"per-agent keys: {', '.join(per_agent)}; drop --agent",
            )
        try:
            value = setting.parse(raw_value)
        except ValueError as exc:
            raise UsageError(
                f"bad value {raw_value!r} for {key}: {exc}", hint=f"valid values: {setting.values}"
            ) from None
        with atomic(self.conn):
            self.conn.execute(
                "INSERT INTO settings (key, agent_id, value_json, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (key, agent_id) DO UPDATE SET value_json = excluded.value_json,"
                " updated_at = excluded.updated_at",
                (key, agent_id or "", json.dumps(value), utc_now_iso()),
            )
        return value

    def items(self) -> list[tuple[Setting, Any, bool]]:
        """Every setting with its effective global value and whether it was set. Read-only."""
        rows = {
            r[0]: json.loads(r[1])
            for r in self.conn.execute("SELECT key, value_json FROM settings WHERE agent_id = ''")
        }
        return [
            (s, rows.get(s.key, s.default), s.key in rows)
            for s in sorted(SETTINGS.values(), key=lambda s: s.key)
        ]

    def agent_overrides(self, agent_id: str) -> dict[str, Any]:
        """The per-agent overrides stored for `agent_id`. Read-only."""
        return {
            r[0]: json.loads(r[1])
            for r in self.conn.execute(
                "SELECT key, value_json FROM settings WHERE agent_id = ?", (agent_id,)
            )
        }
