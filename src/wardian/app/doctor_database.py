"""``wardian doctor`` check ``database``: which database the installation uses and, for
PostgreSQL, whether it can be used: the configured URL, the ``postgres`` extra, the server
(reached, the login accepted, the database there: each refusal its own fix), its version
against `wardian._pg.MIN_SERVER_VERSION`, the privileges the role needs, the ``memory`` and
``state`` schemas with their migrations. The other checks read that database as they
read the SQLite files (``memory-history`` verifies its records).

Read-only like every doctor check: one connection of its own whose transactions are
read-only (``default_transaction_read_only``), nothing created or migrated. Every problem
makes ``wardian doctor`` exit 1 with the fix beside it (a bad URL, a missing extra, an
unreachable server, a server too old, a privilege missing, a schema newer than this
Wardian, records that do not verify).
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import TYPE_CHECKING

from wardian.app.doctor import DoctorContext, Finding

if TYPE_CHECKING:
    from wardian._pg import PgConnection

__all__: list[str] = []

NAME = "database"

_URL_FIX = ("set WARDIAN_DATABASE_URL (or the data directory's database.url) to "
            "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or unset it to use the "
            "local SQLite files")


def _known_migrations() -> dict[str, Sequence[str]]:
    """Component -> the names of the migrations this Wardian applies on PostgreSQL."""
    from wardian.app.state_schema import state_components
    from wardian.memory.schema_pg import POSTGRES_MIGRATIONS as MEMORY

    lists = {"memory": MEMORY,
             **{name: steps.postgres for name, steps in state_components().items()}}
    return {component: [m.name for m in steps] for component, steps in lists.items()}


def _database(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian._pg import configured_url, redact_url
    from wardian.errors import UsageError

    try:
        url = configured_url(ctx.data_dir)  # imports psycopg only when a URL is configured
    except UsageError as exc:
        if not _has_extra():  # the URL cannot even be read without psycopg
            yield _no_extra("a PostgreSQL URL is configured")
        else:
            yield Finding.problem(NAME, exc.render(), fix=_URL_FIX)
        return
    if url is None:
        yield Finding.ok(NAME, f"SQLite files in {ctx.data_dir} (no PostgreSQL configured)")
        return
    shown = redact_url(url)
    if not _has_extra():
        yield _no_extra(f"the installation uses PostgreSQL ({shown})")
        return
    yield from _postgres(url, shown)


def _has_extra() -> bool:
    """Whether psycopg 3 and its pool can be imported (they are, when they can)."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return False
    return True


def _no_extra(what: str) -> Finding:
    return Finding.problem(
        NAME, f"{what}, but the postgres extra (psycopg 3 and its pool) is not installed",
        fix="pip install 'wardian[postgres]' (or unset WARDIAN_DATABASE_URL to use the "
            "local SQLite files)")


def _postgres(url: str, shown: str) -> Iterator[Finding]:
    from wardian._pg import PgConnection
    from wardian.errors import StoreError

    try:
        state = PgConnection(url, "state", read_only=True)
    except StoreError as exc:
        yield _unreachable(url, shown, exc.message)
        return
    with closing(state):
        version = str(state.execute("SHOW server_version").fetchone()[0])
        yield from _server_version(state, version, shown)
        schemas = {str(r[0]) for r in state.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname IN ('memory', 'state')")}
        missing = sorted({"memory", "state"} - schemas)
        if missing:
            yield Finding.warning(
                NAME, f"schema(s) {', '.join(missing)} not created yet (a new database)",
                fix="any wardian command creates them, e.g. `wardian agent list`; or copy "
                    f"an installation in: `wardian db migrate --to '{shown}'`")
        yield from _privileges(state, sorted(schemas), shown)
        # A schema the role may not use cannot be read (its finding above says so).
        readable = [schema for schema in sorted(schemas) if state.execute(
            "SELECT has_schema_privilege(?, 'USAGE')", (schema,)).fetchone()[0]]
        if readable or not schemas:
            yield from _migrations(state, readable, shown)
        if "state" in schemas:
            yield from _waiting_events(state)


def _url_parts(url: str) -> tuple[str, str, str, str]:
    """(user, host, port, database) of `url` as libpq reads it (defaults filled in)."""
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(url)
    return (str(parts.get("user") or os.environ.get("PGUSER") or getpass.getuser()),
            str(parts.get("host") or os.environ.get("PGHOST") or "localhost"),
            str(parts.get("port") or os.environ.get("PGPORT") or "5432"),
            str(parts.get("dbname") or os.environ.get("PGDATABASE") or "postgres"))


def _ident(name: str) -> str:
    """`name` quoted as a PostgreSQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _unreachable(url: str, shown: str, message: str) -> Finding:
    """The problem of a connection the server refused or nobody answered, by its reason
    (`wardian._pg.connect_failure`); the URL and libpq's text without the password."""
    from wardian._pg import connect_failure, redact_url

    user, host, port, database = _url_parts(url)
    # libpq's reason, less its severity and the advice line under it (the fix says more).
    said = (message.rpartition(" failed: ")[2] or message).strip().splitlines()[0]
    reason = " ".join(redact_url(said.removeprefix("FATAL:")).split())
    kind = connect_failure(message)
    if kind == "database":
        return Finding.problem(
            NAME, f"the database {database!r} does not exist on the PostgreSQL server at "
            f"{host}:{port} ({shown}): {reason}", subject=shown,
            fix=f"create it (as a role allowed to): `createdb -h {host} -p {port} -O {user} "
                f"{database}` (or `CREATE DATABASE {_ident(database)} OWNER "
                f"{_ident(user)};`), or correct the database name in the URL")
    if kind == "denied":
        return Finding.problem(
            NAME, f"role {user!r} may not connect to database {database!r} at {host}:{port}"
            f" ({shown}): {reason}", subject=shown,
            fix=f"as its owner or a superuser: `GRANT CONNECT ON DATABASE {_ident(database)} "
                f"TO {_ident(user)};`")
    if kind == "auth":
        return Finding.problem(
            NAME, f"the PostgreSQL server at {host}:{port} refuses the login of role "
            f"{user!r} ({shown}): {reason}", subject=shown,
            fix="correct the user or password in the URL (or in ~/.pgpass); on the server, "
                f"`ALTER ROLE {_ident(user)} LOGIN PASSWORD '...';` sets them (`CREATE ROLE` "
                "for a new one), and pg_hba.conf must have a line admitting it")
    return Finding.problem(
        NAME, f"no PostgreSQL server can be reached at {host}:{port} ({shown}): {reason}",
        subject=shown,
        fix=f"start the server (or correct the host and port in the URL); `pg_isready -h "
            f"{host} -p {port}` says when it accepts connections; or unset "
            "WARDIAN_DATABASE_URL to use the local SQLite files")


def _server_version(conn: PgConnection, version: str, shown: str) -> Iterator[Finding]:
    """The server's version against `wardian._pg.MIN_SERVER_VERSION`."""
    from wardian._pg import MIN_SERVER_VERSION

    major = int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000
    if major < MIN_SERVER_VERSION:
        yield Finding.problem(
            NAME, f"PostgreSQL {version} at {shown} is older than Wardian supports "
            f"(PostgreSQL {MIN_SERVER_VERSION} or newer)", subject=shown,
            fix=f"upgrade the server to PostgreSQL {MIN_SERVER_VERSION} or newer "
                "(`pg_upgrade`), or point WARDIAN_DATABASE_URL at one that is")
        return
    yield Finding.ok(NAME, f"PostgreSQL {version} at {shown} answers", subject=shown)


def _privileges(conn: PgConnection, schemas: Sequence[str], shown: str
                ) -> Iterator[Finding]:
    """What the connected role may not do that Wardian does: create its schemas (every
    command opens them with ``CREATE SCHEMA IF NOT EXISTS``, which needs CREATE on the
    database even when they exist), use them and create in them (migrations), and alter
    their tables (a migration adding a column or an index must act as their owner)."""
    role, database = (str(v) for v in conn.execute(
        "SELECT current_user, current_database()").fetchone())
    who = _ident(role)
    lacking = []
    if not conn.execute("SELECT has_database_privilege(current_database(), 'CREATE')"
                        ).fetchone()[0]:
        lacking.append(Finding.problem(
            NAME, f"role {role!r} lacks CREATE on database {database!r} ({shown}): every "
            "Wardian command opens its schemas with CREATE SCHEMA IF NOT EXISTS, which "
            "PostgreSQL refuses without it", subject=f"database {database}",
            fix=f"as the database's owner or a superuser: `GRANT CREATE ON DATABASE "
                f"{_ident(database)} TO {who};`"))
    for schema in schemas:
        missing = [p for p in ("USAGE", "CREATE") if not conn.execute(
            "SELECT has_schema_privilege(?, ?)", (schema, p)).fetchone()[0]]
        if missing:
            lacking.append(Finding.problem(
                NAME, f"role {role!r} lacks {' and '.join(missing)} on schema {schema} "
                f"({shown}): Wardian " + ("cannot read it" if "USAGE" in missing else
                                          "cannot apply its migrations there"),
                subject=f"schema {schema}",
                fix=f"as the schema's owner or a superuser: `GRANT {', '.join(missing)} ON "
                    f"SCHEMA {_ident(schema)} TO {who};`"))
            continue
        owners = sorted({str(r[0]) for r in conn.execute(
            "SELECT pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n"
            " ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'p')"
            " AND NOT pg_has_role(c.relowner, 'USAGE')", (schema,))})
        if owners:
            lacking.append(Finding.problem(
                NAME, f"role {role!r} does not own the tables of schema {schema} (owned by "
                f"{', '.join(owners)}) at {shown}: Wardian's migrations alter them",
                subject=f"schema {schema}",
                fix=f"as a superuser: `GRANT {', '.join(_ident(o) for o in owners)} TO "
                    f"{who};` (or `REASSIGN OWNED BY ... TO {who};`)"))
    yield from lacking
    if not lacking:
        yield Finding.ok(NAME, f"role {role!r} holds the privileges Wardian needs in "
                               f"database {database!r}", subject=f"role {role}")


def _migrations(conn: PgConnection, schemas: Sequence[str], shown: str
                ) -> Iterator[Finding]:
    """Compare each schema's recorded migrations with the ones this Wardian knows."""
    known = _known_migrations()
    applied: dict[str, list[str]] = {}
    for schema in schemas:
        present = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = ?"
            " AND table_name = 'schema_migrations'", (schema,)).fetchone()
        if present is None:
            continue
        for component, name in conn.execute(
                f'SELECT component, name FROM "{schema}".schema_migrations'
                " ORDER BY component, version"):
            applied.setdefault(str(component), []).append(str(name or ""))
    newer = {c: [n for n in names if n not in known.get(c, ())]
             for c, names in applied.items()}
    newer = {c: names for c, names in newer.items() if names}
    for component, names in sorted(newer.items()):
        yield Finding.problem(
            NAME, f"component {component} has migration(s) this Wardian does not know "
            f"({', '.join(names)}): the database is newer than this Wardian",
            fix="upgrade Wardian on this machine to the version the others run",
            subject=component)
    pending = {c: list(names[len(applied[c]):])
               for c, names in sorted(known.items()) if c in applied}
    pending = {c: names for c, names in pending.items() if names}
    if pending:
        listed = "; ".join(f"{c}: {', '.join(names)}" for c, names in pending.items())
        yield Finding.warning(
            NAME, f"migrations recorded at {shown} are behind this Wardian's, still to "
            f"apply: {listed}", subject=", ".join(pending),
            fix="any wardian command that uses them applies them (e.g. `wardian agent "
                "list`); migrations are forward-only and run once")
    if not newer:
        total = sum(len(v) for v in applied.values())
        yield Finding.ok(NAME, f"{total} migration(s) of {len(applied)} component(s) "
                               f"recorded at {shown}, none newer than this Wardian")


def _waiting_events(conn: PgConnection) -> Iterator[Finding]:
    """Session closes waiting more than ten minutes for a worker on the machine that
    recorded them (only it can read their transcripts)."""
    from datetime import timedelta

    from wardian._util import format_utc, host_name, utc_now
    from wardian.runtime.session_events import waiting_for_their_machines

    before = format_utc(utc_now() - timedelta(minutes=10))
    here = host_name()
    for machine, count, oldest in waiting_for_their_machines(
            conn, before):
        where = "this machine" if machine == here else f"machine {machine!r}"
        yield Finding.warning(
            NAME, f"{count} session close(s) recorded on {where} wait for a worker there to"
            f" import their transcripts (the oldest since {oldest}); workers on other"
            " machines leave them pending, as they cannot read the files",
            subject=machine,
            fix=f"on {machine}: close a session or start `wardian serve` (either starts its"
                " drain); if that machine is gone, copy its transcripts to the same paths"
                f" on another and drain there as it: `WARDIAN_HOST_NAME={machine} wardian"
                " session _drain`")
