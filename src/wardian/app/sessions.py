"""Session lifecycle from any integration's command line: ``wardian session close`` (report
a close) and ``session recover`` (record the sessions no hook reported).

Spec: CLI.md ``session close`` / ``session recover`` (a missing or unreadable
``--transcript`` is refused up front, exit 2, instead of being accepted and the run skipped
later).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wardian.errors import AuthorityError, UsageError

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.runtime.recovery import RecoveryReport

__all__ = ["RecordedClose", "check_transcript", "recover_sessions", "report_session_close"]


class RecordedClose(NamedTuple):
    """A stored session-close event: its id and the agent (resolved id) it belongs to."""

    event_id: str
    agent_id: str


def report_session_close(state: StateDB, agent: str, boundary: str, *,
                         session_id: str | None = None, transcript: str | None = None,
                         provider: str | None = None,
                         workspace: str | None = None) -> RecordedClose:
    """Record a session-close event of `agent` (name or id); matching enabled invokers fire
    once for it (a drain worker is started). The same session id, agent and boundary again
    is the same event.

    Args:
        state: the open state database `agent` is looked up in.
        boundary: clear, shutdown, provider_source_changed or worktree_switch.
        transcript: the session's transcript file (checked by `check_transcript` first),
            imported into the agent's archive when conversation logging is on.
        provider: default the agent's provider.

    Raises:
        UsageError (exit 2): a bad transcript or boundary. NotFoundError: unknown agent.
        AuthorityError (exit 3): inside a managed process, for another agent than its own
            (its transcript would go into that agent's archive, and from there its memory).
    """
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.hooks import managed_agent_id
    from wardian.runtime.session_events import record_session_close

    if transcript is not None:
        transcript = check_transcript(transcript)
    resolved = AgentRegistry(state).get(agent)
    own = managed_agent_id()
    if own is not None and own != resolved.id:
        raise AuthorityError(
            f"inside a managed process of agent {own[:8]}, `session close` reports only that "
            f"agent's sessions, not {agent!r}'s",
            hint="run it from your own terminal, or pass this agent's own name",
        )
    event_id = record_session_close(
        resolved.id, boundary, session_id=session_id, transcript_path=transcript,
        provider=provider or resolved.provider, workspace=workspace, source="cli",
    )
    return RecordedClose(event_id, resolved.id)


def recover_sessions(state: StateDB, *, agent: str | None = None,
                     workspace: str | None = None) -> RecoveryReport:
    """Record the sessions no hook reported (transcripts with messages past the archive) as
    session-close events with boundary ``recovered``, exactly once per new content, and
    start a drain worker for them.

    Args:
        state: the open state database `agent` is looked up in.
        agent: only this agent (name or id; default every agent).
        workspace: only this workspace (default each agent's and the ones its sessions
            reported).

    Raises:
        NotFoundError: unknown agent.
    """
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.recovery import sweep

    agent_id = AgentRegistry(state).get(agent).id if agent else None
    return sweep(agent_id=agent_id, workspace=workspace, start_drain=True)


def check_transcript(path: str) -> str:
    """Return `path` as an absolute path when it names a readable regular file.

    Raises:
        UsageError (exit 2): missing, not a file, or not readable (the OS reason is named).
    """
    file = Path(path).expanduser()
    if not file.exists():
        raise UsageError(f"--transcript {path}: no such file",
                         hint="pass the session's transcript file (e.g. a .jsonl)")
    if not file.is_file():
        raise UsageError(f"--transcript {path}: not a regular file",
                         hint="pass the session's transcript file, not a directory")
    try:
        with file.open("rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise UsageError(f"--transcript {path}: cannot be read: {exc.strerror or exc}",
                         hint="check the file's permissions") from None
    return str(file.resolve())
