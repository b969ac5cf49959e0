"""Operating-system, SQLite and PostgreSQL failures as our errors: what, where, how to fix.

A full disk, a read-only file or directory, a data directory that is a file, or bytes that
are not UTF-8 are the user's environment, not a Wardian bug: they must never surface as
``internal error``. Nor may a PostgreSQL server that does not answer, a role without
rights, a read-only session, a full disk on the server, a lock held past ``lock_timeout``
or a unique key another process wrote first (read from psycopg's SQLSTATE; psycopg is
only looked at when this process already imported it, so SQLite processes never load it).
`translate` maps one exception to a `WardianError`, or returns None when it is not such a
condition (a real bug stays a bug). The CLI's root group calls it for every exception
that is not already ours.

Spec: DESIGN.md "Conventions" (errors say what, where and how to fix).
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Any

from wardian._backend import SQLITE
from wardian.errors import ConflictError, StoreError, UsageError, WardianError

__all__ = ["one_line", "translate"]

_ELSEWHERE = "or point WARDIAN_HOME at a folder on a writable disk"


def _data_dir() -> str:
    try:
        from wardian.config import data_dir

        return str(data_dir(create=False))
    except Exception:  # the data dir itself may be what is broken
        return "the data directory"


def translate(exc: BaseException) -> WardianError | None:
    """Our error for an OS/SQLite/encoding condition the user can fix, else None."""
    if isinstance(exc, SQLITE.Error):
        return _sqlite(exc)
    psycopg = sys.modules.get("psycopg")  # loaded only where PostgreSQL is used
    if psycopg is not None and isinstance(exc, psycopg.Error):
        return _postgres(exc, psycopg)
    if isinstance(exc, OSError):
        return _os(exc)
    if isinstance(exc, UnicodeEncodeError) and "surrogate" in str(exc.reason):
        return UsageError(
            "the input holds bytes that are not valid UTF-8",
            hint="pass text as UTF-8 (check the terminal's or the file's encoding)",
        )
    if isinstance(exc, RecursionError):
        return UsageError(
            "the input is nested too deeply to process",
            hint="flatten the document (JSON/YAML nested hundreds of levels deep)",
        )
    return None


def _sqlite(exc: BaseException) -> WardianError | None:
    text = str(exc).lower()
    where = _data_dir()
    if "readonly" in text or "read-only" in text:
        return StoreError(
            f"cannot write the database in {where}: it is read-only ({exc})",
            hint=f"make the folder and its .db, .db-wal and .db-shm files writable by you "
            f"(chmod u+w), {_ELSEWHERE}",
        )
    if "disk is full" in text or "database or disk is full" in text:
        return StoreError(
            f"the disk holding {where} is full; nothing was written",
            hint=f"free some space and retry, {_ELSEWHERE}",
        )
    if "unable to open database" in text:
        return StoreError(
            f"cannot open a database in {where} ({exc})",
            hint=f"check that the folder exists and is readable and writable by you, "
            f"{_ELSEWHERE}",
        )
    if "disk i/o error" in text:
        return StoreError(
            f"the disk holding {where} failed to read or write ({exc})",
            hint="check the disk (full, removed, read-only?) and retry",
        )
    if "locked" in text or "busy" in text:
        return StoreError(
            f"a database in {where} is busy: {exc}",
            hint="another Wardian process holds the write lock; retry",
        )
    if "not a database" in text or "malformed" in text:
        return StoreError(
            f"a database file in {where} is damaged or not a database ({exc})",
            hint="restore it from a backup, or move it away to start afresh",
        )
    return None


def one_line(exc: BaseException) -> str:
    """The driver's message for `exc` on one line: PostgreSQL's primary message, without
    the ``LINE 1: …`` context and caret or libpq's advice lines that follow it."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    lines = (primary or str(exc)).strip().splitlines()
    return " ".join(lines[0].split()) if lines else type(exc).__name__


def _server() -> str:
    try:
        from wardian._db import configured_database_url
        from wardian._pg import redact_url

        url = configured_database_url()
        return f"PostgreSQL at {redact_url(url)}" if url else "the PostgreSQL server"
    except Exception:  # the configuration itself may be what is broken
        return "the PostgreSQL server"


_RETRY = "another Wardian process or a client holds it; retry, or find the holder in " \
    "pg_locks / pg_stat_activity"


def _postgres(exc: BaseException, psycopg: Any) -> WardianError | None:
    """Our error for a psycopg error whose SQLSTATE (or its class) the user can act on."""
    state = getattr(exc, "sqlstate", None) or ""
    what = one_line(exc)
    server = _server()
    lost = not state and isinstance(exc, psycopg.OperationalError)
    if lost or state.startswith(("08", "28", "3D", "57P")):
        # An OperationalError without SQLSTATE: libpq failed to connect or lost the
        # connection (an InterfaceError without one is a misuse: a bug).
        return StoreError(
            f"cannot use {server}: {what}",
            hint="check that the server runs and accepts this user and database "
                 "(pg_isready), or unset WARDIAN_DATABASE_URL to use the local SQLite files")
    if state == "42501":
        return StoreError(
            f"{server}: {what}",
            hint="the database's owner can GRANT CREATE ON DATABASE (and USAGE, CREATE on "
                 "its memory and state schemas) to this role, or use a role that has them")
    if state == "25006":
        return StoreError(
            f"{server} accepts no writes: {what}",
            hint="connect to the primary, not a standby, and check default_transaction_"
                 "read_only for this role and database (ALTER ROLE … RESET)")
    if state == "53100":
        return StoreError(f"the disk of {server} is full; nothing was written: {what}",
                          hint="free space on the server's disk, then retry")
    if state.startswith("53"):
        return StoreError(
            f"{server} is out of resources: {what}",
            hint="free disk space (or raise max_connections / memory) on the server, "
                 "then retry")
    if state in ("55P03", "57014", "40P01", "40001"):
        return StoreError(f"{server}: a lock or statement was cancelled: {what}",
                          hint=_RETRY)
    if state == "23505":
        return ConflictError(f"{server}: another process wrote the same record first: {what}",
                             hint="retry the command; it reads the current records again")
    return None


def _os(exc: OSError) -> WardianError | None:
    name = exc.filename if exc.filename is not None else _data_dir()
    what = f"{name}: {exc.strerror or exc}"
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return StoreError(f"no space left writing {what}",
                          hint=f"free some space and retry, {_ELSEWHERE}")
    if code == errno.EROFS:
        return StoreError(f"cannot write {what}",
                          hint=f"the file system is mounted read-only; {_ELSEWHERE}")
    if code in (errno.EACCES, errno.EPERM):
        return StoreError(f"cannot access {what}",
                          hint="make it readable and writable by you (check owner and mode), "
                          f"{_ELSEWHERE}")
    if code == errno.ENOTDIR:
        return UsageError(f"a path component is not a directory: {what}",
                          hint="remove or rename the file that is in the way, "
                          "or point WARDIAN_HOME elsewhere")
    if code == errno.EEXIST and exc.filename and not Path(exc.filename).is_dir():
        return UsageError(f"{exc.filename} is a file where a directory is needed",
                          hint="remove or rename it, or point WARDIAN_HOME elsewhere")
    if code == errno.ENAMETOOLONG:
        return UsageError(f"a path is too long: {str(name)[:80]}…",
                          hint="use a shorter path (4,096 characters at most, 255 per name)")
    if code == errno.EISDIR:
        return UsageError(f"{what}: a directory where a file is needed",
                          hint="pass a file, not a directory")
    return None
