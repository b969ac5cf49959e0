"""Waiting in tests: poll a real signal until it holds; never sleep a fixed time.

The team's rule: no sleeps as synchronisation, no wall-clock budgets. A test that waits for
something another process or thread does (a run row, a slot, a log line, a pid file, a queue
going empty) polls for that record with `wait_until`. What it waits for normally comes at
once; `CAP_S` is only a safety cap that turns a hang into a failure naming what did not
happen (the 300 s timeout marker would name nothing), and a watched process that exits
first fails the wait at once, with its exit code. "Nothing happened" is never shown by
waiting N seconds: wait for a later event that could only come after the thing that must
not happen would have (a later slot, a later notification, a later pass), then look.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import pytest

__all__ = ["CAP_S", "POLL_S", "wait_until"]

T = TypeVar("T")

CAP_S = 120.0
"""The safety cap on one wait, seconds: far above any normal wait (milliseconds; a few
seconds on a loaded 2-core machine), below the project's 300 s timeout marker. Not a budget:
no test's outcome depends on how close to it a wait comes."""

POLL_S = 0.02
"""How often `wait_until` looks again, seconds (an interval, not a deadline)."""


def wait_until(condition: Callable[[], T], *, what: str,
               watch: Sequence[subprocess.Popen[bytes] | subprocess.Popen[str]
                              | threading.Thread] = (),
               detail: Callable[[], object] | None = None,
               cap_s: float = CAP_S, poll_s: float = POLL_S) -> T:
    """Call `condition` until it returns something truthy, and return that value.

    Args:
        condition: a look at recorded state (no side effects beyond reading).
        what: the event waited for, as the failure names it ("the run finished").
        watch: processes (or threads) that must stay alive while waiting: one that ended
            first fails the wait at once, naming its pid and exit code.
        detail: called only on failure; its text (a log tail, the rows seen) is appended.
        cap_s: the safety cap, seconds (`CAP_S`); poll_s: the poll interval, seconds.

    Raises:
        pytest.fail.Exception: the cap passed, or a watched process or thread ended.
    """
    end = time.monotonic() + cap_s

    def fail(why: str) -> None:
        extra = f"\n{detail()}" if detail is not None else ""
        pytest.fail(f"{what}: did not happen ({why}){extra}")

    while True:
        value = condition()
        if value:
            return value
        for item in watch:
            if isinstance(item, threading.Thread):
                why = None if item.is_alive() else f"thread {item.name} ended first"
            else:
                code = item.poll()
                why = None if code is None else f"process pid {item.pid} exited {code} first"
            if why is not None:
                value = condition()  # it may have done it just before it ended
                if value:
                    return value
                fail(why)
        if time.monotonic() > end:
            fail(f"still not after the {cap_s:g} s safety cap")
        time.sleep(poll_s)
