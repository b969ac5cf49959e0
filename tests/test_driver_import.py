"""The PostgreSQL driver is imported only by processes that use PostgreSQL: real child
processes of the real CLI on a SQLite installation never load psycopg (checked in their
``sys.modules`` at exit), and one configured for PostgreSQL does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = ("import json, runpy, sys\nsys.argv = ['wardian', *sys.argv[1:]]\n"
          "try:\n    runpy.run_module('wardian', run_name='__main__')\n"
          "except SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
          "print(json.dumps([code, sorted(m for m in sys.modules"
          " if m.split('.')[0] in ('psycopg', 'psycopg_pool'))]), file=sys.stderr)\n")

_DRIVER = {"psycopg", "psycopg_pool"}


def _run(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """Exit code and the driver modules loaded by ``wardian ARGS`` in a child process."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**base, "WARDIAN_HOME": str(home), **(env or {})})
    code, loaded = json.loads(done.stderr.strip().splitlines()[-1])
    return int(code or 0), list(loaded)


COMMANDS = [
    ("agent", "add", "ada", "--provider", "builtin"),
    ("agent", "list"),
    ("settings", "set", "agent_memory.enabled", "true"),
    ("agent", "exec", "ada", "--", sys.executable, "-c", "pass"),
    ("garden", "memory", "list", "--agent", "ada"),
    ("session", "recover"),
    ("automation", "runs"),
    ("conversation", "list"),
    ("serve", "--status"),
    ("doctor",),
]


@pytest.mark.parametrize("database_url", [None, ""], ids=["unset", "empty"])
def test_a_sqlite_installation_never_imports_the_driver(wardian_home: Path,
                                                        database_url: str | None) -> None:
    env = {} if database_url is None else {"WARDIAN_DATABASE_URL": database_url}
    for command in COMMANDS:
        code, loaded = _run(wardian_home, *command, env=env)
        assert code in (0, 1), (command, code)
        assert loaded == [], (command, loaded)
    assert (wardian_home / "state.db").exists()  # the commands did use the database


def test_a_postgresql_installation_imports_it(wardian_home: Path, pg_url: str) -> None:
    code, loaded = _run(wardian_home, "agent", "list",
                        env={"WARDIAN_DATABASE_URL": pg_url})
    assert code == 0 and {m.split(".")[0] for m in loaded} >= _DRIVER


def test_memory_save_on_sqlite_never_imports_the_driver(wardian_home: Path) -> None:
    """``wardian memory save`` in a managed process (the probe run under ``agent exec``):
    the saving process and the one that launched it both leave psycopg unloaded."""
    for command in COMMANDS[:3]:
        assert _run(wardian_home, *command)[0] == 0, command
    base = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "agent", "exec", "ada", "--", sys.executable, "-c",
         _PROBE, "memory", "save", "builds run from the repository root", "--evidence",
         "the Makefile says so", "--scope", "agent"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**base, "WARDIAN_HOME": str(wardian_home)})
    probes = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("[")]
    assert [code for code, _ in probes] == [0, 0], done.stderr  # the save, then the exec
    assert all(loaded == [] for _, loaded in probes), probes
    assert "Memory saved" in done.stdout, done.stdout
