"""Garden test support: seed a data directory with the real stores, run the real server.

`garden_server` starts ``python -m wardian garden serve --port 0`` as a child process (the
real CLI, a real uvicorn on 127.0.0.1) and reads the URL it prints.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Garden:
    """A running Garden: the printed URL (with token), its base (origin and the secret
    base path, no trailing slash), port, token and the server's origin (`root`)."""

    url: str
    base: str
    port: int
    token: str
    output: list[str]

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_path(self) -> str:
        return self.base.removeprefix(self.root)


@contextmanager
def garden_server(home: Path, *extra: str) -> Iterator[Garden]:
    """Run `wardian garden serve` on a free port for data directory `home`; stop it after."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    proc = subprocess.Popen(
        [sys.executable, "-m", "wardian", "garden", "serve", "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        output: list[str] = []
        url = ""
        while not url:
            line = proc.stdout.readline()
            if not line:
                err = proc.stderr.read() if proc.stderr else ""
                raise AssertionError(f"garden serve exited early: {output} {err}")
            output.append(line.rstrip("\n"))
            if line.startswith("Open: "):
                url = line.split()[1]
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1" and parts.port
        token = parse_qs(parts.query)["token"][0]
        base = f"http://127.0.0.1:{parts.port}{parts.path.rstrip('/')}"
        yield Garden(url, base, parts.port, token, output)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def seed_agent(name: str = "ada", *, records: int = 0) -> str:
    """Register agent `name` with `records` plain records; returns its id."""
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(open_state_db())
    agent_id = registry.add(name, "claude").id
    if records:
        from wardian._db import atomic
        from wardian._util import utc_now_iso

        store = MemoryStore(open_memory_db())
        with atomic(store.conn):
            for i in range(records):
                store.insert_in_transaction(
                    agent_id, text=f"seeded note {i:05d} about topic {i % 97}",
                    evidence=f"evidence {i}", kind="stable" if i % 3 else "current",
                    scope=Scope.agent() if i % 2 else Scope.workspace("/srv/project"),
                    sources=[], actor="test", reason=None, now=utc_now_iso(),
                )
    return agent_id


def save(agent_id: str, text: str, **fields: Any) -> Any:
    """Save one record for `agent_id` with the real store (workspace scope by default)."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    fields.setdefault("evidence", f"evidence for {text}")
    fields.setdefault("scope", Scope.workspace("/srv/project"))
    return store.save(agent_id, text, actor="test", **fields)


def update(record_id: str, **fields: Any) -> Any:
    """Update one record with the real store (a new revision)."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return store.update(None, record_id, actor="test", **fields)


def get(record_id: str) -> Any:
    """The record as stored now."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return store.get(record_id, agent_id=None)


def save_aged(agent_id: str, text: str, *, days: int, kind: str = "current",
              scope: Any = None) -> str:
    """Insert a record last saved `days` days ago (a stale checkpoint when `current` and
    older than ``memory.current_review_days``); returns its id."""
    from datetime import timedelta

    from wardian._db import atomic
    from wardian._util import format_utc, utc_now
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    with atomic(store.conn):
        return store.insert_in_transaction(
            agent_id, text=text, evidence=f"evidence for {text}", kind=cast(Any, kind),
            scope=scope or Scope.agent(), sources=[], actor="test", reason=None,
            now=format_utc(utc_now() - timedelta(days=days)))


def flag(record_id: str, why: str) -> None:
    """Set a record aside as the secret-scan migration does."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    with store.db.atomic():
        store.conn.execute("UPDATE records SET flagged = ? WHERE id = ?", (why, record_id))
