"""Test-only wrapper around the real CLI: pause inside the apply transaction so the crash
test can SIGKILL the process there (issue 3 acceptance, "Crash safety").

Usage: ``python crash_child.py STEP NOTIFY_FD WAIT_FD TTY_FD -- wardian-args…``

``TTY_FD`` is the slave side of a pseudo-terminal the test holds: the child (started in
a new session) takes it as its controlling terminal, where the apply asks its question
and the test answers ``yes``.

Nothing in production code knows about this. Before the CLI is imported, ``sqlite3.connect``
is wrapped so every connection to a ``memory.db`` gets a trace callback (SQLite calls it as
each statement starts). The callback counts the ``INSERT INTO revisions`` statements — apply
writes one per changed record — and pauses:

* ``STEP >= 0``: as the revision of change ``STEP`` starts, i.e. after ``STEP`` records were
  written in full and with change ``STEP``'s row already updated (or inserted);
* ``STEP == -1``: as ``COMMIT`` starts, after the receipt row was inserted.

Pausing writes one byte to ``NOTIFY_FD`` (``!`` inside an open transaction, ``?`` if not,
so the test can tell) and blocks reading ``WAIT_FD``; EOF there lets the apply go on.
"""

from __future__ import annotations

import os
import runpy
import sqlite3
import sys
from typing import Any


def main() -> None:
    step, notify, wait, tty = (int(arg) for arg in sys.argv[1:5])
    assert sys.argv[5] == "--", sys.argv
    cli_args = sys.argv[6:]
    import fcntl
    import termios

    fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
    real_connect = sqlite3.connect
    counts = {"revisions": 0, "receipt": 0}

    def traced(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real_connect(database, *args, **kwargs)
        if os.fspath(database).endswith("memory.db"):
            conn.set_trace_callback(lambda sql: on_statement(conn, sql))
        return conn

    def pause(conn: sqlite3.Connection) -> None:
        os.write(notify, b"!" if conn.in_transaction else b"?")
        os.read(wait, 1)

    def on_statement(conn: sqlite3.Connection, sql: str) -> None:
        head = " ".join(sql.split()[:3]).upper()
        if head == "INSERT INTO REVISIONS":
            if counts["revisions"] == step:
                pause(conn)
            counts["revisions"] += 1
        elif head == "INSERT INTO MAINTENANCE_RECEIPTS":
            counts["receipt"] += 1
        elif head.startswith("COMMIT") and step == -1 and counts["receipt"]:
            pause(conn)

    sqlite3.connect = traced  # type: ignore[assignment]
    sys.argv = ["wardian", *cli_args]
    runpy.run_module("wardian", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
