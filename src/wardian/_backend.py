"""What the two storage backends do differently, one object each: `Database.backend`.

The stores write SQL both engines run as written (`wardian._pg` converts placeholders);
what cannot be shared is asked of the backend instead of chosen by comparing its name:

* `Backend.shared_across_machines` — whether workers on several machines use the database
  at once, which decides how work is owned (leases and claims, or a local process table);
* row locks: `Backend.for_update`, `Backend.lock_rows`;
* wake-ups: `Backend.notify`, `Backend.listen`;
* JSON read from a text column in SQL: `Backend.json_text` and its neighbours (paths are
  dotted key names, ``scope.kind``; ``""`` is the document itself);
* the driver's error classes a store catches: `Backend.Error`, `Backend.IntegrityError`,
  `Backend.OperationalError` (each backend raises its own driver's errors).

`Connection` is what the stores hold: the part of a DB-API connection they use, which a
`sqlite3.Connection` and a `wardian._pg.PgConnection` both are.

`Backend` itself is SQLite (`SQLITE`); `PgBackend` is PostgreSQL (`POSTGRES`), whose
coordination lives in `wardian._pg_coord`, imported only when a PostgreSQL database asks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wardian._pg_coord import Listener

__all__ = ["POSTGRES", "SQLITE", "Backend", "Connection", "Cursor", "Errors", "PgBackend",
           "Row", "backend_of"]

Errors = tuple[type[Exception], ...]
"""Exception classes as an ``except`` clause takes them."""


class Row(Protocol):
    """A result row: read by index or by column name; ``keys()`` the column names."""

    def __getitem__(self, key: Any, /) -> Any: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """The rows of one statement and how many rows it changed (``rowcount``)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A database connection as the stores use it, on either backend.

    ``execute`` runs one statement with ``?`` placeholders; ``executemany`` one per
    parameter sequence; ``in_transaction`` says whether a transaction is open (opened and
    ended by `wardian._db.atomic`, never by hand); ``total_changes`` counts the rows this
    connection changed since it opened. Errors are the driver's own: catch them through
    `backend_of` (`Backend.IntegrityError` and its neighbours).
    """

    @property
    def in_transaction(self) -> bool: ...

    @property
    def total_changes(self) -> int: ...

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor: ...

    def close(self) -> None: ...


class Backend:
    """SQLite: one file on one machine; the base of every backend's answers."""

    shared_across_machines = False
    """Whether processes on several machines may use this database at the same time.

    True (PostgreSQL): no machine's process table knows who owns a piece of work, so a
    running run is leased (`wardian.engine.runs.RunStore.claim`) and resumed by any worker
    once the lease expires, a queued event is claimed with a session lock, an event whose
    transcript is a file on another machine is left to that machine, and an undispatched
    fire may be another machine's running run. False (SQLite): a run's owner is a process
    of this machine, found dead by its pid and marked ``interrupted`` on open
    (`RunStore.mark_interrupted_orphans`); resuming it is the operator's."""

    for_update = ""
    """What ends a ``SELECT`` of rows the open transaction changes next, so they stay as
    read until it commits: ``FOR UPDATE`` on PostgreSQL; nothing on SQLite, whose open
    ``BEGIN IMMEDIATE`` already holds the whole file."""

    null_safe_eq = "IS"
    """The SQL operator true when two values are equal or both NULL."""

    @property
    def Error(self) -> Errors:
        """Every error the driver raises for a statement (``sqlite3.Error``)."""
        return (sqlite3.Error,)

    @property
    def IntegrityError(self) -> Errors:
        """A write refused by a constraint (unique, check, foreign key) or a trigger that
        aborts it (``sqlite3.IntegrityError``; the block's transaction is rolled back by
        `wardian._db.atomic`)."""
        return (sqlite3.IntegrityError,)

    @property
    def OperationalError(self) -> Errors:
        """A statement that could not run as the database stands: a table or column not
        there, a lock not granted in time, a read-only file, a lost connection
        (``sqlite3.OperationalError``)."""
        return (sqlite3.OperationalError,)

    def lock_rows(self, conn: Connection, table: str, ids: Iterable[str]) -> None:
        """Hold the rows of `table` whose ``id`` is in `ids` until the open transaction
        ends (in id order, so two lockers never deadlock). SQLite: nothing to do, the open
        ``BEGIN IMMEDIATE`` holds the file."""

    def notify(self, conn: Connection, channel: str, payload: str = "") -> None:
        """Tell `channel`'s listeners `payload` when the open transaction commits (never for
        one rolled back). SQLite: nobody listens (its drains poll), so nothing is sent."""

    def listen(self, conn: Connection, channel: str) -> Listener | None:
        """A `wardian._pg_coord.Listener` on `channel`, on a connection of its own beside
        `conn`; None where there are no notifications (SQLite: poll instead). The caller
        closes it.

        Raises:
            StoreError: the server cannot be reached.
        """
        return None

    def json(self, column: str) -> str:
        """SQL: the JSON text `column` as a document the other ``json_*`` methods read."""
        return column

    def json_text(self, doc: str, path: str) -> str:
        """SQL: the scalar at `path` of the document `doc` (NULL when absent or JSON
        ``null``); PostgreSQL gives every scalar as text."""
        return f"json_extract({doc}, '$.{path}')"

    def json_has(self, doc: str, path: str) -> str:
        """SQL condition: `doc` has a value (JSON ``null`` included) at `path`."""
        return f"json_type({doc}, '{_sqlite_path(path)}') IS NOT NULL"

    def json_key_count(self, doc: str, path: str) -> str:
        """SQL: how many keys the object at `path` of `doc` has; NULL when it is no object."""
        at = _sqlite_path(path)
        return (f"(CASE json_type({doc}, '{at}') WHEN 'object' THEN (SELECT count(*)"
                f" FROM json_each({doc}, '{at}')) END)")

    def json_array_length(self, doc: str, path: str) -> str:
        """SQL: the length of the array at `path` of `doc`; NULL when it is no array."""
        at = _sqlite_path(path)
        return (f"CASE json_type({doc}, '{at}') WHEN 'array'"
                f" THEN json_array_length({doc}, '{at}') END")

    def json_elements(self, doc: str, path: str, alias: str) -> tuple[str, str]:
        """SQL: ``FROM`` item of the elements at `path` of `doc` as rows `alias` (each
        element is ``alias.value``), and the expression of an element's 0-based index.
        Pair it with `json_array_length`: what a non-array yields differs by backend."""
        return f"json_each({doc}, '{_sqlite_path(path)}') AS {alias}", f"{alias}.key"

    def json_bool_is(self, doc: str, path: str, condition: str) -> str:
        """SQL condition: the value at `path` of `doc` is a JSON boolean equal to the SQL
        boolean `condition`."""
        at = _sqlite_path(path)
        return (f"json_type({doc}, '{at}') IN ('true', 'false')"
                f" AND json_extract({doc}, '{at}') = ({condition})")

    def json_quote(self, expr: str) -> str:
        """SQL: the text `expr` as a JSON string literal, as `json.dumps` writes it."""
        return f"json_quote({expr})"


def _sqlite_path(path: str) -> str:
    return "$" + ("." + path if path else "")


class PgBackend(Backend):
    """PostgreSQL: one database for a team, machines coordinated by the server."""

    shared_across_machines = True
    for_update = " FOR UPDATE"
    null_safe_eq = "IS NOT DISTINCT FROM"

    # psycopg is imported when a PostgreSQL database asks, never by a SQLite process.
    @property
    def Error(self) -> Errors:
        import psycopg

        return (psycopg.Error,)

    @property
    def IntegrityError(self) -> Errors:
        import psycopg

        # RaiseException (P0001): a trigger's RAISE EXCEPTION, as SQLite's RAISE(ABORT).
        return (psycopg.IntegrityError, psycopg.errors.RaiseException)

    @property
    def OperationalError(self) -> Errors:
        import psycopg

        # An undefined table or column (SQLite's "no such table"), not every
        # ProgrammingError: a trigger's RAISE and a missing right are not "not there".
        return (psycopg.OperationalError, psycopg.errors.UndefinedTable,
                psycopg.errors.UndefinedColumn)

    def lock_rows(self, conn: Connection, table: str, ids: Iterable[str]) -> None:
        ordered = sorted({i for i in ids if i})
        if ordered:
            conn.execute(f"SELECT id FROM {table} WHERE id = ANY(?) ORDER BY id FOR UPDATE",
                         (ordered,))

    def notify(self, conn: Connection, channel: str, payload: str = "") -> None:
        from wardian._pg_coord import notify

        notify(conn, channel, payload)

    def listen(self, conn: Connection, channel: str) -> Listener | None:
        from wardian._pg_coord import Listener

        return Listener(conn.url, channel)  # type: ignore[attr-defined]

    def json(self, column: str) -> str:
        return f"{column}::jsonb"

    def json_text(self, doc: str, path: str) -> str:
        return f"{doc} #>> '{_pg_path(path)}'"

    def json_has(self, doc: str, path: str) -> str:
        return f"({doc} #> '{_pg_path(path)}') IS NOT NULL"

    def json_key_count(self, doc: str, path: str) -> str:
        at = f"{doc} #> '{_pg_path(path)}'" if path else doc
        return (f"(CASE jsonb_typeof({at}) WHEN 'object' THEN (SELECT count(*)"
                f" FROM jsonb_object_keys({at})) END)")

    def json_array_length(self, doc: str, path: str) -> str:
        at = f"{doc} #> '{_pg_path(path)}'"
        return f"CASE jsonb_typeof({at}) WHEN 'array' THEN jsonb_array_length({at}) END"

    def json_elements(self, doc: str, path: str, alias: str) -> tuple[str, str]:
        at = f"{doc} #> '{_pg_path(path)}'"
        return (f"jsonb_array_elements(CASE jsonb_typeof({at}) WHEN 'array' THEN {at}"
                f" ELSE '[]' END) WITH ORDINALITY AS {alias}(value, n)", f"{alias}.n - 1")

    def json_bool_is(self, doc: str, path: str, condition: str) -> str:
        return f"({doc} #> '{_pg_path(path)}') = to_jsonb({condition})"

    def json_quote(self, expr: str) -> str:
        return f"to_json({expr}::text)::text"


def _pg_path(path: str) -> str:
    return "{" + path.replace(".", ",") + "}"


SQLITE = Backend()
POSTGRES = PgBackend()


def backend_of(conn: Connection) -> Backend:
    """The backend of `conn`: `SQLITE` for a `sqlite3.Connection`, else `POSTGRES` (a
    `wardian._pg.PgConnection`)."""
    return SQLITE if type(conn) is sqlite3.Connection else POSTGRES
