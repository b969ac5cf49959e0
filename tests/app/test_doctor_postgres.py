"""`wardian doctor --check database` on PostgreSQL, against real servers of the session's
throwaway cluster (`tests.pg_cluster`): a server nobody can reach, a login it refuses, a
database it does not have, a role short of a privilege Wardian needs, a server older than
Wardian supports and migrations behind this Wardian's, each a finding with its fix, and a
healthy database none. No password of a URL is ever printed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner


def _doctor(cli: CliRunner) -> tuple[int, list[dict[str, Any]], str]:
    """(exit code, findings of the database check, the whole output) of
    ``wardian doctor --check database``, in JSON and as the operator reads it."""
    text = invoke(cli, "doctor", "--check", "database")
    res = invoke(cli, "doctor", "--check", "database", "--json")
    doc = json.loads(res.stdout)
    findings = [f for entry in doc["checks"] for f in entry["findings"]]
    return res.exit_code, findings, text.output + res.output


def _problems(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f["status"] == "problem"]


def _use(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", url)


def _set_up(cli: CliRunner) -> None:
    """What the first wardian command does to a new database: create its schemas."""
    res = invoke(cli, "agent", "list")
    assert res.exit_code == 0, res.output


def _as(url: str, role: str, password: str | None = None) -> str:
    """`url` (the cluster superuser's) logging in as `role`."""
    from tests.pg_cluster import USER

    login = role if password is None else f"{role}:{password}"
    return url.replace(f"//{USER}@", f"//{login}@", 1)


@pytest.fixture
def role(pg_cluster: Any, pg_url: str) -> Iterator[str]:
    """A fresh login role of the session's cluster, dropped afterwards."""
    name = f"r_{uuid.uuid4().hex[:10]}"
    pg_cluster.create_role(name)
    yield name
    from wardian._db import close_databases

    close_databases(_as(pg_url, name))
    pg_cluster.drop_role(name, pg_url)


def test_a_healthy_database_gives_no_finding(cli: CliRunner, wardian_home: Path,
                                             pg_url: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _use(monkeypatch, pg_url)
    _set_up(cli)
    code, findings, _ = _doctor(cli)
    assert code == 0
    assert {f["status"] for f in findings} == {"ok"}, findings
    assert any("holds the privileges Wardian needs" in f["message"] for f in findings)


def test_a_stopped_server_is_the_reach_finding(cli: CliRunner, wardian_home: Path,
                                               pg_cluster: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pg_cluster import Cluster

    stopped = Cluster.start(pg_cluster.bindir)
    stopped.stop()
    _use(monkeypatch, _as(stopped.url(), "wardian", "s3cret"))
    code, findings, output = _doctor(cli)
    (problem,) = _problems(findings)
    assert code == 1
    assert problem["message"].startswith(
        f"no PostgreSQL server can be reached at 127.0.0.1:{stopped.port}")
    assert problem["message"].endswith(": Connection refused")  # libpq's advice: the fix's
    assert f"pg_isready -h 127.0.0.1 -p {stopped.port}" in problem["fix"]
    assert "s3cret" not in output

    # Every check: the reason once, in the database check; the others point at it.
    res = invoke(cli, "doctor", "--json")
    assert res.exit_code == 1 and "s3cret" not in res.output
    checks = {c["name"]: c["findings"] for c in json.loads(res.stdout)["checks"]}
    assert [f["message"] for f in checks.pop("database")] == [problem["message"]]
    others = [f for findings in checks.values() for f in _problems(findings)]
    assert others and all(f["message"].startswith("not checked: the PostgreSQL database")
                          for f in others), others


def test_a_wrong_password_is_the_login_finding_without_the_password(
        cli: CliRunner, wardian_home: Path, pg_cluster: Any, pg_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"p_{uuid.uuid4().hex[:10]}"
    pg_cluster.create_role(name, password="right-one")
    try:
        _use(monkeypatch, _as(pg_url, name, "Wr0ngPassw0rd"))
        code, findings, output = _doctor(cli)
        (problem,) = _problems(findings)
        assert code == 1
        assert problem["message"].startswith(
            f"the PostgreSQL server at 127.0.0.1:{pg_cluster.port} refuses the login of "
            f"role {name!r}")
        assert "password authentication failed" in problem["message"]
        assert f'ALTER ROLE "{name}" LOGIN PASSWORD' in problem["fix"]
        assert "Wr0ngPassw0rd" not in output and "right-one" not in output
        # The same password as a URL parameter is hidden as well.
        _use(monkeypatch, f"{_as(pg_url, name)}?password=Wr0ngPassw0rd")
        code, findings, output = _doctor(cli)
        assert code == 1 and "refuses the login" in _problems(findings)[0]["message"]
        assert "Wr0ngPassw0rd" not in output
    finally:
        pg_cluster.drop_role(name)


def test_a_database_that_does_not_exist(cli: CliRunner, wardian_home: Path,
                                        pg_cluster: Any,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _use(monkeypatch, pg_cluster.url("no_such_db"))
    code, findings, _ = _doctor(cli)
    (problem,) = _problems(findings)
    assert code == 1
    assert problem["message"].startswith(
        f"the database 'no_such_db' does not exist on the PostgreSQL server at "
        f"127.0.0.1:{pg_cluster.port}")
    assert problem["message"].endswith(': database "no_such_db" does not exist')
    assert (f"createdb -h 127.0.0.1 -p {pg_cluster.port} -O wardian no_such_db"
            in problem["fix"])


def test_a_role_without_create_is_told_the_grant(cli: CliRunner, wardian_home: Path,
                                                 pg_cluster: Any, pg_url: str, role: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    _use(monkeypatch, pg_url)
    _set_up(cli)  # the schemas, owned by the cluster's superuser
    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for schema in ("memory", "state"):
            conn.execute(f'GRANT USAGE ON SCHEMA {schema} TO "{role}"'.encode())
    _use(monkeypatch, _as(pg_url, role))
    res = invoke(cli, "agent", "list")  # what the role cannot do is what doctor reports
    assert res.exit_code != 0 and "permission denied" in res.output
    code, findings, _ = _doctor(cli)
    problems = {p["subject"]: p for p in _problems(findings)}
    assert code == 1
    assert set(problems) == {f"database {database}", "schema memory", "schema state"}
    assert problems[f"database {database}"]["fix"].endswith(
        f'`GRANT CREATE ON DATABASE "{database}" TO "{role}";`')
    assert f'GRANT CREATE ON SCHEMA "memory" TO "{role}";' in problems["schema memory"]["fix"]

    grants = [p["fix"].split("`")[1] for p in problems.values()]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the fixes, as printed
        for grant in grants:
            conn.execute(grant.encode())
    code, findings, _ = _doctor(cli)
    problems = {p["subject"]: p for p in _problems(findings)}
    # Still not the owner of the tables, which the migrations alter.
    assert set(problems) == {"schema memory", "schema state"}
    assert all("does not own the tables" in p["message"] for p in problems.values())
    grants = [p["fix"].split("`")[1] for p in problems.values()]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for grant in sorted(set(grants)):
            conn.execute(grant.encode())
    code, findings, _ = _doctor(cli)
    assert code == 0 and not _problems(findings), findings
    res = invoke(cli, "agent", "list")
    assert res.exit_code == 0, res.output


def test_a_server_older_than_wardian_supports(cli: CliRunner, wardian_home: Path,
                                              pg_url: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from wardian import _pg

    with psycopg.connect(pg_url) as conn:
        major = conn.info.server_version // 10000
    _use(monkeypatch, pg_url)
    monkeypatch.setattr(_pg, "MIN_SERVER_VERSION", major + 1)  # this server is then too old
    code, findings, _ = _doctor(cli)
    (problem,) = [p for p in _problems(findings) if "older than" in p["message"]]
    assert code == 1
    assert f"(PostgreSQL {major + 1} or newer)" in problem["message"]
    assert f"upgrade the server to PostgreSQL {major + 1}" in problem["fix"]


def test_migrations_behind_this_wardian_are_named(cli: CliRunner, wardian_home: Path,
                                                  pg_url: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pg_memory import records_at_migration

    from wardian.memory.schema_pg import POSTGRES_MIGRATIONS

    records_at_migration(pg_url, 1, [])
    _use(monkeypatch, pg_url)
    code, findings, _ = _doctor(cli)
    (behind,) = [f for f in findings if "behind this Wardian" in f["message"]]
    assert code == 0 and behind["status"] == "warning"
    assert f"memory: {POSTGRES_MIGRATIONS[1].name}" in behind["message"]
