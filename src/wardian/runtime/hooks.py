"""Agent hooks: Claude Code SessionStart/SessionEnd, Gemini CLI SessionEnd, and installing them.

* ``session-start`` (Claude Code): answers with
  ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": TEXT}}``
  where TEXT is the agent's startup recall (`wardian.memory.recall.build_startup_context`),
  and records the ``Memory loaded`` event. Nothing is printed when agent memory is disabled,
  or when the session was started by ``wardian agent launch/exec`` (it already carries the
  context, and a ``/clear`` keeps it).
* ``session-end`` (Claude Code, Gemini): reads the hook's JSON (``session_id``,
  ``transcript_path``, ``cwd``, ``reason``) and records a session-close event — ``clear`` →
  boundary ``clear``, every other reason → ``shutdown``. The event is committed and a drain
  worker started; the hook does no other work, so it returns well within its budget.
* ``install_claude_code``: adds both hooks to a Claude Code ``settings.json`` without
  disturbing other keys, idempotently; ``uninstall`` removes exactly what install added.

The agent is the one named by ``--agent``, else ``WARDIAN_AGENT_ID`` (set in every managed
process). Spec: issue 7 points 2 and 5; providers.md "Claude Code" and "Gemini CLI" hooks.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wardian.errors import UsageError, ValidationError

__all__ = [
    "HOOK_TIMEOUT_S",
    "InstallResult",
    "StartupAnswer",
    "boundary_for_reason",
    "claude_settings_path",
    "hook_command",
    "install_claude_code",
    "main",
    "parse_hook_payload",
    "session_end",
    "session_start",
]

HOOK_TIMEOUT_S = 10
"""The per-hook ``timeout`` written into Claude Code settings, in seconds."""

_EVENTS = {"SessionStart": "session-start", "SessionEnd": "session-end"}
_HOOK_MAIN = "import sys; from wardian.runtime.hooks import main; sys.exit(main())"


def boundary_for_reason(reason: str | None) -> str:
    """Map a SessionEnd ``reason`` to a boundary: ``clear`` → ``clear``, others → ``shutdown``."""
    return "clear" if (reason or "").strip().lower() == "clear" else "shutdown"


def parse_hook_payload(text: str) -> dict[str, Any]:
    """Parse the JSON object a hook receives on stdin (empty input = empty object).

    Raises:
        ValidationError: not a JSON object.
    """
    if not text.strip():
        return {}
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"hook input is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            source="stdin",
        ) from exc
    if not isinstance(payload, dict):
        raise ValidationError("hook input must be a JSON object", source="stdin")
    return payload


def _resolve_agent(agent: str | None) -> Any:
    from wardian.memory.principal import ENV_AGENT_ID
    from wardian.runtime.agents import AgentRegistry

    name_or_id = agent or os.environ.get(ENV_AGENT_ID)
    if not name_or_id:
        raise UsageError(
            "no agent for this session",
            hint="pass --agent NAME in the hook command (`wardian hooks install claude-code "
            "--agent NAME`) or start the provider with `wardian agent launch NAME`",
        )
    registry = AgentRegistry()
    try:
        return registry.get(name_or_id)
    finally:
        registry.close()


def session_end(
    payload: dict[str, Any],
    *,
    agent: str | None = None,
    provider: str = "claude-code",
    start_drain: bool = True,
) -> str:
    """Record the session-close event a SessionEnd hook reports; returns the event id.

    Args:
        payload: the hook's stdin JSON (``session_id``, ``transcript_path``, ``cwd``,
            ``reason``; Gemini may say ``trigger`` instead of ``reason``).
        agent: ``--agent`` name or id; default ``WARDIAN_AGENT_ID``.
        provider: ``claude-code`` or ``gemini`` (picks the transcript parser).

    Raises:
        UsageError: no agent is given or set; NotFoundError: unknown agent.
    """
    from wardian.runtime.session_events import record_session_close

    resolved = _resolve_agent(agent)
    reason = payload.get("reason") or payload.get("trigger")
    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    cwd = payload.get("cwd")
    return record_session_close(
        resolved.id,
        boundary_for_reason(str(reason) if reason is not None else None),
        session_id=str(session_id) if session_id else None,
        transcript_path=str(transcript) if transcript else None,
        provider=provider,
        workspace=str(cwd) if cwd else None,
        source="hook",
        start_drain=start_drain,
    )


@dataclass(frozen=True)
class StartupAnswer:
    """What ``session-start`` answers: the hook output (None = print nothing)."""

    output: dict[str, Any] | None
    loaded_event_id: str | None = None


def session_start(payload: dict[str, Any], *, agent: str | None = None) -> StartupAnswer:
    """Build the SessionStart answer with the agent's startup recall; record ``Memory loaded``.

    Reads ``agent_memory.enabled`` and ``memory.startup_budget_chars`` now. The workspace is
    the git root of the hook's ``cwd`` (else the current directory). The ``Memory loaded``
    event names the provider process (this hook's parent) when it has records.

    Raises:
        UsageError: no agent; NotFoundError: unknown agent.
    """
    from wardian.memory.principal import ENV_MEMORY_CONTEXT

    if os.environ.get(ENV_MEMORY_CONTEXT):
        return StartupAnswer(None)  # a managed launch already passed the context
    resolved = _resolve_agent(agent)
    from wardian.config import SettingsStore

    settings = SettingsStore()
    try:
        if not settings.get("agent_memory.enabled"):
            return StartupAnswer(None)
        budget = int(settings.get("memory.startup_budget_chars"))
    finally:
        settings.close()
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.models import default_workspace
    from wardian.memory.recall import build_startup_context
    from wardian.memory.store import MemoryStore
    from wardian.runtime.process import identity_of

    cwd = payload.get("cwd") or os.getcwd()
    workspace = default_workspace(str(cwd))
    store = MemoryStore()
    try:
        records = store.startup_set(resolved.id, workspace)
        context = build_startup_context(
            records, agent_name=resolved.name, agent_id=resolved.id, workspace=workspace,
            budget_chars=budget,
        )
        event_id = None
        if context.has_records:
            parent = identity_of(os.getppid())
            event_id = LoadedEvents(store.conn).record(
                resolved.id, context=context.text,
                record_ids=tuple(r.id for r in context.loaded),
                omitted_count=context.omitted, pid=parent.pid if parent else None,
                process_started_at=parent.started_at if parent else None,
                workspace=workspace, source="hook",
            )
    finally:
        store.close()
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context.text,
        }
    }
    return StartupAnswer(output, event_id)


# --- install ----------------------------------------------------------------------------


def claude_settings_path() -> Path:
    """The user's Claude Code settings file (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "settings.json"


def _hook_argv() -> list[str]:
    """How an installed hook starts: this interpreter running this module directly.

    ``wardian hooks claude-code …`` works too, but the full CLI imports Typer and Rich
    (~250 ms); this entry imports only what a hook needs, so SessionEnd returns well
    within its budget.
    """
    # ``-c`` imports this module (its compiled bytecode is cached) where ``-m`` would
    # compile it afresh as ``__main__`` on every call.
    return [sys.executable, "-c", _HOOK_MAIN]


def _join(argv: list[str]) -> str:
    return subprocess.list2cmdline(argv) if os.name == "nt" else shlex.join(argv)


def hook_command(event: str, agent: str | None = None) -> str:
    """The shell command for one Claude Code hook (``SessionStart`` or ``SessionEnd``)."""
    argv = [*_hook_argv(), "claude-code", _EVENTS[event]]
    if agent:
        argv += ["--agent", agent]
    return _join(argv)


def _is_ours(hook: Any, event: str) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = str(hook.get("command", ""))
    return "wardian" in command and (
        ("wardian.runtime.hooks" in command and f"claude-code {_EVENTS[event]}" in command)
        or f" hooks claude-code {_EVENTS[event]}" in command
    )


@dataclass
class InstallResult:
    """What `install_claude_code` did: the file, whether it changed, and which hooks."""

    settings_path: str
    changed: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "settings_path": self.settings_path,
            "changed": self.changed,
            "added": self.added,
            "removed": self.removed,
        }


def _load_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            source=str(path), hint="fix the file by hand; Wardian will not overwrite it",
        ) from exc
    if not isinstance(data, dict):
        raise ValidationError("the settings file must hold a JSON object", source=str(path))
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ValidationError("expected an object", path="hooks", source=str(path))
    return data


def _remove_ours(data: dict[str, Any], event: str) -> int:
    """Remove our hooks for `event`; drop containers that only held them. Returns count."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(event), list):
        return 0
    removed = 0
    groups: list[Any] = []
    for group in hooks[event]:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            groups.append(group)
            continue
        kept = [h for h in inner if not _is_ours(h, event)]
        removed += len(inner) - len(kept)
        if kept or len(kept) == len(inner):
            groups.append({**group, "hooks": kept} if len(kept) != len(inner) else group)
    if groups:
        hooks[event] = groups
    else:
        del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def install_claude_code(
    settings_path: Path | None = None, *, agent: str | None = None, uninstall: bool = False
) -> InstallResult:
    """Add (or remove) Wardian's SessionStart and SessionEnd hooks in a Claude Code settings file.

    Install adds one matcher group per event, ``{"matcher": "", "hooks": [{"type":
    "command", "command": "wardian hooks claude-code session-… [--agent NAME]", "timeout":
    10}]}``; run again it changes nothing (a Wardian hook with other arguments is replaced).
    Uninstall removes those hooks and only the containers left empty by that. Other keys,
    other hooks and their order are kept. The file is rewritten atomically, and only when
    something changed.

    Args:
        settings_path: default `claude_settings_path()`.
        agent: the agent the hooks report for (else the session's ``WARDIAN_AGENT_ID``).
        uninstall: remove instead of add.

    Raises:
        ValidationError: the file is not a JSON object (it is left untouched).
    """
    path = Path(settings_path).expanduser() if settings_path else claude_settings_path()
    data = _load_settings(path)
    before = json.dumps(data, sort_keys=False)
    result = InstallResult(settings_path=str(path), changed=False)
    for event in _EVENTS:
        command = hook_command(event, agent)
        if uninstall:
            if _remove_ours(data, event):
                result.removed.append(event)
            continue
        existing = data.get("hooks", {}).get(event, []) if isinstance(data.get("hooks"), dict) \
            else []
        ours = [
            h for g in existing if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if _is_ours(h, event)
        ]
        if len(ours) == 1 and ours[0].get("command") == command:
            continue
        _remove_ours(data, event)
        hooks = data.setdefault("hooks", {})
        hooks.setdefault(event, []).append(
            {"matcher": "", "hooks": [
                {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
            ]}
        )
        result.added.append(event)
    if json.dumps(data, sort_keys=False) != before:
        result.changed = True
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.wardian-tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return result


# --- fast entry point for installed hooks ----------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m wardian.runtime.hooks (claude-code|gemini) (session-start|session-end)
    [--agent NAME]``: the same as ``wardian hooks …`` without loading the whole CLI.

    Returns:
        The exit code (0 ok; a WardianError's exit code after printing ``Error: …``).
    """
    import argparse

    from wardian.errors import WardianError

    parser = argparse.ArgumentParser(prog="wardian-hook")
    parser.add_argument("provider", choices=["claude-code", "gemini"])
    parser.add_argument("event", choices=["session-start", "session-end"])
    parser.add_argument("--agent", default=None)
    args = parser.parse_args(argv)
    try:
        payload = parse_hook_payload(sys.stdin.read())
        if args.event == "session-end":
            session_end(payload, agent=args.agent, provider=args.provider)
            if args.provider == "gemini":
                sys.stdout.write("{}\n")
            return 0
        if args.provider != "claude-code":
            raise UsageError("session-start is provided for claude-code only")
        answer = session_start(payload, agent=args.agent)
        if answer.output is not None:
            sys.stdout.write(json.dumps(answer.output, ensure_ascii=False) + "\n")
        return 0
    except WardianError as exc:
        if os.environ.get("WARDIAN_DEBUG", "") not in {"", "0"}:
            raise
        sys.stderr.write(f"Error: {exc.render()}\n")
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
