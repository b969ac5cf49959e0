"""``wardian doctor`` check ``database``: which database the installation uses and, for
PostgreSQL, whether it can be used: the configured URL, the ``postgres`` extra, the server,
the ``memory`` and ``state`` schemas with their migrations. The other checks read that
database as they read the SQLite files (``memory-history`` verifies its records).

Read-only like every doctor check: one connection of its own whose transactions are
read-only (``default_transaction_read_only``), nothing created or migrated. Every problem
makes ``wardian doctor`` exit 1 with the fix beside it (a bad URL, a missing extra, an
unreachable server, a schema newer than this Wardian, records that do not verify).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import TYPE_CHECKING

from wardian.app.doctor import DoctorContext, Finding, register_check

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

    lists = {"memory": MEMORY, **state_components()}
    return {component: [m.name for m in steps] for component, steps in lists.items()}


@register_check(NAME, "Database")
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
        yield Finding.problem(
            NAME, exc.message,
            fix=f"check that the server runs and accepts this user (`pg_isready -d "
                f"'{shown}'`), correct the URL, or unset WARDIAN_DATABASE_URL to use the "
                "local SQLite files")
        return
    with closing(state):
        version = str(state.execute("SHOW server_version").fetchone()[0])
        yield Finding.ok(NAME, f"PostgreSQL {version} at {shown} answers", subject=shown)
        schemas = {str(r[0]) for r in state.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname IN ('memory', 'state')")}
        missing = sorted({"memory", "state"} - schemas)
        if missing:
            yield Finding.warning(
                NAME, f"schema(s) {', '.join(missing)} not created yet (a new database)",
                fix="any wardian command creates them, e.g. `wardian agent list`; or copy "
                    f"an installation in: `wardian db migrate --to '{shown}'`")
        yield from _migrations(state, sorted(schemas), shown)
        if "state" in schemas:
            yield from _waiting_events(state)


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
    pending = sorted(c for c, names in known.items()
                     if c in applied and len(applied[c]) < len(names))
    if pending:
        yield Finding.warning(
            NAME, f"component(s) {', '.join(pending)} have migrations still to apply",
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
            conn, before):  # type: ignore[arg-type]
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
