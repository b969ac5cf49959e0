"""An installation on PostgreSQL reads its managed launches from PostgreSQL only: a
``memory.db`` left in the data directory from before the move is not consulted. A real
managed launch (``agent exec``) on the SQLite files leaves such a file; its child then
switches the installation to a fresh PostgreSQL database and asks which agent it acts for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_ASK = ("import os, sys\n"
        "url = os.environ.pop('PG_TEST_URL')\n"
        "if sys.argv[1] == 'pg':\n    os.environ['WARDIAN_DATABASE_URL'] = url\n"
        "from wardian._process import ancestors\n"
        "from wardian.memory.principal import managed_agent\n"
        "print(managed_agent(environ={},"
        " ancestors=[(p.pid, p.started_at) for p in ancestors()]))\n")


def _wardian(home: Path, *args: str, url: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env.update(WARDIAN_HOME=str(home), PG_TEST_URL=url)
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def test_a_leftover_memory_db_is_not_read_on_postgres(wardian_home: Path,
                                                      pg_url: str) -> None:
    for args in (("agent", "add", "ada", "--provider", "builtin"),
                 ("settings", "set", "agent_memory.enabled", "true")):
        assert _wardian(wardian_home, *args).returncode == 0
    seen = {}
    for where in ("sqlite", "pg"):
        done = _wardian(wardian_home, "agent", "exec", "ada", "--", sys.executable, "-c",
                        _ASK, where, url=pg_url)
        assert done.returncode == 0, done.stderr
        seen[where] = done.stdout.strip().splitlines()[-1]
        assert any(wardian_home.rglob("memory.db"))  # the file the launch is recorded in
    assert seen["sqlite"] not in ("None", "")  # the file names the launch: it can fail
    assert seen["pg"] == "None"  # PostgreSQL holds no launch of this process
