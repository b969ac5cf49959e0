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
    assert "Connection refused" in problem["message"]
    assert f"pg_isready -h 127.0.0.1 -p {stopped.port}" in problem["fix"]
    assert "s3cret" not in output
