"""Launch-scoped capabilities: minted per managed launch, stored only as a hash.

A capability is ``secrets.token_urlsafe(32)`` (256 random bits). Only its SHA-256 is kept
in ``memory.db`` (table ``capabilities``), bound to the agent id and to the identity of
the runtime that holds it — the pid and start time of the ``wardian agent exec``
supervisor process (see `wardian.runtime.launch` for why the supervisor). A capability is
valid while its row is not revoked *and* that process still runs (`wardian._process`:
start times within its one `START_TIME_TOLERANCE_S` name the same process; a recycled pid
with another start time matches no row). The row also keeps the pid and user namespace
that process ran in (`wardian._process.Namespaces`; NULL off Linux and in rows of older
versions): a pid names a process only within one pid namespace.

Spec: "Save and inspect memory" (launch-scoped capability, expires when the runtime is
terminated, replaced or reclaimed; concurrent processes get independent capabilities).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

from wardian._backend import Connection, Row
from wardian._db import atomic
from wardian._process import START_TIME_TOLERANCE_S, Namespaces, namespaces
from wardian._util import utc_now_iso

__all__ = [
    "LAUNCH_RECORD_WINDOW_S",
    "BadLaunch",
    "Capability",
    "CapabilityStore",
    "Refusal",
    "hash_token",
    "launch_row_problem",
    "new_token",
    "read_bad_launches",
]

LAUNCH_RECORD_WINDOW_S = 3600.0
"""The latest a launch's supervisor records its launch after it started, in seconds: it
records it (and mints the capability) right after it starts, so a row naming a process
started longer before is not a launch's supervisor."""

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
    namespaces: Namespaces | None = None
    """The holder's pid and user namespace; None off Linux and in older rows."""

    @staticmethod
    def from_row(row: Row) -> Capability:
        """Build from a ``capabilities`` row."""
        pid_ns, user_ns = row["pid_ns"], row["user_ns"]
        return Capability(
            token_hash=row["token_hash"], agent_id=row["agent_id"], pid=int(row["pid"]),
            process_started_at=float(row["process_started_at"]), workspace=row["workspace"],
            created_at=row["created_at"], revoked_at=row["revoked_at"],
            revoked_reason=row["revoked_reason"],
            namespaces=(Namespaces(int(pid_ns), int(user_ns))
                        if pid_ns is not None and user_ns is not None else None),
        )


class BadLaunch(NamedTuple):
    """A ``launches`` or unrevoked ``capabilities`` row that cannot name a launch's
    supervisor (`launch_row_problem`): `key` is the launch id or the token hash."""

    table: str
    key: str
    agent_id: str
    pid: int
    process_started_at: float
    created_at: str
    reason: str


def launch_row_problem(pid: int, started_at: float, created_at: str,
                       ns: Namespaces | None, own: Namespaces | None,
                       boot: float | None = None) -> str | None:
    """Why a recorded launch identity cannot be a launch's supervisor as seen from
    namespaces `own` (the data directory owner's), or None when it can. Pure.

    Impossible: recorded in other namespaces than `own`; recorded without namespaces
    (by an older version) and naming pid 1, an init process — what a launch started inside
    ``unshare --pid`` recorded; a process that started after its launch was recorded, or
    more than `LAUNCH_RECORD_WINDOW_S` before; recorded after the machine booted at `boot`
    (seconds since the epoch; None: not known) naming a process that started before it.
    A row of a launch of an earlier boot (recorded before `boot`) is an ended launch, not
    a bad one.
    """
    if ns is not None and own is not None and ns != own:
        return (f"recorded in pid namespace {ns.pid} / user namespace {ns.user}, not the "
                f"operator's {own.pid} / {own.user}")
    if ns is None and own is not None and pid == 1:
        return "names pid 1 (an init process), recorded without namespaces"
    from wardian._util import parse_utc

    try:
        recorded = parse_utc(created_at).timestamp()
    except (ValueError, TypeError):
        return f"has an unreadable recording time ({str(created_at)[:40]!r})"
    if started_at > recorded + START_TIME_TOLERANCE_S:
        return "names a process that started after the launch was recorded"
    if (boot is not None and recorded >= boot + START_TIME_TOLERANCE_S
            and started_at < boot - START_TIME_TOLERANCE_S):
        return ("names a process that started before the machine booted, in a launch "
                "recorded after")
    if recorded - started_at > LAUNCH_RECORD_WINDOW_S:
        return (f"names a process that started {int(recorded - started_at)} s before the "
                "launch was recorded")
    return None


def read_bad_launches(conn: Connection,
                      own: Namespaces | None) -> list[BadLaunch] | None:
    """Every ``launches`` row and unrevoked ``capabilities`` row with a
    `launch_row_problem` as seen from namespaces `own` on this boot
    (`wardian._process.boot_time`), oldest first; None when the database has no
    ``launches`` table yet. Read-only (the doctor reads with it; files of older versions
    without the namespace columns are read as they are)."""
    from wardian._db import has_table, table_columns
    from wardian._process import boot_time

    boot = boot_time()

    if not has_table(conn, "launches"):
        return None
    found: list[BadLaunch] = []
    for table, key, where in (("launches", "launch_id", ""),
                              ("capabilities", "token_hash", " WHERE revoked_at IS NULL")):
        has_ns = "pid_ns" in table_columns(conn, table)
        ns_cols = "pid_ns, user_ns" if has_ns else "NULL, NULL"
        for row in conn.execute(
                f"SELECT {key}, agent_id, pid, process_started_at, created_at, {ns_cols}"
                f" FROM {table}{where} ORDER BY created_at"):
            ns = Namespaces(int(row[5]), int(row[6])) if row[5] is not None else None
            reason = launch_row_problem(int(row[2]), float(row[3]), str(row[4]), ns, own,
                                        boot)
            if reason is not None:
                found.append(BadLaunch(table, str(row[0]), str(row[1]), int(row[2]),
                                       float(row[3]), str(row[4]), reason))
    return found


class _Own:
    """The default of a ``ns`` argument: the namespaces of the calling process."""


OWN = _Own()


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

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def mint_in_transaction(
        self, agent_id: str, *, pid: int, started_at: float, workspace: str | None, now: str,
        ns: Namespaces | _Own | None = OWN,
    ) -> str:
        """Create a capability for `agent_id` bound to process (`pid`, `started_at` seconds)
        in namespaces `ns` (default: this process's, `wardian._process.namespaces`).

        Must run inside an open transaction. Returns the token (shown once, never stored).
        """
        token = new_token()
        found = namespaces() if isinstance(ns, _Own) else ns
        self.conn.execute(
            "INSERT INTO capabilities (token_hash, agent_id, pid, process_started_at, workspace,"
            " created_at, pid_ns, user_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (hash_token(token), agent_id, pid, started_at, workspace, now,
             *(found if found is not None else (None, None))),
        )
        return token

    def mint(
        self, agent_id: str, *, pid: int, started_at: float, workspace: str | None,
        ns: Namespaces | _Own | None = OWN,
    ) -> str:
        """Create a capability (atomic); see `mint_in_transaction`. Returns the token."""
        with atomic(self.conn):
            return self.mint_in_transaction(
                agent_id, pid=pid, started_at=started_at, workspace=workspace,
                now=utc_now_iso(), ns=ns,
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
        ns: Namespaces | _Own | None = OWN,
    ) -> None:
        """Note a managed launch's supervisor identity (memory enabled or not), in
        namespaces `ns` (default: this process's).

        Must run inside an open transaction. No token is involved: the row only lets
        `managed_ancestors` recognise the launch's processes by their ancestry.
        """
        found = namespaces() if isinstance(ns, _Own) else ns
        self.conn.execute(
            "INSERT INTO launches (launch_id, agent_id, pid, process_started_at, workspace,"
            " memory_enabled, created_at, pid_ns, user_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (launch_id, agent_id, pid, started_at, workspace, int(memory_enabled), now,
             *(found if found is not None else (None, None))),
        )

    def managed_ancestors(
        self, identities: Iterable[tuple[int, float]]
    ) -> list[tuple[int, str]]:
        """``(pid, agent_id)`` of each of these (pid, start time) identities that is a managed
        launch: it holds an unrevoked capability or was recorded by
        `record_launch_in_transaction`. Read-only; in the order given (nearest first).

        The identities are live ancestors of the caller, so a recorded launch needs no
        revocation to stop matching: once it has ended its identity is gone. A row that
        cannot name a launch's supervisor (`launch_row_problem`, e.g. pid 1 recorded from
        inside a pid namespace) matches nothing: `wardian doctor` reports it and
        `wardian agent clear-bad-launches` removes it.
        """
        own = namespaces()
        found: list[tuple[int, str]] = []
        for pid, started_at in identities:
            rows = self.conn.execute(
                "SELECT agent_id, process_started_at, created_at, pid_ns, user_ns FROM"
                " launches WHERE pid = ? AND abs(process_started_at - ?) <= ? UNION ALL"
                " SELECT agent_id, process_started_at, created_at, pid_ns, user_ns FROM"
                " capabilities WHERE pid = ? AND revoked_at IS NULL AND"
                " abs(process_started_at - ?) <= ?",
                (pid, started_at, START_TIME_TOLERANCE_S) * 2,
            ).fetchall()
            for row in rows:
                ns = Namespaces(int(row[3]), int(row[4])) if row[3] is not None else None
                if launch_row_problem(pid, float(row[1]), str(row[2]), ns, own) is None:
                    found.append((pid, str(row[0])))
                    break
        return found

    def clear_bad_launches(self) -> list[BadLaunch]:
        """Delete every bad ``launches`` row and revoke every bad capability
        (`read_bad_launches`, seen from this process's namespaces; atomic). Returns
        what was cleared."""
        with atomic(self.conn):
            bad = read_bad_launches(self.conn, namespaces()) or []
            now = utc_now_iso()
            for one in bad:
                if one.table == "launches":
                    self.conn.execute("DELETE FROM launches WHERE launch_id = ?", (one.key,))
                else:
                    self.conn.execute(
                        "UPDATE capabilities SET revoked_at = ?, revoked_reason = ?"
                        " WHERE token_hash = ? AND revoked_at IS NULL",
                        (now, f"bad launch row cleared: {one.reason}", one.key))
        return bad

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
