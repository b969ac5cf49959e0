"""``wardian doctor`` (check ``launches``) finds every kind of launch row that cannot name a
launch's supervisor (`wardian.memory.capabilities.launch_row_problem`), names the command
that clears it, exits 1; after ``wardian agent clear-bad-launches`` it is clean, and a good
launch recorded next to the bad rows is left alone.

Real parts: the real CLI in child processes (`tests.e2e._support.W`) on the test's own
SQLite data directory. The bad rows are written the way a bad launch leaves them: through
Wardian's own db layer (`CapabilityStore.record_launch_in_transaction` and
`mint_in_transaction` on the real ``memory.db``, inside `wardian._db.atomic`), with the
identity, namespaces and recording time such a launch would have recorded.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from tests.e2e._support import W

from wardian._process import Namespaces


class Bad(NamedTuple):
    """One bad row: its supervisor identity, namespaces, recording time and the reason
    doctor gives (a fragment of it)."""

    pid: int
    started_at: float
    created_at: str
    ns: Namespaces | None
    reason: str


def _iso(moment: float) -> str:
    from datetime import UTC, datetime

    from wardian._util import format_utc

    return format_utc(datetime.fromtimestamp(moment, UTC))


def _own() -> Namespaces:
    from wardian._process import namespaces

    found = namespaces()
    if found is None:
        pytest.skip("needs Linux namespaces (/proc/self/ns)")
    return found


def _pid_1() -> Bad:
    """What `agent exec` inside ``unshare --pid`` recorded before rows had namespaces:
    its supervisor as pid 1, with the start time of the host's pid 1."""
    from wardian._process import identity_of

    init = identity_of(1)
    assert init is not None
    return Bad(1, init.started_at, _iso(time.time()), None, "names pid 1")


def _foreign_namespace() -> Bad:
    """A supervisor in another pid namespace: its pid names another process here."""
    own = _own()
    now = time.time()
    return Bad(4242, now - 5, _iso(now), Namespaces(own.pid + 1, own.user),
               f"recorded in pid namespace {own.pid + 1}")


def _future_start() -> Bad:
    """A start time after the launch was recorded (no supervisor records before it
    starts)."""
    now = time.time()
    return Bad(4242, now + 600, _iso(now), _own(), "started after the launch was recorded")


def _long_before() -> Bad:
    """A start time hours before the recording (a supervisor records its launch as soon
    as it starts): what a recycled or borrowed identity looks like. Recorded before this
    boot, so only the gap is wrong (a start before the boot in a launch recorded after it
    is `_before_boot`)."""
    from wardian._process import boot_time

    recorded = boot_time() or time.time()
    recorded -= 100
    return Bad(4242, recorded - 7200, _iso(recorded), _own(),
               "started 7200 s before the launch")


def _before_boot() -> Bad:
    """A launch recorded after this machine booted naming a process that started before
    the boot: no process of this boot started then."""
    from wardian._process import boot_time

    boot = boot_time()
    if boot is None or time.time() - boot < 120:
        pytest.skip("needs /proc/stat's btime and a machine up for two minutes")
    return Bad(4242, boot - 60, _iso(boot + 30), _own(),
               "started before the machine booted")


def _unreadable_time() -> Bad:
    """A recording time that is no timestamp."""
    return Bad(4242, time.time(), "yesterday", _own(), "unreadable recording time")


CASES: dict[str, Callable[[], Bad]] = {
    "pid-1": _pid_1, "foreign-namespace": _foreign_namespace,
    "future-start": _future_start, "long-before": _long_before,
    "before-boot": _before_boot, "unreadable-time": _unreadable_time,
}


def _write_bad(home: Path, agent_id: str, bad: Bad) -> None:
    """A launch row and its capability, written through Wardian's db layer."""
    from wardian._db import atomic
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import MemoryDB
    from wardian.memory.store import MemoryStore

    store = MemoryStore(MemoryDB.open(home / "memory.db"))
    caps = CapabilityStore(store.conn)
    with atomic(store.conn):
        caps.record_launch_in_transaction(
            "b" * 32, agent_id, pid=bad.pid, started_at=bad.started_at, workspace=None,
            memory_enabled=True, now=bad.created_at, ns=bad.ns)
        caps.mint_in_transaction(agent_id, pid=bad.pid, started_at=bad.started_at,
                                 workspace=None, now=bad.created_at, ns=bad.ns)


def _rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True)
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


@pytest.mark.parametrize("case", list(CASES))
def test_doctor_reports_a_bad_launch_row_and_its_fix_clears_it(
    wardian_home: Path, case: str
) -> None:
    w = W(wardian_home)
    w.run("settings", "set", "agent_memory.enabled", "true")
    agent = w.json("agent", "add", "bob", "--provider", "claude")["id"]
    # A good launch first: it must survive the clearing.
    w.run("agent", "exec", "bob", "--", "true")
    [(good,)] = _rows(wardian_home, "SELECT launch_id FROM launches")
    clean = w.run("doctor", "--check", "launches", check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr

    bad = CASES[case]()
    _write_bad(wardian_home, agent, bad)

    doctor = w.run("doctor", "--check", "launches", "--json", check=False)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    [check] = json.loads(doctor.stdout)["checks"]
    findings = check["findings"]
    assert [f["status"] for f in findings] == ["problem", "problem"], findings
    assert findings[0]["message"].startswith("launch bbbbbbbb of agent "), findings
    assert findings[1]["message"].startswith("a live capability ("), findings
    assert all(bad.reason in f["message"] for f in findings), findings
    assert all(f"(pid {bad.pid})" in f["message"] for f in findings), findings
    assert all("`wardian agent clear-bad-launches`" in f["fix"] for f in findings), findings
    text = w.run("doctor", "--check", "launches", check=False)
    assert text.returncode == 1, text.stdout + text.stderr
    assert "[FAIL] launch bbbbbbbb" in text.stdout, text.stdout
    assert "fix: `wardian agent clear-bad-launches`" in text.stdout, text.stdout
    assert "2 problem(s) found." in text.stdout, text.stdout

    cleared = w.json("agent", "clear-bad-launches")["cleared"]
    assert sorted(c["table"] for c in cleared) == ["capabilities", "launches"], cleared
    assert all(bad.reason in c["reason"] for c in cleared), cleared

    after = w.run("doctor", "--check", "launches", check=False)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "every recorded launch names a possible supervisor" in after.stdout, after.stdout
    assert _rows(wardian_home, "SELECT launch_id FROM launches") == [(good,)]
    revoked = _rows(wardian_home, "SELECT revoked_reason FROM capabilities WHERE"
                                  f" pid = {bad.pid} AND revoked_at IS NOT NULL")
    assert [str(r[0]).startswith("bad launch row cleared: ") for r in revoked] == [True]
    # Nothing is left to clear.
    assert w.json("agent", "clear-bad-launches")["cleared"] == []
