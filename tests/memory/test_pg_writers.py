"""Memory writers side by side on PostgreSQL: each write locks the rows it changes, not the
schema.

The test process opens a transaction of real store writes and keeps it open; a real child
process (its own connection) then writes. What the server says in ``pg_locks`` decides:
a writer of another agent finishes without ever waiting; a writer revising the same record,
or saving the same text for the same agent, queues behind the open transaction and, once
it commits, writes on top of it — no lost source, no revision number twice, no second copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.waits import wait_until

from wardian._db import atomic
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope, Source
from wardian.memory.store import MemoryStore

AGENT_A = "a0000000-0000-4000-8000-00000000000a"
AGENT_B = "b0000000-0000-4000-8000-00000000000b"

_CHILD = """\
import json, sys
from wardian.memory.models import Scope, Source
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore
store = MemoryStore(open_memory_db())
out = []
for op in json.loads(sys.argv[1]):
    if op["do"] == "save":
        done = store.save_once(op["agent"], op["text"], evidence="from the child",
                               scope=Scope("agent"), actor="child")
        out.append([done.record.id, done.outcome])
    elif op["do"] == "source":
        record = store.update(op["agent"], op["id"], add_sources=[Source("file", op["at"])],
                              actor="child")
        out.append([record.id, record.current_revision_id])
    elif op["do"] == "remove":
        out.append([store.remove(op["agent"], op["id"], actor="child").id, "removed"])
print(json.dumps(out))
"""


@pytest.fixture
def store(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryStore]:
    monkeypatch.setenv("WARDIAN_DATABASE_URL", pg_url)
    opened = MemoryStore(open_memory_db())
    yield opened


_started: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _reap_children() -> Iterator[None]:
    """Every child a test started is gone when it ends (killed if a failure left it)."""
    yield
    while _started:
        child = _started.pop()
        if child.poll() is None:
            child.kill()
        child.communicate()


def _child(ops: list[dict[str, str]], home: Path) -> subprocess.Popen[str]:
    """A child process running `ops` (see `_CHILD`) on the same database."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "WARDIAN_HOME": str(home), "PYTHONPATH": str(root / "src")}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(ops)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _started.append(child)
    return child


def _waiting(url: str) -> list[tuple[Any, ...]]:
    """The locks some session of `url`'s database waits for (``pg_locks``, not granted)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT l.locktype, l.mode, a.query FROM pg_locks l JOIN pg_stat_activity a"
            " ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()"
        ).fetchall()


def _finished_or_waiting(child: subprocess.Popen[str], url: str) -> str:
    """``finished`` once `child` has exited, ``waiting`` once it queues for a lock."""
    state = wait_until(lambda: "finished" if child.poll() is not None
                       else "waiting" if _waiting(url) else None,
                       what="the child finished or queued for a lock")
    assert state is not None
    return state


def _result(child: subprocess.Popen[str]) -> list[list[str]]:
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return list(json.loads(out))


def _save(store: MemoryStore, agent: str, text: str) -> str:
    return store.save_once(agent, text, evidence="seen in the repository",
                           scope=Scope("agent"), actor="test").record.id


def test_a_writer_of_another_agent_never_waits(store: MemoryStore, pg_url: str,
                                               tmp_path: Path) -> None:
    theirs = _save(store, AGENT_B, "the parser lives under src/parse")
    gone = _save(store, AGENT_B, "the old build script is kept in tools")
    mine = _save(store, AGENT_A, "deploys go through the staging cluster first")
    with atomic(store.conn, locks=()):
        _save(store, AGENT_A, "release notes are written by hand")
        store.update(AGENT_A, mine, add_sources=[Source("file", "docs/deploy.md")],
                     actor="test")
        store.remove(AGENT_A, _save(store, AGENT_A, "a note retired at once"), actor="test")
        child = _child([{"do": "save", "agent": AGENT_B, "text": "tests run with pytest"},
                        {"do": "source", "agent": AGENT_B, "id": theirs, "at": "README"},
                        {"do": "remove", "agent": AGENT_B, "id": gone}], tmp_path)
        assert _finished_or_waiting(child, pg_url) == "finished", _waiting(pg_url)
        saved, _, _ = _result(child)
    assert saved[1] == "saved"
    assert [s.locator for s in store.get(theirs).sources] == ["README"]
    assert store.get(gone).status == "removed"
    assert [v.seq for v in store.history(mine)] == [1, 2]
    assert store.verify() == []


def test_two_writers_revising_one_record_lose_nothing(store: MemoryStore, pg_url: str,
                                                      tmp_path: Path) -> None:
    rid = _save(store, AGENT_A, "the cache directory is .cache/build")
    with atomic(store.conn, locks=()):
        store.update(AGENT_A, rid, add_sources=[Source("file", "Makefile")], actor="test")
        child = _child([{"do": "source", "agent": AGENT_A, "id": rid, "at": "ci.yml"}],
                       tmp_path)
        assert _finished_or_waiting(child, pg_url) == "waiting"
    (_, revision), = _result(child)
    record = store.get(rid)
    assert [s.locator for s in record.sources] == ["Makefile", "ci.yml"]
    history = store.history(rid)
    assert [v.seq for v in history] == [1, 2, 3]
    assert record.current_revision_id == revision == history[-1].revision_id
    assert [s["locator"] for s in history[-1].snapshot["sources"]] == ["Makefile", "ci.yml"]
    assert store.verify() == []


def test_a_removed_record_is_not_revised_by_a_writer_that_waited(
        store: MemoryStore, pg_url: str, tmp_path: Path) -> None:
    rid = _save(store, AGENT_A, "the staging database is rebuilt nightly")
    with atomic(store.conn, locks=()):
        store.remove(AGENT_A, rid, actor="test", reason="no longer true")
        child = _child([{"do": "source", "agent": AGENT_A, "id": rid, "at": "cron.txt"}],
                       tmp_path)
        assert _finished_or_waiting(child, pg_url) == "waiting"
    child.communicate(timeout=120)
    assert child.returncode != 0  # "is removed and cannot be updated"
    assert store.get(rid).status == "removed"
    assert [v.seq for v in store.history(rid)] == [1, 2]


def test_the_same_text_saved_twice_at_once_is_one_record(store: MemoryStore, pg_url: str,
                                                         tmp_path: Path) -> None:
    text = "the linter runs before every commit"
    with atomic(store.conn, locks=()):
        rid = _save(store, AGENT_A, text)
        child = _child([{"do": "save", "agent": AGENT_A, "text": text}], tmp_path)
        assert _finished_or_waiting(child, pg_url) == "waiting"
    (same, outcome), = _result(child)
    assert (same, outcome) == (rid, "evidence_added")  # its evidence differs from ours
    assert store.count(AGENT_A) == 1
    assert [v.seq for v in store.history(rid)] == [1, 2]
    assert store.verify() == []
