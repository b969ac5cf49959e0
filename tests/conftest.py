"""Shared fixtures: every test gets its own WARDIAN_HOME and a clean WARDIAN_* environment."""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "transcripts"
"""The shared transcript corpus (never copied into the project; tests skip when absent)."""


@pytest.fixture(autouse=True, scope="session")
def no_detached_worker_left() -> Iterator[None]:
    """At the end of the session (each xdist worker's), wait for — or end — the detached
    drain and run workers the tests started in-process: their `Popen` objects, still held
    at interpreter exit, each warned ``ResourceWarning: subprocess N is still running``
    after pytest had finished (and kept running past the session)."""
    yield
    from wardian._process import end_kept

    end_kept()


@pytest.fixture(autouse=True)
def wardian_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point WARDIAN_HOME at a fresh temp dir and drop every other WARDIAN_* variable."""
    for key in list(os.environ):
        if key.startswith("WARDIAN_"):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "wardian-home"
    home.mkdir(mode=0o700)  # as Wardian creates it (a wider one is tightened, with a notice)
    monkeypatch.setenv("WARDIAN_HOME", str(home))
    yield home


@contextmanager
def building_home(root: Path) -> Iterator[Path]:
    """WARDIAN_HOME pointed at a fresh ``root/wardian-home`` (as `wardian_home` makes it)
    while a module-scoped fixture builds a scenario there once; the environment is restored
    after. Each test then gets its own copy (`copy_home`), so what one test changes no other
    sees."""
    home = root / "wardian-home"
    home.mkdir(mode=0o700)
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith("WARDIAN_"):
                mp.delenv(key, raising=False)
        mp.setenv("WARDIAN_HOME", str(home))
        yield home
    gc.collect()  # the stores opened while building close their databases


def copy_home(prepared: Path, home: Path) -> None:
    """Copy the data directory `prepared` (built with `building_home`, nothing writing to
    it any more) into this test's `home` (modes kept)."""
    shutil.copytree(prepared, home, dirs_exist_ok=True)


@pytest.fixture
def cli() -> CliRunner:
    """Typer's runner for the real `wardian` app (stderr kept separate)."""
    return CliRunner()


def invoke(
    runner: CliRunner, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> Result:
    """Run `wardian ARGS…` in-process and return the click Result."""
    from wardian.cli.main import app

    return runner.invoke(app, list(args), input=input, env=env)


@pytest.fixture
def corpus_dir() -> Path:
    """The transcript corpus folder, or skip with a reason when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"transcript corpus not found at {CORPUS} (it lives in ../shared/corpus)")
    return CORPUS


# --- PostgreSQL (issue 18) ----------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A `pg_slow` test's PostgreSQL run is a slow test (`make test` leaves it out)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if (item.get_closest_marker("pg_slow") and callspec is not None
                and callspec.params.get("backend") == "postgres"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[object]:
    """A throwaway PostgreSQL cluster for the whole session (`tests.pg_cluster`).

    Skips with the reason when no PostgreSQL binaries are installed, except under CI
    (``CI=true``), where the backend-parametrised suite must run: there it fails.
    """
    from tests.pg_cluster import Cluster, find_bin

    bindir = find_bin()
    reason = ("no PostgreSQL binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or on "
              "PATH: install the distribution's postgresql package to run these tests")
    if bindir is None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        message = "psycopg is not installed: pip install -e '.[dev]' (or '.[postgres]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    cluster = Cluster.start(bindir)
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: object) -> Iterator[str]:
    """The URL of a fresh, empty database in the session's cluster, dropped afterwards
    (every Wardian connection to it closed first)."""
    from tests.pg_cluster import Cluster
    from wardian._db import close_databases

    assert isinstance(pg_cluster, Cluster)
    url = pg_cluster.create_database()
    yield url
    close_databases(url)
    pg_cluster.drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, wardian_home: Path,
            monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once on each storage backend: the SQLite files, and PostgreSQL
    (``WARDIAN_DATABASE_URL`` set to a fresh database of the session's cluster)."""
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv("WARDIAN_DATABASE_URL", url)
    return str(request.param)
