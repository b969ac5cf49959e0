"""The hook protocol: what an installed SessionStart / SessionEnd hook does, on every host.

* ``session-start`` (Claude Code, Codex, Gemini, opencode through Wardian's plugin):
  answers with
  ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": TEXT},
  "systemMessage": LINE}`` where TEXT is the agent's startup recall
  (`wardian.runtime.startup_recall.startup_recall`) and LINE the collapsed "Memory loaded · N
  records · `wardian garden memory loaded --agent A --last` to expand" row the user sees
  (omitted when nothing was loaded); records the ``Memory loaded`` event; and starts the
  detached drain worker, whose recovery sweep records earlier sessions no hook reported.
  Nothing is answered when agent memory is disabled or the session was started by
  ``wardian agent launch/exec`` (it already carries the context); Gemini, which parses
  stdout as JSON, then gets ``{}``.
* ``session-end`` (Claude Code, Codex, Gemini, opencode): reads ``session_id``,
  ``transcript_path``, ``cwd``, ``reason`` and records a session-close event — ``clear`` →
  boundary ``clear``, every other reason → ``shutdown``. The event is committed and a drain
  worker started; the hook waits for nothing else. opencode, which keeps sessions in a
  database, names no transcript: the session is exported to a file first
  (`wardian.runtime.opencode_sessions`).

The agent is decided by `resolve_agent`: inside a managed process the launch's own (by
ancestry, `managed_agent_id`), else the one of the hook's ``--agent`` names whose workspace
holds the session's ``cwd`` (docs/hosts.md "Several agents on one machine"). A hook never
gets in the host's way: unusable input is reported on stderr and the close still recorded,
and the installed entry point (`main`) always exits 0. With ``WARDIAN_HOOK_DRY_RUN=1`` it
checks its arguments and agents, answers an empty context and writes nothing
(``wardian doctor``'s round-trip). Installing is `wardian.runtime.hook_install`; the
argument line `wardian.runtime.hook_argv`.
Spec: docs/hosts.md.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from wardian.errors import UsageError, ValidationError, WardianError

if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from wardian._db import StateDB

__all__ = [
    "DRY_RUN_ENV",
    "StartupAnswer",
    "boundary_for_reason",
    "loaded_line",
    "main",
    "managed_agent_id",
    "parse_hook_payload",
    "read_hook_payload",
    "resolve_agent",
    "run_hook",
    "session_end",
    "session_start",
]

DRY_RUN_ENV = "WARDIAN_HOOK_DRY_RUN"
"""Set to 1: the hook validates its arguments and agents, answers an empty context and
writes nothing (``wardian doctor``)."""


def boundary_for_reason(reason: str | None) -> str:
    """Map a SessionEnd ``reason`` to a boundary: ``clear`` → ``clear``, others → ``shutdown``."""
    return "clear" if (reason or "").strip().lower() == "clear" else "shutdown"


MAX_HOOK_INPUT_BYTES = 1024 * 1024
"""Largest hook input read (bytes of UTF-8): the hosts send a few hundred bytes (ids,
paths, a reason); the readers stop one byte past it."""

MAX_HOOK_DEPTH = 64
"""Deepest nesting of arrays and objects read in a hook's input (the input object itself
is level 1); deeper input is refused before it is parsed."""

_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def read_hook_input(stream: BinaryIO) -> str:
    """A hook's stdin as text: at most `MAX_HOOK_INPUT_BYTES` + 1 bytes (so that
    `parse_hook_payload` can tell input over the cap), decoded as UTF-8 with bad bytes
    replaced."""
    return stream.read(MAX_HOOK_INPUT_BYTES + 1).decode("utf-8", "replace")


def _nesting_exceeds(text: str, limit: int) -> bool:
    """Whether arrays and objects in the JSON `text` nest deeper than `limit` (brackets
    inside strings do not count)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth -= 1
    return False


def parse_hook_payload(text: str) -> dict[str, Any]:
    """Parse the JSON object a hook receives on stdin (empty input = empty object).

    Raises:
        ValidationError: larger than `MAX_HOOK_INPUT_BYTES`, nested deeper than
            `MAX_HOOK_DEPTH`, not JSON, or not a JSON object.
    """
    if not text.strip():
        return {}
    if len(text) > MAX_HOOK_INPUT_BYTES // 4 and \
            len(text.encode("utf-8", "surrogatepass")) > MAX_HOOK_INPUT_BYTES:
        raise ValidationError(f"hook input is larger than {MAX_HOOK_INPUT_BYTES} bytes",
                              source="stdin")
    if _nesting_exceeds(text, MAX_HOOK_DEPTH):
        raise ValidationError(
            f"hook input is nested deeper than {MAX_HOOK_DEPTH} levels", source="stdin")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"hook input is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            source="stdin") from exc
    if not isinstance(data, dict):
        raise ValidationError("hook input must be a JSON object", source="stdin")
    return data


def read_hook_payload(text: str) -> tuple[dict[str, Any], str | None]:
    """Like `parse_hook_payload`, but never fails: bad input gives ``{}`` and a warning.

    Returns:
        (payload, warning) — warning is None when the input was a JSON object (or empty).
    """
    try:
        return parse_hook_payload(text), None
    except ValidationError as exc:
        return {}, f"{exc.render()}; recording the close without its details"


def _text(payload: dict[str, Any], key: str, *, number_ok: bool = False) -> str | None:
    """A non-empty string field of the hook input (or an integer, for ids); else None."""
    value = payload.get(key)
    if isinstance(value, str):
        return value or None
    if number_ok and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def managed_agent_id() -> str | None:
    """The agent this process acts for when it runs inside a managed launch, else None.

    Decided by `wardian.memory.principal.managed_agent`: the nearest ancestor that is a
    recorded launch (clearing or editing the environment does not change it), else
    ``WARDIAN_AGENT_ID``. Launches are recorded in ``memory.db``, so without that file only
    the environment is consulted (and the ancestry walk is skipped). Read-only.

    Raises:
        IdentityUnavailable (exit 3): the caller runs in a pid or user namespace other than
            the data directory owner's, or where ``/proc`` is another namespace's: the
            launches above it cannot be seen from there.
    """
    from wardian._db import database_exists
    from wardian.config import memory_db_path, namespace_mismatch
    from wardian.memory.principal import ENV_AGENT_ID, managed_agent

    if not database_exists(memory_db_path(create_dir=False)):
        return os.environ.get(ENV_AGENT_ID, "").strip() or None
    from wardian._process import ancestors

    foreign = namespace_mismatch()
    if foreign:
        from wardian.errors import IdentityUnavailable

        raise IdentityUnavailable(f"cannot tell which agent this process acts for: {foreign}",
                                  hint="run it in the namespace the data directory was set "
                                  "up in")

    return managed_agent(ancestors=[(p.pid, p.started_at) for p in ancestors()])


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def resolve_agent(state: StateDB, agents: Sequence[str],
                  cwd: str | None) -> tuple[Any, str | None]:
    """The session's agent in the open state database `state`, and a warning when none
    could be decided.

    Inside a managed launch: its own agent (hooks installed for ada must not file bob's
    launched session under ada). Else among `agents` (the hook's ``--agent`` names): the
    only one; else the one whose workspace holds `cwd` (the deepest); else the only one
    without a workspace; else none.

    Returns:
        (agent, None) or (None, warning).

    Raises:
        UsageError: no agent named and not in a managed launch. NotFoundError: a named
            agent does not exist.
    """
    return _pick_agent(_own_agent(agents), agents, cwd, state)


def _own_agent(agents: Sequence[str]) -> str | None:
    """`managed_agent_id`, refusing a session with neither a launch nor `agents`.

    Raises:
        UsageError: no agent named and not in a managed launch.
    """
    own = managed_agent_id()
    if not own and not agents:
        raise UsageError(
            "no agent for this session",
            hint="install the hooks for one (`wardian hooks install HOST --agent NAME`) or "
            "start the provider with `wardian agent launch NAME`",
        )
    return own


def _pick_agent(own: str | None, agents: Sequence[str], cwd: str | None,
                state: StateDB) -> tuple[Any, str | None]:
    """`resolve_agent` once the launch's own agent `own` is known (a hook checks that
    there is one before it opens ``state.db``)."""
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    if own:
        return registry.get(own), None
    found = [registry.get(name) for name in agents]
    if len(found) == 1:
        return found[0], None
    where = os.path.realpath(cwd or os.getcwd())
    holding = [a for a in found if a.workspace and _within(where, a.workspace)]
    if holding:
        return max(holding, key=lambda a: len(a.workspace or "")), None
    unbound = [a for a in found if not a.workspace]
    if len(unbound) == 1:
        return unbound[0], None
    names = ", ".join(a.name for a in found)
    return None, (f"no agent for {where}: none of {names} has it as workspace, and "
                  f"{len(unbound)} have no workspace; bind one with `wardian agent set NAME "
                  "--workspace PATH`")


def session_end(
    payload: dict[str, Any],
    *,
    agent: Any,
    state: StateDB,
    provider: str = "claude-code",
    start_drain: bool = True,
) -> str:
    """Record the session-close event a SessionEnd hook reports; returns the event id.

    Args:
        payload: the hook's stdin JSON (``session_id``, ``transcript_path``, ``cwd``,
            ``reason``; Gemini may say ``trigger``); fields that are missing or not strings
            are left out.
        agent: the resolved `wardian.runtime.agents.Agent`.
        state: the open state database the event is stored in.
        provider: the host (picks the transcript parser).
    """
    from wardian.runtime.session_events import record_session_close

    return record_session_close(
        agent.id,
        boundary_for_reason(_text(payload, "reason") or _text(payload, "trigger")),
        session_id=_text(payload, "session_id", number_ok=True),
        transcript_path=_text(payload, "transcript_path"),
        provider=provider,
        workspace=_text(payload, "cwd"),
        source="hook",
        start_drain=start_drain,
        state=state,
    )


class StartupAnswer(NamedTuple):
    """What ``session-start`` answers: the hook output (None = print nothing)."""

    output: dict[str, Any] | None
    loaded_event_id: str | None = None


def loaded_line(count: int, agent_name: str) -> str | None:
    """The collapsed "Memory loaded" row a session shows before it starts (None when
    nothing was loaded). Spec: "Memory loaded" rows in chat."""
    if count <= 0:
        return None
    noun = "record" if count == 1 else "records"
    return (f"Memory loaded · {count} {noun} · `wardian garden memory loaded --agent "
            f"{agent_name} --last` to expand")


def session_start(payload: dict[str, Any], *, agent: Any, state: StateDB) -> StartupAnswer:
    """Build the SessionStart answer with the agent's startup recall; record ``Memory loaded``.

    Reads ``agent_memory.enabled`` and ``memory.startup_budget_chars`` now. The workspace is
    the git root of the hook's ``cwd`` (else the current directory). Without a memory
    capability in the environment (a session the user started, not ``wardian agent
    launch``) the context's instructions say that memory is read-only there; no capability
    is minted.
    """
    from wardian.memory.principal import ENV_MEMORY_CONTEXT

    if os.environ.get(ENV_MEMORY_CONTEXT):
        return StartupAnswer(None)  # a managed launch already passed the context
    from wardian.runtime.startup_recall import record_loaded, startup_recall, startup_settings

    recall = startup_settings(state)
    if not recall.enabled:
        return StartupAnswer(None)
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import default_workspace
    from wardian.memory.principal import ENV_CAPABILITY
    from wardian.memory.store import MemoryStore

    cwd = _text(payload, "cwd") or os.getcwd()
    workspace = default_workspace(str(cwd))
    store = MemoryStore(open_memory_db())
    context = startup_recall(
        store, agent_id=agent.id, agent_name=agent.name, workspace=workspace,
        settings=recall, direct_save=bool(os.environ.get(ENV_CAPABILITY, "").strip()),
    )
    event_id = None
    if context.has_records:
        from wardian._process import identity_of

        parent = identity_of(os.getppid())
        event_id = record_loaded(
            store, agent.id, context=context.text,
            record_ids=tuple(r.id for r in context.loaded),
            omitted_count=context.omitted, pid=parent.pid if parent else None,
            process_started_at=parent.started_at if parent else None,
            workspace=workspace, source="hook",
        )
    output: dict[str, Any] = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context.text,
        }
    }
    line = loaded_line(len(context.loaded), agent.name)
    if line:
        output["systemMessage"] = line
    return StartupAnswer(output, event_id)


def _start_recovery(agent: Any, payload: dict[str, Any], state: StateDB) -> None:
    """Queue a recovery request for the agent's workspace and start the detached drain
    worker, whose sweep records the agent's earlier sessions no hook reported
    (`wardian.runtime.recovery`). Never waits for it; nothing happens when conversation
    logging is off for the agent (recovery compares transcripts with the archive)."""
    from wardian.config import SettingsStore

    if not SettingsStore(state).get("conversation_logging.enabled", agent_id=agent.id):
        return
    from wardian.runtime.recovery import request_recovery
    from wardian.runtime.session_events import start_drain_worker

    transcript = _text(payload, "transcript_path")
    request_recovery(agent.id, _text(payload, "cwd") or os.getcwd(), state=state,
                     exclude_path=os.path.abspath(transcript) if transcript else None)
    start_drain_worker()


def _opencode_transcript(payload: dict[str, Any], *, export: bool,
                         warn: Callable[[str], object] | None) -> dict[str, Any]:
    """`payload` with the ``transcript_path`` of its opencode session: the session's export
    (`wardian.runtime.opencode_sessions`), written now when `export` (a session end). A
    session that cannot be exported is reported through `warn` and the payload kept (the
    close is recorded without a transcript; recovery tries again)."""
    session_id = _text(payload, "session_id")
    if not session_id or _text(payload, "transcript_path"):
        return payload
    from wardian.runtime import opencode_sessions

    try:
        path = (opencode_sessions.export(session_id) if export
                else opencode_sessions.export_path(session_id))
    except (WardianError, OSError) as exc:
        if warn is not None:
            warn(f"opencode session {session_id[:80]} not exported: "
                 f"{exc.message if isinstance(exc, WardianError) else exc}")
        return payload
    return {**payload, "transcript_path": str(path)}


def run_hook(host: str, event: str, stdin_text: str, *, agents: Sequence[str] = (),
             warn: Callable[[str], object] | None = None) -> str | None:
    """Handle one hook call; returns what to print on stdout (None = nothing).

    ``session-end`` records the close even when the input is not a JSON object (`warn`
    receives the reason). Shared by `main` and ``wardian hooks HOST EVENT``.

    Args:
        host: ``claude-code``, ``codex``, ``gemini`` or ``opencode``. event:
            ``session-start`` or ``session-end``. stdin_text: the hook's input.
            agents: the ``--agent`` names.
        warn: ``callable(str)`` for warnings (default: ignore).

    Raises:
        UsageError: no agent; NotFoundError: unknown agent; StoreError: the database.
    """
    payload, warning = read_hook_payload(stdin_text)
    if warning and warn is not None:
        warn(warning)
    empty = "{}" if host == "gemini" else None  # Gemini parses a hook's stdout as JSON
    from wardian.config import open_state_db
    from wardian.runtime.automation_sessions import ENV_AUTOMATION_STEP

    automation = bool(os.environ.get(ENV_AUTOMATION_STEP))
    own = None if automation else _own_agent(agents)  # refused before state.db is opened
    state = open_state_db()  # the hook's one state.db, for every step below
    if automation:
        # Inside a Wardian automation step's provider (a curator's call): its session is
        # the step's own, never the agent's. Remember it so recovery skips it; no recall,
        # no session close (runtime.automation_sessions).
        from wardian.runtime.automation_sessions import record_transcript

        record_transcript(os.environ[ENV_AUTOMATION_STEP], host=host,
                          session_id=_text(payload, "session_id", number_ok=True),
                          transcript_path=_text(payload, "transcript_path"), source="hook",
                          state=state)
        return empty
    agent, why_not = _pick_agent(own, agents, _text(payload, "cwd"), state)
    if agent is None:
        if warn is not None and why_not:
            warn(why_not)
        return empty
    if os.environ.get(DRY_RUN_ENV, "") not in {"", "0"}:
        if event == "session-end":
            return empty
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                  "additionalContext": ""}})
    if host == "opencode":
        payload = _opencode_transcript(payload, export=event == "session-end", warn=warn)
    if event == "session-end":
        session_end(payload, agent=agent, state=state, provider=host)
        return empty
    answer = session_start(payload, agent=agent, state=state)
    _start_recovery(agent, payload, state)
    if answer.output is None:
        return empty
    return json.dumps(answer.output, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    """The installed hook: ``python -P -c "…main()" HOST EVENT [--agent NAME]… [--home PATH]``.

    Does what ``wardian hooks HOST EVENT`` does without loading the whole CLI; ``--home
    PATH`` sets ``WARDIAN_HOME`` for it (and the drain worker it starts). It never gets in
    the host's way: every failure (an unknown agent, a locked or broken database, bad
    arguments) is printed on stderr as ``wardian hook: Error: …`` and the exit code is
    still 0; with ``WARDIAN_DEBUG=1`` the exception propagates instead. Input and output
    are UTF-8 whatever the locale.

    Returns:
        0.
    """
    from wardian.runtime.hook_argv import parse_hook_argv

    label = "wardian hook"
    try:
        args = parse_hook_argv(sys.argv[1:] if argv is None else argv)
        if args.home:
            from wardian.config import ENV_HOME

            os.environ[ENV_HOME] = args.home  # the drain worker started detached inherits it
        label = f"wardian hook {args.host} {args.event}"
        text = read_hook_input(sys.stdin.buffer) if sys.stdin else ""
        out = run_hook(args.host, args.event, text, agents=args.agents,
                       warn=lambda msg: sys.stderr.write(f"{label}: warning: {msg}\n"))
        if out is not None:
            sys.stdout.buffer.write(out.encode("utf-8") + b"\n")
            sys.stdout.flush()
    except Exception as exc:
        if os.environ.get("WARDIAN_DEBUG", "") not in {"", "0"}:
            raise
        message = exc.render() if isinstance(exc, WardianError) else (
            f"{type(exc).__name__}: {exc} (set WARDIAN_DEBUG=1 to see the traceback)")
        sys.stderr.write(f"{label}: Error: {message}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
