"""Capabilities and principal resolution (`wardian.memory.capabilities`,
`wardian.memory.principal`): hash-only storage, binding, fail-closed reasons."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from wardian._db import atomic
from wardian.errors import (
    CapabilityExpired,
    CapabilityInvalid,
    CapabilityMissing,
    CapabilityNotHeld,
    OperatorOnly,
)
from wardian.memory.capabilities import CapabilityStore, hash_token, new_token
from wardian.memory.db import open_memory_db
from wardian.memory.principal import managed_agent, require_operator, resolve_principal
from wardian.memory.store import MemoryStore

AGENT = "aaaaaaaa-0000-4000-8000-000000000001"
OTHER = "bbbbbbbb-0000-4000-8000-000000000002"
T0 = 1767225600.0
"""2026-01-01T00:00:00Z: launches recorded at a fixed time name processes started just
before it."""


def alive(_pid: int, _started: float) -> bool:
    return True


def dead(_pid: int, _started: float) -> bool:
    return False


@pytest.fixture
def store(backend: str) -> MemoryStore:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    return MemoryStore(open_memory_db())


def test_tokens_are_random_and_only_hashes_are_stored(store: MemoryStore) -> None:
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100 and all(len(t) >= 43 for t in tokens)
    token = CapabilityStore(store.conn).mint(AGENT, pid=1, started_at=2.0, workspace="/w")
    rows = store.conn.execute("SELECT * FROM capabilities").fetchall()
    assert [r["token_hash"] for r in rows] == [hash_token(token)]
    assert all(token not in str(tuple(r)) for r in rows)


def test_token_form_and_hash_are_the_standard_ones() -> None:
    # new_token/hash_token avoid importing secrets/hashlib (issue 19's CPU budget); what
    # they make must stay exactly secrets.token_urlsafe's form and hashlib's SHA-256.
    import hashlib
    import re

    for token in [new_token() for _ in range(50)] + ["", "x", "t\u00e9st-\u2603", "a" * 200]:
        assert hash_token(token) == hashlib.sha256(token.encode("utf-8")).hexdigest()
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", new_token()) for _ in range(50))


def test_hash_token_is_sha256_at_every_block_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    # SHA-256 pads to 64-byte blocks; lengths 0..200 cross the boundaries at 55/56/64 bytes
    # and several blocks, in one- and multi-byte characters. Then again without the
    # built-in module (an interpreter built without it): the hashlib fallback.
    import hashlib

    texts = [c * n for n in range(201) for c in ("a", "\u00e9", "\u2603")]
    assert all(hash_token(t) == hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts)
    for name in ("_sha256", "_sha2"):
        monkeypatch.setitem(sys.modules, name, None)  # `import` of it raises ImportError
    assert all(hash_token(t) == hashlib.sha256(t.encode("utf-8")).hexdigest()
               for t in texts[::7])


def test_resolve_principal_reasons(store: MemoryStore) -> None:
    caps = CapabilityStore(store.conn)
    token = caps.mint(AGENT, pid=123, started_at=4.5, workspace="/w")
    env = {"WARDIAN_AGENT_ID": AGENT, "WARDIAN_CAPABILITY": token}
    inside = [(999, 9.0), (123, 4.6)]  # the caller, then its parent: the holder
    principal = resolve_principal(is_alive=alive, caller=inside, environ=env, store=store)
    assert principal.agent_id == AGENT and principal.launch_workspace == "/w"
    assert principal.actor == f"agent:{AGENT}"
    with pytest.raises(CapabilityMissing):
        resolve_principal(is_alive=alive, caller=inside, environ={"WARDIAN_AGENT_ID": AGENT},
                          store=store)
    with pytest.raises(CapabilityInvalid):
        resolve_principal(is_alive=alive, caller=inside,
                          environ={**env, "WARDIAN_CAPABILITY": new_token()}, store=store)
    with pytest.raises(CapabilityInvalid):
        resolve_principal(is_alive=alive, caller=inside,
                          environ={**env, "WARDIAN_AGENT_ID": OTHER}, store=store)
    # An orphan left behind by an ended runtime: its holder is gone.
    with pytest.raises(CapabilityExpired, match="has ended"):
        resolve_principal(is_alive=dead, caller=[(999, 9.0), (1, 0.0)], environ=env,
                          store=store)
    # A live holder that is not among the caller's ancestors: a stolen or replayed token.
    # The same pid with another start time (a reused pid) is not the holder either.
    for outside in ([(999, 9.0), (1, 0.0)], [(999, 9.0), (123, 99.0)]):
        with pytest.raises(CapabilityNotHeld, match="runs outside any launch"):
            resolve_principal(is_alive=alive, caller=outside, environ=env, store=store)
    assert len(caps.refusals(AGENT)) == 2
    assert caps.revoke(token, reason="test") is True
    assert caps.revoke(token, reason="again") is False
    with pytest.raises(CapabilityExpired, match="test"):
        resolve_principal(is_alive=alive, caller=inside, environ=env, store=store)


def test_missing_database_is_not_created(tmp_path: Path) -> None:
    db = tmp_path / "none" / "memory.db"
    with pytest.raises(CapabilityInvalid):
        resolve_principal(is_alive=alive, caller=(), db_path=db,
                          environ={"WARDIAN_AGENT_ID": AGENT, "WARDIAN_CAPABILITY": "t"})
    assert not db.exists()


def test_revoke_for_process_touches_only_that_identity(store: MemoryStore) -> None:
    caps = CapabilityStore(store.conn)
    mine = caps.mint(AGENT, pid=10, started_at=100.0, workspace=None)
    reused_pid = caps.mint(AGENT, pid=10, started_at=500.0, workspace=None)
    other = caps.mint(OTHER, pid=11, started_at=100.0, workspace=None)
    assert caps.revoke_for_process(10, 100.4, reason="exit") == 1
    assert caps.lookup(mine).revoked_at is not None  # type: ignore[union-attr]
    assert caps.lookup(reused_pid).revoked_at is None  # type: ignore[union-attr]
    assert caps.lookup(other).revoked_at is None  # type: ignore[union-attr]
    assert [c.pid for c in caps.unrevoked_for_processes([(10, 500.2), (99, 1.0)])] == [10]
    assert len(caps.for_agent(AGENT)) == 2
    assert caps.revoke_for_agent(AGENT, reason="agent removed") == 1
    assert caps.lookup(reused_pid).revoked_reason == "agent removed"  # type: ignore[union-attr]
    assert caps.lookup(other).revoked_at is None  # type: ignore[union-attr]


def test_require_operator(store: MemoryStore) -> None:
    require_operator(environ={})
    for var in ("WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY", "WARDIAN_MEMORY_CONTEXT",
                "WARDIAN_LAUNCH_ID"):
        with pytest.raises(OperatorOnly):
            require_operator(environ={var: "x"})
    started = time.time() - 5  # a supervisor mints right after it started
    token = CapabilityStore(store.conn).mint(AGENT, pid=42, started_at=started,
                                             workspace=None)
    with pytest.raises(OperatorOnly, match="ancestor pid 42"):
        require_operator(environ={}, ancestors=[(1, 1.0), (42, started)])
    CapabilityStore(store.conn).revoke(token, reason="exit")
    require_operator(environ={}, ancestors=[(42, started)])


def test_launches_are_recognised_by_ancestry_and_name_their_agent(store: MemoryStore) -> None:
    caps = CapabilityStore(store.conn)
    with atomic(store.conn):
        caps.record_launch_in_transaction(
            "launch-1", OTHER, pid=77, started_at=T0 + 5.0, workspace=None,
            memory_enabled=False, now="2026-01-01T00:00:06Z",
        )
    assert managed_agent(environ={}) is None  # an operator's process
    assert managed_agent(environ={"WARDIAN_AGENT_ID": AGENT}) == AGENT
    # The ancestry decides over an edited environment; a reused pid does not match.
    assert managed_agent(environ={"WARDIAN_AGENT_ID": AGENT},
                         ancestors=[(1, 1.0), (77, T0 + 5.4)]) == OTHER
    assert managed_agent(environ={}, ancestors=[(77, T0 + 9.0)]) is None
    with pytest.raises(OperatorOnly, match="ancestor pid 77"):
        require_operator(environ={}, ancestors=[(77, T0 + 5.0)])
    require_operator(environ={}, ancestors=[(77, T0 + 9.0)])
