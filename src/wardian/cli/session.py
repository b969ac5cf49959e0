"""`wardian session`: Report session lifecycle events (session close) for any integration."""

from __future__ import annotations

import typer

from wardian.cli._common import emit_json, stdout

app = typer.Typer(
    help="Report session lifecycle events (session close) for any integration.",
    no_args_is_help=True,
)


@app.command("close")
def close(
    agent: str = typer.Option(..., "--agent", help="Agent name or id whose session closed."),
    boundary: str = typer.Option(
        ..., "--boundary",
        help="Why it closed: clear, shutdown, provider_source_changed or worktree_switch.",
    ),
    session_id: str | None = typer.Option(
        None, "--session-id", help="The provider's session id; the same id, agent and boundary "
        "again is the same event (re-delivery).",
    ),
    transcript: str | None = typer.Option(
        None, "--transcript", help="The session's transcript file, imported into the agent's "
        "archive when conversation logging is on; must be a readable file (else exit 2).",
    ),
    provider: str | None = typer.Option(None, "--provider", help="Provider of the session."),
    workspace: str | None = typer.Option(None, "--workspace", help="The session's workspace."),
    as_json: bool = typer.Option(False, "--json", help="Print the event id as JSON."),
) -> None:
    """Record a session-close event; matching enabled invokers fire once for it.

    Inside a managed process only its own agent's sessions may be reported (exit 3).
    """
    from wardian.app.sessions import report_session_close
    from wardian.config import open_state_db

    event_id, agent_id = report_session_close(
        open_state_db(), agent, boundary, session_id=session_id, transcript=transcript,
        provider=provider, workspace=workspace)
    if as_json:
        emit_json({"event_id": event_id, "agent_id": agent_id, "boundary": boundary})
    else:
        stdout(f"Session close recorded · event {event_id}")


@app.command("recover")
def recover(
    agent: str | None = typer.Option(None, "--agent", help="Only this agent (default: all)."),
    workspace: str | None = typer.Option(
        None, "--workspace", help="Only this workspace (default: each agent's workspace and "
        "the ones its sessions reported)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was recorded as JSON."),
) -> None:
    """Record the sessions no hook reported (transcripts with messages past the archive) as
    session-close events with boundary `recovered`; exactly once per new content."""
    from wardian.app.sessions import recover_sessions
    from wardian.cli._common import require_operator
    from wardian.config import open_state_db

    require_operator()
    report = recover_sessions(open_state_db(), agent=agent, workspace=workspace)
    if as_json:
        emit_json(report.to_json())
        return
    for item in report.recorded:
        stdout(f"Recovered {item['host']} session {item['transcript_path']} · "
               f"{item['messages'] - item['already_archived']} new message(s) · event "
               f"{item['event_id'][:8]}")
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items()))
    stdout(f"{len(report.recorded)} session(s) recovered, {report.checked} transcript(s) "
           f"checked" + (f" ({skipped})" if skipped else ""))


@app.command("_drain", hidden=True)
def drain() -> None:
    """Drain pending session events (the detached worker a writer starts)."""
    from wardian.app.drain import drain_worker

    raise typer.Exit(drain_worker())
