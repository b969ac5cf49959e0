"""PostgreSQL backend: one database for a team, schemas ``memory`` and ``state``.

Selected by ``WARDIAN_DATABASE_URL=postgresql://…`` or a ``database.url`` file in the data
directory (`configured_url`); without either, SQLite files stay the embedded default.
Driver: psycopg 3 with its pool (the optional extra ``wardian[postgres]``), imported only
when a URL is configured, so the SQLite path loads nothing of it.

The stores write SQL both engines run as written, placeholders aside (where the engines
differ they ask the database's backend, `Database.backend` in `wardian._backend`); this
module bridges the rest:

* `PgConnection` is a `wardian._backend.Connection`, what the stores use (``execute``,
  ``executemany``, ``in_transaction``, ``total_changes``, rows readable by index and by
  column name) over one pooled psycopg connection whose ``search_path`` is its schema.
* `translate` converts a statement's ``?`` placeholders to psycopg's (cached), nothing
  else. Migrations are not translated: each component has its own PostgreSQL list
  (`wardian._db.Migrations`, `wardian.memory.schema_pg`), run as written.
* psycopg's errors are raised as they are (a unique violation is psycopg's
  ``UniqueViolation``); the stores catch them as the backend names them
  (`wardian._backend.PgBackend.IntegrityError` and its neighbours).
* A write transaction (`PgConnection.atomic`) takes a transaction-scoped advisory lock
  named after its schema first: like SQLite's ``BEGIN IMMEDIATE`` on one file, one writer
  per schema at a time, so every read-then-write of the stores keeps its SQLite meaning
  across machines. A *narrow* transaction (``atomic(locks=[...])``: the hot paths of runs
  and session events, whose guarantees rest on row locks, unique constraints and the
  per-key advisory locks it names) holds that lock shared instead, so narrow writers on
  several machines run side by side while every other writer still runs alone. Nested
  blocks are savepoints.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wardian._backend import Connection
from wardian._db import ENV_DATABASE_URL, URL_FILE
from wardian.errors import StoreError, UsageError

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = [
    "ENV_URL",
    "MIN_SERVER_VERSION",
    "URL_FILE",
    "ConnectError",
    "PgConnection",
    "PgRow",
    "close_pools",
    "configured_url",
    "connect_failure",
    "is_postgres_url",
    "redact_url",
    "translate",
    "validate_url",
]

ENV_URL = ENV_DATABASE_URL
"""``WARDIAN_DATABASE_URL``."""
# URL_FILE: a file in the data directory whose first line is the database URL (a
# settings-level config that `wardian settings` cannot hold: settings live in the database).

SCHEMES = ("postgresql", "postgres")
MIN_SERVER_VERSION = 14
"""The oldest PostgreSQL major version Wardian runs on: the stemmer of the ``memory``
schema's full-text index calls ``string_to_table`` (new in 14); the triggers'
``EXECUTE FUNCTION`` needs 11, the identity keys 10."""
INSTALL_HINT = "install the PostgreSQL extra: pip install 'wardian[postgres]'"


def is_postgres_url(value: str) -> bool:
    """Whether `value` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    scheme, sep, _ = value.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def configured_url(folder: Path | None = None) -> str | None:
    """The PostgreSQL URL this installation uses, or None for the SQLite default.

    ``WARDIAN_DATABASE_URL`` wins; else the first line of ``database.url`` in `folder`
    (default: the data directory). An empty variable means SQLite.

    Raises:
        UsageError: the URL is not a PostgreSQL URL (exit 2).
    """
    raw = os.environ.get(ENV_URL)
    where = ENV_URL
    if raw is None:
        if folder is None:
            from wardian.config import data_dir

            folder = data_dir(create=False)
        file = folder / URL_FILE
        try:
            raw = file.read_text(encoding="utf-8").strip().splitlines()[0]
        except (OSError, IndexError, UnicodeDecodeError):
            return None
        where = str(file)
    raw = raw.strip()
    if not raw:
        return None
    return validate_url(raw, where=where)


def validate_url(url: str, *, where: str = "--to") -> str:
    """`url` if it is a well-formed PostgreSQL URL.

    Raises:
        UsageError: another scheme, or a URL libpq cannot parse (exit 2), naming `where`.
    """
    if not is_postgres_url(url):
        raise UsageError(
            f"{where}: {redact_url(url)!r} is not a PostgreSQL URL",
            hint="use postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
        )
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError as exc:
        raise UsageError(f"{where}: PostgreSQL needs psycopg", hint=INSTALL_HINT) from exc

    try:
        from urllib.parse import urlsplit

        if "," not in url.partition("@")[2].partition("/")[0]:  # one host (not a list)
            urlsplit(url).port  # noqa: B018 (a malformed port raises ValueError)
        conninfo_to_dict(url)
    except (psycopg.ProgrammingError, ValueError) as exc:
        raise UsageError(
            f"{where}: cannot parse the URL {redact_url(url)!r}: {exc}",
            hint="use postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
        ) from exc
    return url


def redact_url(url: str) -> str:
    """`url` with any password replaced by ``***`` (for messages and logs): the one after
    the user name and a ``password=`` parameter."""
    url = re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url, flags=re.IGNORECASE)


class ConnectError(StoreError):
    """The server cannot be reached or refused the connection (`connect_failure` of the
    message says why): the database cannot be used at all."""


def _reason(exc: BaseException) -> str:
    """libpq's reason for a refused connection: its first line (the next ones are advice
    the hint gives), any password redacted."""
    return redact_url((str(exc).strip().splitlines() or [type(exc).__name__])[0])


def connect_failure(message: str) -> str:
    """Why libpq refused a connection, from its message (psycopg gives no SQLSTATE for
    one): ``auth`` (wrong password, unknown role, a role that may not log in, no
    ``pg_hba.conf`` line), ``database`` (the database does not exist), ``denied`` (no
    CONNECT on it), else ``reach`` (refused, unknown host, timed out: no server answers)."""
    # Past the "connection to server at HOST" prefix, which names hosts, not reasons.
    text = message.lower().rpartition(" failed: ")[2] or message.lower()
    if "database" in text and "does not exist" in text:
        return "database"
    if "permission denied for database" in text:
        return "denied"
    if any(words in text for words in (
            "authentication failed", "no password supplied", 'role "', "pg_hba.conf",
            "not permitted to log in")):
        return "auth"
    return "reach"


_CONNECT_FIX = {
    "reach": "check that the server runs at that host and port (pg_isready -h HOST -p PORT)",
    "auth": "check the user name and password in the URL (or ~/.pgpass) and the server's "
            "pg_hba.conf line for this user",
    "database": "create the database (createdb NAME, as its owner-to-be) or fix its name "
                "in the URL",
    "denied": "the database's owner can GRANT CONNECT ON DATABASE NAME TO this role",
}
"""How to fix each `connect_failure` kind."""


# --- the pool --------------------------------------------------------------------------

_savepoints = itertools.count()

_pools: dict[tuple[int, str], psycopg_pool.ConnectionPool[Any]] = {}
_pools_lock = threading.Lock()


def _pool(url: str) -> psycopg_pool.ConnectionPool[Any]:
    """This process's pool for `url` (created on first use; closed at exit)."""
    key = (os.getpid(), url)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            try:
                from psycopg_pool import ConnectionPool
            except ImportError as exc:
                raise StoreError("PostgreSQL needs psycopg_pool", hint=INSTALL_HINT) from exc
            import psycopg

            # The pool retries a refused connection until its timeout and then says only
            # that; one direct attempt first gives libpq's reason at once.
            try:
                psycopg.connect(url, connect_timeout=10).close()
            except psycopg.Error as exc:
                raise ConnectError(
                    f"cannot connect to PostgreSQL at {redact_url(url)}: "
                    f"{_reason(exc)}",
                    hint=f"{_CONNECT_FIX[connect_failure(str(exc))]}, or unset {ENV_URL} "
                         "to use the local SQLite files",
                ) from exc
            # min_size=0: a short CLI command opens the one connection it uses, no more;
            # a long-running worker keeps what its threads returned.
            pool = ConnectionPool(
                url, min_size=0, max_size=16, open=False, name="wardian",
                kwargs={"autocommit": True, "connect_timeout": 10},
            )
            pool.open()
            _pools[key] = pool
        return pool


def _connect_read_only(url: str) -> psycopg.Connection[Any]:
    """A connection of its own to `url` on which nothing can be written.

    Raises:
        StoreError: the server cannot be reached or refuses the login (libpq's reason).
    """
    return _connect_own(url, read_only=True)


def _connect_own(url: str, *, read_only: bool = False,
                 application_name: str | None = None) -> psycopg.Connection[Any]:
    """A connection of its own to `url` (autocommit, not the pool's): a session lock's or a
    read-only check's. The one place such a connection is opened, so every caller reports
    a failure the same way, with any password in the URL or libpq's text redacted.
    `application_name` names the session in ``pg_stat_activity`` (others can read it).

    Raises:
        StoreError: psycopg is missing, or the server cannot be reached or refuses the login.
    """
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError("PostgreSQL needs psycopg", hint=INSTALL_HINT) from exc
    options = "-c default_transaction_read_only=on" if read_only else None
    named: dict[str, Any] = {"application_name": application_name} if application_name else {}
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10, options=options,
                               **named)
    except psycopg.Error as exc:
        raise ConnectError(
            f"cannot connect to PostgreSQL at {redact_url(url)}: "
            f"{_reason(exc)}",
            hint="check that the server runs and accepts this user (pg_isready)") from exc


def close_pools(url: str | None = None) -> None:
    """Close this process's pools (for `url` only, when given); idempotent."""
    with _pools_lock:
        keys = [k for k in _pools if url is None or k[1] == url]
        pools = [_pools.pop(k) for k in keys]
    for pool in pools:
        pool.close()


atexit.register(close_pools)


# --- rows and errors -------------------------------------------------------------------


_HIDDEN = frozenset({"rowid", "fts"})
"""Columns that stand in for SQLite's implicit rowid and its FTS5 index: ``keys()`` leaves
them out (``dict(row)``, ``Model(**row)``), as SQLite's ``SELECT *`` does; by name they
still read."""


class PgRow(tuple[Any, ...]):
    """A result row readable like `sqlite3.Row`: by index, by column name, ``keys()``."""

    _names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> PgRow:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key.lower()])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order (as `sqlite3.Row.keys`), less `_HIDDEN` ones."""
        return [n for n in self._names if n not in _HIDDEN]


def _row_factory(cursor: psycopg.Cursor[Any]) -> Any:
    names: dict[str, int] = {}
    for i, column in enumerate(cursor.description or ()):
        names.setdefault(column.name, i)

    def make(values: Sequence[Any]) -> PgRow:
        return PgRow([bytes(v) if isinstance(v, memoryview) else v for v in values], names)

    return make


# --- SQL translation -------------------------------------------------------------------

@functools.lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """`sql` with ``?`` placeholders, as psycopg runs it: each ``?`` outside a string
    literal becomes ``%s`` and every ``%`` is doubled. The only rewrite: `sql` must
    otherwise be SQL that PostgreSQL runs as written."""
    out: list[str] = []
    quote: str | None = None
    for part in re.split(r"('|\"|\?|%)", sql):
        if part in ("'", '"'):
            quote = None if quote == part else (quote or part)
            out.append(part)
        elif part == "%":
            out.append("%%")
        elif part == "?" and quote is None:
            out.append("%s")
        else:
            out.append(part)
    return "".join(out)


# --- the connection --------------------------------------------------------------------


def _param(value: Any) -> Any:
    # SQLite stores a bool as 0/1 in an INTEGER column; PostgreSQL would refuse a boolean.
    return int(value) if isinstance(value, bool) else value


class _Cursor:
    """The rows of one statement, read like a `sqlite3.Cursor`: ``fetchone``, ``fetchall``,
    iteration and ``rowcount`` (no ``lastrowid``: PostgreSQL returns ids by ``RETURNING``)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._next = 0
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        if self._next >= len(self._rows):
            return None
        row = self._rows[self._next]
        self._next += 1
        return row

    def fetchall(self) -> list[Any]:
        rows = self._rows[self._next:]
        self._next = len(self._rows)
        return rows

    def __iter__(self) -> Iterator[Any]:
        while (row := self.fetchone()) is not None:
            yield row


def schema_lock_key(schema: str) -> int:
    """The advisory-lock key that serialises writers of one schema (a signed 64-bit int)."""
    return zlib.crc32(f"wardian:{schema}".encode()) - 2**31


def key_lock_key(schema: str, key: str) -> int:
    """The advisory-lock key of one narrow block's `key` in `schema` (`PgConnection.atomic`):
    64 bits of a SHA-256 of schema and key. Two keys sharing a number (a 2**-64 chance)
    would only make their blocks wait for each other, never break one."""
    import hashlib

    digest = hashlib.sha256(f"wardian:{schema}:key:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PgConnection:
    """One pooled PostgreSQL connection, used by a `wardian._db.Database` like a
    `wardian._backend.Connection` (see the module docstring for what it offers).

    Args:
        url: a validated ``postgresql://`` URL.
        schema: ``memory`` or ``state``; created if missing, set as ``search_path``.
        read_only: a connection of its own (not the pool's) whose every transaction is
            read-only, and the schema is not created: what ``wardian doctor`` reads with.

    Raises:
        StoreError: the server cannot be reached or refuses the login (exit 1, with a
            hint naming the URL without its password).
    """

    def __init__(self, url: str, schema: str, *, read_only: bool = False) -> None:
        self.url = url
        self.schema = schema
        self.total_changes = 0
        self.before_write_commit: str | None = None
        """A statement run at the end of every write transaction that changed rows."""
        self._lock_mode: str | None = None
        """The schema lock the open transaction holds: None, ``shared`` or ``exclusive``."""
        self._held_keys: set[int] = set()
        """The key locks (`key_lock_key`) the open transaction holds."""
        self._closed = False
        self._conn: psycopg.Connection[Any]
        self._pool: psycopg_pool.ConnectionPool[Any] | None = None
        if read_only:
            self._conn = _connect_read_only(url)
            self._conn.row_factory = _row_factory
            with self._conn.cursor() as cur:
                cur.execute(f'SET search_path TO "{schema}"')
            return
        self._pool = _pool(url)
        try:
            self._conn = self._pool.getconn(timeout=15)
        except Exception as exc:  # PoolTimeout wraps the libpq refusal
            raise ConnectError(
                f"cannot connect to PostgreSQL at {redact_url(url)}: "
                f"{_reason(exc)}",
                hint="check that the server runs and accepts this user "
                     f"(pg_isready), or unset {ENV_URL} to use the local SQLite files",
            ) from exc
        try:
            self._conn.row_factory = _row_factory
            with self._conn.cursor() as cur:
                # Two processes creating the schema at once race on the catalog; the
                # advisory lock (session scope, released at once) serialises them.
                cur.execute("SELECT pg_advisory_lock(%s)", (schema_lock_key("ddl"),))
                try:
                    cur.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                finally:
                    cur.execute("SELECT pg_advisory_unlock(%s)", (schema_lock_key("ddl"),))
                cur.execute(f'SET search_path TO "{schema}"')
        except Exception as exc:
            self._pool.putconn(self._conn)
            import psycopg

            if isinstance(exc, psycopg.errors.InsufficientPrivilege):
                raise StoreError(
                    f"cannot open the schema {schema} at {redact_url(url)}: {exc}",
                    hint="`wardian doctor --check database` names the privilege this "
                         "role lacks and the GRANT that gives it") from exc
            raise

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this connection (`Connection.in_transaction`)."""
        from psycopg.pq import TransactionStatus

        return self._conn.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, params: Sequence[Any] | Iterable[Any] = ()) -> _Cursor:
        """Run one statement written for SQLite (`translate`d) with `params`.

        Raises:
            psycopg.Error: what the server said, as psycopg raises it.
        """
        with self._conn.cursor() as cur:
            # Always a list, never None: psycopg then reads the doubled ``%%``.
            cur.execute(translate(sql), [_param(p) for p in params])
            # Read while the cursor is open: a closed one has no description, and every
            # SELECT then counted as a change (so recall's caches, keyed on
            # `total_changes`, were thrown away after each query).
            wrote = cur.description is None
            rows = [] if wrote else cur.fetchall()
            count = cur.rowcount
        if count > 0 and wrote:
            self.total_changes += count
        return _Cursor(rows, count)

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> _Cursor:
        """Run one statement for each parameter tuple in `seq`.

        Raises:
            psycopg.Error: what the server said (as `execute`).
        """
        batch = [[_param(v) for v in p] for p in seq]
        if not batch:
            return _Cursor([], 0)
        with self._conn.cursor() as cur:
            cur.executemany(translate(sql), batch)
            count = cur.rowcount
        self.total_changes += max(count, 0)
        return _Cursor([], count)

    def run_script(self, script: str) -> None:
        """Run DDL written for PostgreSQL as is (no placeholder translation).

        Raises:
            psycopg.Error: what the server said.
        """
        with self._conn.cursor() as cur:
            cur.execute(script.encode())

    @contextmanager
    def atomic(self, locks: Sequence[str] | None = None) -> Iterator[PgConnection]:
        """One write transaction, or a savepoint when nested; commits at the end, rolls
        back on any exception and re-raises it.

        Args:
            locks: None (the default): the schema's writer lock, exclusive — the block sees
                the schema as SQLite's ``BEGIN IMMEDIATE`` would, alone among writers.
                A sequence: a *narrow* block — the schema lock shared (narrow blocks run
                side by side; every exclusive one waits for them and they for it), plus a
                transaction-scoped advisory lock per key (`key_lock_key`; taken in sorted
                order), for a read-then-write its row locks and unique constraints do not
                cover. Empty: row locks only.

        Nested: a narrow block inside any transaction takes only its keys. A default block
        nested in a narrow one takes the exclusive lock then (an upgrade, held to the end of
        the transaction), so code written for the exclusive meaning keeps it wherever it is
        called from; two such upgrades at once are a deadlock PostgreSQL breaks by failing
        one (psycopg's ``DeadlockDetected``, nothing written). The hot paths that run side by
        side (run creation, claims, steps, the event queue) nest only narrow blocks.
        """
        # Transaction control by hand, each step one round trip with the lock statements
        # beside it (``BEGIN; SELECT pg_advisory_xact_lock…``): a write transaction costs a
        # round trip at each end and nothing more, which is most of what a short one costs
        # a busy server. Only integers are spliced into these commands.
        import psycopg

        outer = not self.in_transaction
        # What a rolled-back savepoint gives back: locks taken after it are released.
        saved = (self._lock_mode, set(self._held_keys))
        if outer:
            self._lock_mode = None
            self._held_keys = set()
            opening = ["BEGIN"]
        else:
            savepoint = f"wardian_sp_{next(_savepoints)}"
            opening = [f"SAVEPOINT {savepoint}"]
        before = self.total_changes
        try:
            self._command(opening + self._lock_statements(locks))
            yield self
        except BaseException:
            try:
                self._command(["ROLLBACK"] if outer else
                              [f"ROLLBACK TO SAVEPOINT {savepoint}",
                               f"RELEASE SAVEPOINT {savepoint}"])
            except psycopg.Error:
                pass  # the connection broke, or the transaction did: its error says more
            finally:
                self._lock_mode, self._held_keys = (None, set()) if outer else saved
            raise
        if not outer:
            self._command([f"RELEASE SAVEPOINT {savepoint}"])
            return
        closing = ["COMMIT"]
        if self.before_write_commit and self.total_changes != before:
            closing.insert(0, self.before_write_commit)
        try:
            self._command(closing)
        except BaseException:
            if self.in_transaction:  # the bump failed: COMMIT was never reached
                with contextlib.suppress(psycopg.Error):
                    self._command(["ROLLBACK"])
            raise
        finally:
            self._lock_mode = None

    def _lock_statements(self, locks: Sequence[str] | None) -> list[str]:
        """The statements taking what `locks` asks for (see `atomic`) that this transaction
        does not hold yet: the schema lock in that mode or a stronger one, then each key."""
        schema_key = schema_lock_key(self.schema)
        if locks is None:
            if self._lock_mode == "exclusive":
                return []
            self._lock_mode = "exclusive"
            return [f"SELECT pg_advisory_xact_lock({schema_key})"]
        out = []
        if self._lock_mode is None:
            self._lock_mode = "shared"
            out.append(f"SELECT pg_advisory_xact_lock_shared({schema_key})")
        for key in sorted({key_lock_key(self.schema, k) for k in locks} - self._held_keys):
            self._held_keys.add(key)
            out.append(f"SELECT pg_advisory_xact_lock({key})")
        return out

    def _command(self, statements: list[str]) -> None:
        """Run parameterless `statements` in one round trip (the simple query protocol).

        Raises:
            psycopg.Error: what the server said.
        """
        with self._conn.cursor() as cur:
            cur.execute("; ".join(statements).encode())

    def close(self) -> None:
        """Give the connection back to the pool (rolled back if a transaction was open)."""
        if self._closed:
            return
        self._closed = True
        if self._pool is None:
            self._conn.close()
            return
        try:
            self._pool.putconn(self._conn)
        except Exception:  # the pool was closed first (interpreter exit)
            self._conn.close()


# --- copying a SQLite file in (`wardian db migrate --to`) -------------------------------

_SKIPPED_TABLES = re.compile(r"^(sqlite_.*|records_fts.*|schema_migrations|memory_version)$")
"""SQLite's own tables, FTS5's shadow tables (PostgreSQL indexes the records itself), the
migration bookkeeping (the target has its own, from the same migrations) and the write
counter of the file (the target keeps its own)."""


def sqlite_tables(source: Connection) -> list[str]:
    """The data tables of a SQLite file, parents before the tables whose foreign keys point
    at them (so rows copy in that order)."""
    names = sorted(r[0] for r in source.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")
        if not _SKIPPED_TABLES.match(r[0]))
    parents = {t: {str(r[2]) for r in source.execute(f'PRAGMA foreign_key_list("{t}")')}
               - {t} for t in names}
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [t for t in names if t not in ordered and parents[t] <= set(ordered)]
        if not ready:  # a cycle (none today): copy the rest as listed
            ready = [t for t in names if t not in ordered]
        ordered.extend(ready)
    return ordered


def copy_table(source: Connection, target: PgConnection, table: str, *,
               schema: str, batch: int = 1000) -> int:
    """Copy every row of `table` from a SQLite file into ``schema.table``, values as they
    are (ids, timestamps, vectors); SQLite's implicit ``rowid`` too where the target keeps
    one (``records.rowid``). Identity sequences are moved past the copied ids. Runs inside
    the caller's transaction on `target`.

    Returns:
        How many rows were copied.

    Raises:
        StoreError: the target lacks the table or one of its columns (the copy would lose
            data), or the server refused a row.
    """
    columns = [str(r[1]) for r in source.execute(f'PRAGMA table_info("{table}")')]
    found = target.execute(
        "SELECT column_name, is_identity FROM information_schema.columns"
        " WHERE table_schema = ? AND table_name = ?", (schema, table)).fetchall()
    present = {str(r[0]): r[1] == "YES" for r in found}
    if not present:
        raise StoreError(f"the target has no table {schema}.{table}",
                         hint="the target's Wardian schema is older than this one")
    missing = [c for c in columns if c not in present]
    if missing:
        raise StoreError(f"the target's {schema}.{table} has no column {', '.join(missing)}",
                         hint="the target's Wardian schema differs from this one")
    if "rowid" in present and "rowid" not in columns:
        columns.append("rowid")
    quoted = ", ".join(f'"{c}"' for c in columns)
    insert = (f'INSERT INTO "{schema}"."{table}" ({quoted})'
              f" VALUES ({', '.join('?' * len(columns))})")
    rows = iter(source.execute(f'SELECT {quoted} FROM "{table}"'))
    copied = 0
    while chunk := list(itertools.islice(rows, batch)):
        target.executemany(insert, [tuple(r) for r in chunk])
        copied += len(chunk)
    for column, identity in present.items():
        if identity and column in columns and copied:
            target.execute(
                f"SELECT setval(pg_get_serial_sequence(?, ?), (SELECT MAX(\"{column}\")"
                f' FROM "{schema}"."{table}"))', (f'"{schema}"."{table}"', column))
    return copied


def table_exists(conn: PgConnection, schema: str, table: str) -> bool:
    """Whether ``schema.table`` exists (read-only)."""
    return conn.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        (schema, table)).fetchone() is not None


class SessionLock:
    """A PostgreSQL session advisory lock held on its own connection (not the pool's) for
    as long as the holder wants it: one holder across every machine sharing the database,
    and released by the server when the holder's connection ends, also when the process
    is killed (kill -9 closes its socket).

    Get one with `try_acquire` (at once) or `wait_acquire` (a standby); `release` ends it.
    The session's ``application_name`` (`name_session`) tells others who holds or waits
    (`wardian._pg_coord.lock_sessions`).
    """

    def __init__(self, conn: psycopg.Connection[Any], name: str) -> None:
        self._conn = conn
        self.name = name

    @classmethod
    def try_acquire(cls, url: str, name: str, *,
                    application_name: str | None = None) -> SessionLock | None:
        """The lock `name` in the database `url`, or None when another session holds it;
        the session is named `application_name` (at most 63 bytes) when given.

        Raises:
            StoreError: the server cannot be reached.
        """
        conn = _connect_own(url, application_name=application_name)
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (schema_lock_key(name),)
                           ).fetchone()
        if row is None or not row[0]:
            conn.close()
            return None
        return cls(conn, name)

    @classmethod
    def wait_acquire(cls, url: str, name: str, stop: Callable[[], bool],
                     *, check_s: float = 1.0,
                     application_name: str | None = None) -> SessionLock | None:
        """The lock `name`, waiting for it in the server's lock queue (no client-side
        polling): granted the moment the holder's session ends — a clean release, or its
        process killed (the server sees the connection close). Every `check_s` seconds the
        wait asks `stop`; None once that says to stop. The waiting session is named
        `application_name` when given (a holder may rename it: `name_session`).

        Raises:
            StoreError: the server cannot be reached.
        """
        import psycopg
        from psycopg import errors

        conn = _connect_own(url, application_name=application_name)
        try:
            conn.execute(f"SET lock_timeout = '{int(check_s * 1000)}ms'".encode())
            while not stop():
                try:
                    conn.execute("SELECT pg_advisory_lock(%s)", (schema_lock_key(name),))
                except errors.LockNotAvailable:
                    continue  # not yet: ask `stop` and queue again
                conn.execute(b"RESET lock_timeout")
                return cls(conn, name)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"lost the connection to PostgreSQL at {redact_url(url)}"
                             f" while waiting for the {name} lock: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        conn.close()
        return None

    def name_session(self, application_name: str) -> None:
        """Rename the holding session in ``pg_stat_activity`` (at most 63 bytes).

        Raises:
            psycopg.Error: what the server said.
        """
        self._conn.execute("SELECT set_config('application_name', %s, false)",
                           (application_name,))

    def release(self) -> None:
        """Release the lock (idempotent): closing the session drops it."""
        if not self._conn.closed:
            self._conn.close()
