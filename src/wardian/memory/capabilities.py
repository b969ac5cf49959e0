"""Launch-scoped capabilities: minted per managed launch, stored only as a hash.

A capability is ``secrets.token_urlsafe(32)`` (256 random bits). Only its SHA-256 is kept
in ``memory.db`` (table ``capabilities``), bound to the agent id and to the identity of
the runtime that holds it — the pid and start time of the ``wardian agent exec``
supervisor process (see `wardian.runtime.launch` for why the supervisor). A capability is
valid while its row is not revoked *and* that process still runs (`wardian._process`:
start times within its one `START_TIME_TOLERANCE_S` name the same process; a recycled pid
with another start time matches no row).

Spec: "Save and inspect memory" (launch-scoped capability, expires when the runtime is
terminated, replaced or reclaimed; concurrent processes get independent capabilities).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable

from wardian._db import atomic
from wardian._process import START_TIME_TOLERANCE_S
from wardian._typing import NamedTuple
from wardian._util import utc_now_iso

__all__ = [
    "Capability",
    "CapabilityStore",
    "Refusal",
    "hash_token",
    "new_token",
]

TOKEN_BYTES = 32
"""Random bytes in a capability token (before URL-safe base64)."""


def new_token() -> str:
    """A fresh random capability token (URL-safe text, 43 characters).

    Exactly `secrets.token_urlsafe` (which is this: os.urandom, URL-safe base64 without
    padding), without importing `secrets`: that brings `random`, `hmac` and OpenSSL's
    `hashlib` into `agent exec` (bench/process_bench.py prints its budget)."""
    import base64

    return base64.urlsafe_b64encode(os.urandom(TOKEN_BYTES)).rstrip(b"=").decode("ascii")


def hash_token(token: str) -> str:
    """The stored form of a token: lowercase hex SHA-256 of its UTF-8 bytes.

    CPython's built-in SHA-256 (`_sha256`) when it has one: importing `hashlib` loads
    OpenSSL's libcrypto into every memory command for one 43-byte digest. The digest is
    the same; `hashlib` where the built-in is missing (it is
    named `_sha2` from Python 3.12 on)."""
    data = token.encode("utf-8")
    for name in ("_sha256", "_sha2"):
        try:  # (__import__: no stubs name the private modules)
            digest: str = __import__(name).sha256(data).hexdigest()
        except ImportError:
            continue
        return digest
    import hashlib

    return hashlib.sha256(data).hexdigest()


class Capability(NamedTuple):
    """One stored capability row (never the token itself)."""

    token_hash: str
    agent_id: str
    pid: int
    process_started_at: float
    workspace: str | None
    created_at: str
    revoked_at: str | None
    revoked_reason: str | None

    @staticmethod
    def from_row(row: sqlite3.Row) -> Capability:
        """Build from a ``capabilities`` row."""
        return Capability(
            token_hash=row["token_hash"], agent_id=row["agent_id"], pid=int(row["pid"]),
            process_started_at=float(row["process_started_at"]), workspace=row["workspace"],
            created_at=row["created_at"], revoked_at=row["revoked_at"],
            revoked_reason=row["revoked_reason"],
        )


class Refusal(NamedTuple):
    """One refused use of a capability outside its launch's tree (``capability_refusals``).

    ``holder_*`` is the launch the capability belongs to; ``caller_*`` the launch the
    presenting process runs in (None: outside every launch).
    """

    at: str
    holder_agent_id: str
    holder_launch_id: str | None
    caller_agent_id: str | None
    caller_launch_id: str | None
    caller_pid: int
    reason: str


class CapabilityStore:
    """SQL over the ``capabilities`` table of an open ``memory.db`` connection.

    Args:
        conn: a connection from `MemoryStore.conn` (already migrated).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def mint_in_transaction(
        self, agent_id: str, *, pid: int, started_at: float, workspace: str | None, now: str
    ) -> str:
        """Create a capability for `agent_id` bound to process (`pid`, `started_at` seconds).

        Must run inside an open transaction. Returns the token (shown once, never stored).
        """
        token = new_token()
        self.conn.execute(
            "INSERT INTO capabilities (token_hash, agent_id, pid, process_started_at, workspace,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (hash_token(token), agent_id, pid, started_at, workspace, now),
        )
        return token

    def mint(
        self, agent_id: str, *, pid: int, started_at: float, workspace: str | None
    ) -> str:
        """Create a capability (atomic); see `mint_in_transaction`. Returns the token."""
        with atomic(self.conn):
            return self.mint_in_transaction(
                agent_id, pid=pid, started_at=started_at, workspace=workspace, now=utc_now_iso()
            )

    def lookup(self, token: str) -> Capability | None:
        """The row stored for `token` (by its hash), or None. Read-only."""
        row = self.conn.execute(
            "SELECT * FROM capabilities WHERE token_hash = ?", (hash_token(token),)
        ).fetchone()
        return Capability.from_row(row) if row is not None else None

    def revoke(self, token: str, *, reason: str) -> bool:
        """Revoke the capability of `token` (atomic). Returns whether a live row was revoked."""
        with atomic(self.conn):
            cur = self.conn.execute(
                "UPDATE capabilities SET revoked_at = ?, revoked_reason = ?"
                " WHERE token_hash = ? AND revoked_at IS NULL",
                (utc_now_iso(), reason, hash_token(token)),
            )
        return cur.rowcount > 0

    def revoke_for_process(self, pid: int, started_at: float, *, reason: str) -> int:
        """Revoke every unrevoked capability bound to this process identity (atomic).

        Args:
            pid: the holder's pid.
            started_at: its start time in seconds since the epoch (matched within
                `START_TIME_TOLERANCE_S`).
            reason: why, e.g. ``runtime exited (code 0)``.

        Returns:
            How many capabilities were revoked.
        """
        with atomic(self.conn):
            cur = self.conn.execute(
                "UPDATE capabilities SET revoked_at = ?, revoked_reason = ?"
                " WHERE pid = ? AND abs(process_started_at - ?) <= ? AND revoked_at IS NULL",
                (utc_now_iso(), reason, pid, started_at, START_TIME_TOLERANCE_S),
            )
        return cur.rowcount

    def revoke_for_launch(self, launch_id: str, *, reason: str) -> int:
        """Revoke every unrevoked capability held by the process recorded for `launch_id`
        (table ``launches``; atomic). Returns how many were revoked (0 when the launch was
        never recorded: its holder never got as far as minting).

        Used when an automation step ends: the engine knows the step's launch id, not the
        pid of the holder process it started (`wardian.runtime.step_launch`).
        """
        row = self.conn.execute(
            "SELECT pid, process_started_at FROM launches WHERE launch_id = ?", (launch_id,)
        ).fetchone()
        if row is None:
            return 0
        return self.revoke_for_process(int(row[0]), float(row[1]), reason=reason)

    def revoke_for_agent(self, agent_id: str, *, reason: str) -> int:
        """Revoke every unrevoked capability of `agent_id` (atomic), e.g. when the agent is
        removed while one of its processes still runs. Returns how many were revoked."""
        with atomic(self.conn):
            cur = self.conn.execute(
                "UPDATE capabilities SET revoked_at = ?, revoked_reason = ?"
                " WHERE agent_id = ? AND revoked_at IS NULL",
                (utc_now_iso(), reason, agent_id),
            )
        return cur.rowcount

    def unrevoked_for_processes(
        self, identities: Iterable[tuple[int, float]]
    ) -> list[Capability]:
        """Unrevoked capabilities bound to any of these (pid, start time) identities. Read-only.

        Used to recognise a managed process by its ancestry even when its environment was
        cleared (the operator-only guard).
        """
        found: list[Capability] = []
        for pid, started_at in identities:
            found.extend(
                Capability.from_row(r)
                for r in self.conn.execute(
                    "SELECT * FROM capabilities WHERE pid = ? AND revoked_at IS NULL"
                    " AND abs(process_started_at - ?) <= ?",
                    (pid, started_at, START_TIME_TOLERANCE_S),
                )
            )
        return found

    def record_launch_in_transaction(
        self, launch_id: str, agent_id: str, *, pid: int, started_at: float,
        workspace: str | None, memory_enabled: bool, now: str,
    ) -> None:
        """Note a managed launch's supervisor identity (memory enabled or not).

        Must run inside an open transaction. No token is involved: the row only lets
        `managed_ancestors` recognise the launch's processes by their ancestry.
        """
        self.conn.execute(
            "INSERT INTO launches (launch_id, agent_id, pid, process_started_at, workspace,"
            " memory_enabled, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (launch_id, agent_id, pid, started_at, workspace, int(memory_enabled), now),
        )

    def managed_ancestors(
        self, identities: Iterable[tuple[int, float]]
    ) -> list[tuple[int, str]]:
        """``(pid, agent_id)`` of each of these (pid, start time) identities that is a managed
        launch: it holds an unrevoked capability or was recorded by
        `record_launch_in_transaction`. Read-only; in the order given (nearest first).

        The identities are live ancestors of the caller, so a recorded launch needs no
        revocation to stop matching: once it has ended its identity is gone.
        """
        found: list[tuple[int, str]] = []
        for pid, started_at in identities:
            row = self.conn.execute(
                "SELECT agent_id FROM launches WHERE pid = ? AND abs(process_started_at - ?)"
                " <= ? UNION ALL SELECT agent_id FROM capabilities WHERE pid = ? AND"
                " revoked_at IS NULL AND abs(process_started_at - ?) <= ? LIMIT 1",
                (pid, started_at, START_TIME_TOLERANCE_S) * 2,
            ).fetchone()
            if row is not None:
                found.append((pid, str(row[0])))
        return found

    def launches_of(
        self, identities: Iterable[tuple[int, float]]
    ) -> list[tuple[str, str]]:
        """``(launch_id, agent_id)`` of each identity that is a recorded launch, in the
        order given (nearest first). Read-only."""
        found: list[tuple[str, str]] = []
        for pid, started_at in identities:
            row = self.conn.execute(
                "SELECT launch_id, agent_id FROM launches WHERE pid = ? AND"
                " abs(process_started_at - ?) <= ? ORDER BY created_at DESC LIMIT 1",
                (pid, started_at, START_TIME_TOLERANCE_S),
            ).fetchone()
            if row is not None:
                found.append((str(row[0]), str(row[1])))
        return found

    def record_refusal(self, refusal: Refusal) -> None:
        """Keep a refused out-of-tree use (atomic)."""
        with atomic(self.conn):
            self.conn.execute(
                "INSERT INTO capability_refusals (at, holder_agent_id, holder_launch_id,"
                " caller_agent_id, caller_launch_id, caller_pid, reason)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (refusal.at, refusal.holder_agent_id, refusal.holder_launch_id,
                 refusal.caller_agent_id, refusal.caller_launch_id, refusal.caller_pid,
                 refusal.reason),
            )

    def refusals(self, agent_id: str | None = None) -> list[Refusal]:
        """Refused out-of-tree uses, newest first; only those involving `agent_id` (as
        holder or caller) when given. Read-only."""
        sql = "SELECT * FROM capability_refusals"
        args: tuple[str, ...] = ()
        if agent_id is not None:
            sql += " WHERE holder_agent_id = ? OR caller_agent_id = ?"
            args = (agent_id, agent_id)
        return [
            Refusal(r["at"], r["holder_agent_id"], r["holder_launch_id"],
                    r["caller_agent_id"], r["caller_launch_id"], int(r["caller_pid"]),
                    r["reason"])
            for r in self.conn.execute(sql + " ORDER BY id DESC", args)
        ]

    def for_agent(self, agent_id: str) -> list[Capability]:
        """Every capability ever minted for `agent_id`, newest first. Read-only."""
        return [
            Capability.from_row(r)
            for r in self.conn.execute(
                "SELECT * FROM capabilities WHERE agent_id = ? ORDER BY created_at DESC",
                (agent_id,),
            )
        ]
