"""PostgreSQL failures a user can cause reach the CLI as our errors (what, where, how to
fix; a documented exit code), never ``internal error`` or a traceback. Real child processes
of the real CLI against the session's throwaway cluster: a port nothing listens on, a
database that does not exist, a role without rights, a read-only session, a held lock.
Conditions the cluster cannot be made to produce here (a full disk, a unique key that
escapes a store) are checked on `translate` with psycopg's own error classes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from wardian.errors import EXIT_CONFLICT, EXIT_FAILED, ConflictError, StoreError
from wardian.oserrors import translate


def wardian(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDIAN_") and k != "PYTEST_CURRENT_TEST"}
    env.update(WARDIAN_HOME=str(home), WARDIAN_DATABASE_URL=url)
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def ours(result: subprocess.CompletedProcess[str], code: int = EXIT_FAILED) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stderr.startswith("Error: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_no_server_at_the_url(wardian_home: Path) -> None:
    url = f"postgresql://someone:s3cret@127.0.0.1:{_free_port()}/wardian"
    text = ours(wardian(wardian_home, url, "agent", "list"))
    assert "s3cret" not in text and "someone:***@127.0.0.1" in text
    assert "pg_isready" in text


def test_a_database_that_does_not_exist(wardian_home: Path, pg_cluster: object) -> None:
    from tests.pg_cluster import Cluster

    assert isinstance(pg_cluster, Cluster)
    text = ours(wardian(wardian_home, pg_cluster.url("no_such_db_here"), "agent", "list"))
    assert "no_such_db_here" in text and "does not exist" in text and "createdb" in text


def test_a_role_without_rights_on_the_database(wardian_home: Path, pg_cluster: object,
                                               pg_url: str) -> None:
    from tests.pg_cluster import Cluster

    assert isinstance(pg_cluster, Cluster)
    role = f"r_{uuid.uuid4().hex[:8]}"
    pg_cluster.create_role(role)
    try:
        url = pg_url.replace("wardian@", f"{role}@")
        text = ours(wardian(wardian_home, url, "agent", "list"))
        assert "permission denied" in text and role in text
        assert "GRANT" in text
    finally:
        pg_cluster.drop_role(role, pg_url)


def test_a_read_only_session(wardian_home: Path, pg_url: str) -> None:
    assert wardian(wardian_home, pg_url, "agent", "list").returncode == 0
    url = pg_url + "?options=-c%20default_transaction_read_only%3Don"
    text = ours(wardian(wardian_home, url, "agent", "add", "ada", "--provider", "builtin"))
    assert "read-only" in text and "127.0.0.1" in text


def test_a_lock_held_past_lock_timeout(wardian_home: Path, pg_url: str) -> None:
    import psycopg

    assert wardian(wardian_home, pg_url, "agent", "list").returncode == 0
    with psycopg.connect(pg_url) as holder:
        tables = holder.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables"
            " WHERE schemaname IN ('state', 'memory')").fetchall()
        assert tables
        holder.execute(("LOCK TABLE " + ", ".join(t for (t,) in tables)
                        + " IN ACCESS EXCLUSIVE MODE").encode())
        url = pg_url + "?options=-c%20lock_timeout%3D100"
        text = ours(wardian(wardian_home, url, "agent", "list"))
        holder.rollback()
    assert "lock" in text and "retry" in text


def test_a_full_disk_and_an_escaped_unique_key_are_ours() -> None:
    psycopg = pytest.importorskip("psycopg")
    import psycopg.errors as pe

    full = translate(pe.DiskFull("could not extend file: No space left on device"))
    assert isinstance(full, StoreError) and "full" in full.render()
    dup = translate(pe.UniqueViolation('duplicate key value violates unique constraint "x"'))
    assert isinstance(dup, ConflictError) and dup.exit_code == EXIT_CONFLICT
    assert translate(pe.SyntaxError("syntax error at or near")) is None  # a bug stays a bug
    assert translate(psycopg.InterfaceError("the connection is closed")) is None
    lost = translate(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert isinstance(lost, StoreError) and "pg_isready" in lost.render()
