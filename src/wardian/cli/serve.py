"""`wardian serve`: the long-running daemon (drain loop and schedules)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from wardian.cli._common import JsonOption, emit_json, stdout

if TYPE_CHECKING:
    from wardian.app.serve import DaemonStatus


def register(root: typer.Typer) -> None:
    """Add the `serve` command to the root app."""

    @root.command("serve")
    def serve(
        status: bool = typer.Option(
            False, "--status", help="Only report whether a daemon holds the lock (pid, since; "
            "on PostgreSQL: which serve is active across the machines sharing the database, "
            "which wait as standbys, and which is this data directory's); exit 0 when one "
            "runs, 1 when none."),
        poll: float = typer.Option(
            0.1, "--poll", help="Longest wait between loop passes, seconds (0.01 to 2; CLI "
            "changes to invokers take effect within one pass)."),
        shutdown_timeout: float = typer.Option(
            30.0, "--shutdown-timeout", help="On SIGTERM/SIGINT, seconds to let running runs "
            "finish (a second signal skips the wait); runs still running then are cancelled at "
            "their next safe point "
            "(recorded cancelled), and any left after 10 s more are marked interrupted by the "
            "next start."),
        json_: bool = JsonOption,
    ) -> None:
        """Run the daemon: fire schedule invokers and drain session-close events.

        Only one daemon runs per data directory (on PostgreSQL, per database, across machines); a second `serve` waits as a standby, naming the holder (pid, since), and takes over when that one stops or dies; SIGTERM stops a standby (exit 0). Runs left running by a dead process are marked interrupted at start-up. SIGTERM or SIGINT stops it cleanly (exit 0). It logs one line per slot decided (ran, skipped with its reason, coalesced into which slot) and one per finished run, to stdout.
        """  # noqa: E501 (one paragraph: Rich re-wraps it, hard breaks would show)
        from wardian.app.serve import daemon_status
        from wardian.app.serve import serve as run_daemon
        from wardian.cli._common import require_operator

        require_operator()

        if status:
            state = daemon_status()
            if json_:
                emit_json(state.to_json())
            elif state.database is not None:
                for line in _database_status_lines(state):
                    stdout(line)
            elif state.running:
                stdout(f"wardian serve is running: pid {state.pid}, since {state.since}")
            else:
                stdout("wardian serve is not running")
            raise typer.Exit(0 if state.running else 1)
        served = run_daemon(poll_s=poll, shutdown_timeout_s=shutdown_timeout)
        if served.runs_left:
            # A run that ignored its cancel still holds a worker thread, and Python waits for
            # every executor thread at exit: the daemon would never end. The next start marks
            # such runs interrupted (the lock is already released), so leave now.
            import os
            import sys

            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(served.code)
        raise typer.Exit(served.code)


def _database_status_lines(state: DaemonStatus) -> list[str]:
    """``serve --status`` on PostgreSQL: the active serve across machines, then each
    standby, marking the one of this data directory."""
    mine = " (this data directory's)"
    if state.running:
        who = (f"pid {state.pid} on {state.host}" if state.pid is not None
               else "a serve that does not name itself (an older Wardian?)")
        since = f", active since {state.since}" if state.since else ""
        lines = [f"wardian serve is running: {who}{since}"
                 f"{mine if state.here == 'active' else ''}; it holds the scheduler lock of"
                 f" {state.database}"]
    else:
        lines = [f"wardian serve is not running: no serve holds the scheduler lock of"
                 f" {state.database}"]
    for standby in state.standbys:
        who = (f"pid {standby.pid} on {standby.host}, waiting since {standby.since}"
               if standby.pid is not None else "a session named like a serve's")
        lines.append(f"standby: {who}{mine if standby.here else ''}; it takes over when"
                     " the active one stops")
    return lines
