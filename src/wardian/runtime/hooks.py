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

Inside a managed process (``wardian agent launch/exec``) the agent is that launch's (by
ancestry, see `managed_agent_id`), else the one named by ``--agent``. A hook never gets in
the provider's way: input that is not a JSON object is reported on stderr and the close is
still recorded (as ``shutdown``, without transcript), and the installed entry point
(`main`) always exits 0, reporting any failure on stderr.
Spec: issue 7 points 2 and 5; providers.md "Claude Code" and "Gemini CLI" hooks.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wardian.errors import UsageError, ValidationError, WardianError

__all__ = [
    "HOOK_TIMEOUT_S",
    "InstallResult",
    "StartupAnswer",
    "boundary_for_reason",
    "claude_settings_path",
    "hook_command",
    "install_claude_code",
    "main",
    "managed_agent_id",
    "parse_hook_payload",
    "read_hook_payload",
    "run_hook",
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


def _json_object(text: str, source: str, what: str, hint: str | None = None) -> dict[str, Any]:
    """Parse `text` as one JSON object (blank text = ``{}``); `what` names it in errors.

    Raises:
        ValidationError: not JSON, or JSON that is not an object.
    """
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            source=source, hint=hint,
        ) from exc
    if not isinstance(data, dict):
        raise ValidationError(f"{what} must be a JSON object", source=source, hint=hint)
    return data


def parse_hook_payload(text: str) -> dict[str, Any]:
    """Parse the JSON object a hook receives on stdin (empty input = empty object).

    Raises:
        ValidationError: not a JSON object.
    """
    return _json_object(text, "stdin", "hook input")


def read_hook_payload(text: str) -> tuple[dict[str, Any], str | None]:
    """Like `parse_hook_payload`, but never fails: bad input gives ``{}`` and a warning.

    A session that ended is recorded even when its hook input is unusable (the warning
    says why the transcript and session id are missing).

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
    """
    from wardian.config import memory_db_path
    from wardian.memory.principal import ENV_AGENT_ID, managed_agent

    if not memory_db_path(create_dir=False).exists():
        return os.environ.get(ENV_AGENT_ID, "").strip() or None
    from wardian.runtime.process import ancestors

    return managed_agent(ancestors=[(p.pid, p.started_at) for p in ancestors()])


def _resolve_agent(agent: str | None) -> Any:
    """The session's agent: inside a managed launch its own agent (`managed_agent_id`),
    else `agent` (``--agent``). Hooks installed globally with ``--agent A`` must not file
    agent B's launched session (and its transcript) under A, nor show B A's memory."""
    from wardian.runtime.agents import AgentRegistry

    name_or_id = managed_agent_id() or agent
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
            ``reason``; Gemini may say ``trigger`` instead of ``reason``); fields that are
            missing or not strings are left out.
        agent: ``--agent`` name or id, used outside managed processes (inside one, the
            launch's own agent).
        provider: ``claude-code`` or ``gemini`` (picks the transcript parser).

    Raises:
        UsageError: no agent is given or set; NotFoundError: unknown agent.
    """
    from wardian.runtime.session_events import record_session_close

    resolved = _resolve_agent(agent)
    return record_session_close(
        resolved.id,
        boundary_for_reason(_text(payload, "reason") or _text(payload, "trigger")),
        session_id=_text(payload, "session_id", number_ok=True),
        transcript_path=_text(payload, "transcript_path"),
        provider=provider,
        workspace=_text(payload, "cwd"),
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
    event names the provider process (this hook's parent) when it has records. Without a
    memory capability in the environment (a session the user started, not ``wardian agent
    launch``) the context's instructions say that memory is read-only there
    (`wardian.memory.recall._RECALL_ONLY_INSTRUCTIONS`); no capability is minted.

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
        review_days = int(settings.get("memory.current_review_days"))
    finally:
        settings.close()
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.models import default_workspace
    from wardian.memory.principal import ENV_CAPABILITY
    from wardian.memory.recall import load_startup_context
    from wardian.memory.store import MemoryStore

    cwd = _text(payload, "cwd") or os.getcwd()
    workspace = default_workspace(str(cwd))
    store = MemoryStore()
    try:
        # Capabilities are launch-scoped and never minted here: a session the user started
        # itself can only read its recall, and its instructions must say so.
        context = load_startup_context(
            store, agent_id=resolved.id, agent_name=resolved.name, workspace=workspace,
            budget_chars=budget, current_review_days=review_days,
            direct_save=bool(os.environ.get(ENV_CAPABILITY, "").strip()),
        )
        event_id = None
        if context.has_records:
            from wardian.runtime.process import identity_of  # psutil: ~20 ms, only if needed

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
    """How an installed hook starts: this interpreter, by absolute path, importing `main`.

    ``wardian hooks claude-code …`` works too, but the full CLI imports Typer and Rich
    (~250 ms); this entry imports only what a hook needs, so SessionEnd returns well
    within its budget. The interpreter is the one of the installing environment (a venv's
    ``bin/python``, not resolved through its symlink, so the venv's packages load), so the
    hook works from a shell where that environment is not active. ``-P`` keeps the
    session's working directory off ``sys.path``: a project's own ``json.py`` or
    ``wardian/`` must not shadow the modules the hook imports.

    Raises:
        UsageError: Python cannot tell which interpreter runs it.
    """
    if not sys.executable:
        raise UsageError(
            "cannot tell which Python interpreter runs Wardian (sys.executable is empty)",
            hint="run `wardian hooks install` from the wardian command of a normal install",
        )
    # ``-c`` imports this module (its compiled bytecode is cached) where ``-m`` would
    # compile it afresh as ``__main__`` on every call.
    return [os.path.abspath(sys.executable), "-P", "-c", _HOOK_MAIN]


def _join(argv: list[str]) -> str:
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import subprocess

        return subprocess.list2cmdline(argv)
    import shlex

    return shlex.join(argv)


def hook_command(event: str, agent: str | None = None, home: str | None = None) -> str:
    """The shell command for one Claude Code hook (``SessionStart`` or ``SessionEnd``).

    Args:
        event: ``SessionStart`` or ``SessionEnd``.
        agent: embedded as ``--agent NAME`` when given.
        home: a data dir embedded as ``--home PATH`` (Claude Code runs hooks with its own
            environment, which need not carry ``WARDIAN_HOME``). Quoted for the shell that
            runs the command, so spaces and quotes in the path are safe.
    """
    argv = [*_hook_argv(), "claude-code", _EVENTS[event]]
    if agent:
        argv += ["--agent", agent]
    if home:
        argv += ["--home", home]
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
    """What `install_claude_code` did: the file, whether it changed, which hooks, and the
    data dir embedded in the hook commands (`home`, None = the hook's environment decides)."""

    settings_path: str
    changed: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    home: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "settings_path": self.settings_path,
            "changed": self.changed,
            "added": self.added,
            "removed": self.removed,
            "home": self.home,
        }


def _load_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    data = _json_object(text, str(path), "the settings file",
                        hint="fix the file by hand; Wardian will not overwrite it")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ValidationError("expected an object", path="hooks", source=str(path))
    for event in _EVENTS:
        if isinstance(hooks, dict) and not isinstance(hooks.get(event, []), list):
            raise ValidationError(
                "expected a list of matcher groups", path=f"hooks.{event}", source=str(path),
                hint="fix the file by hand; Wardian will not overwrite it",
            )
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
    "command", "command": "PYTHON -P -c … claude-code session-… [--agent NAME] [--home
    PATH]", "timeout": 10}]}``; run again it changes nothing (a Wardian hook with other
    arguments is replaced). When ``WARDIAN_HOME`` is set now, its absolute path is embedded
    as ``--home PATH``: Claude Code runs the hook without the installer's environment, and
    without it the hook would read (and create) the default data dir.
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
    from wardian.config import ENV_HOME

    path = Path(settings_path).expanduser() if settings_path else claude_settings_path()
    data = _load_settings(path)
    before = json.dumps(data, sort_keys=False)
    env_home = os.environ.get(ENV_HOME, "").strip()
    home = os.path.abspath(os.path.expanduser(env_home)) if env_home and not uninstall else None
    result = InstallResult(settings_path=str(path), changed=False, home=home)
    for event in _EVENTS:
        command = hook_command(event, agent, home)
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


_USAGE = "(claude-code|gemini) (session-start|session-end) [--agent NAME] [--home PATH]"


def _take_option(args: list[str], name: str) -> str | None:
    """Remove ``NAME VALUE`` or ``NAME=VALUE`` from `args`; return VALUE (None if absent)."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            value = args[i + 1]
            del args[i:i + 2]
            return value
        if arg.startswith(name + "="):
            del args[i]
            return arg.split("=", 1)[1]
    return None


def _parse_argv(argv: list[str]) -> tuple[str, str, str | None, str | None]:
    """``PROVIDER EVENT [--agent NAME] [--home PATH]`` -> (provider, event, agent, home).
    No argparse: it costs a hook ~4 ms of start-up (with the ``shutil`` its help
    formatter loads).

    Raises:
        UsageError: anything else.
    """
    args = list(argv)
    agent = _take_option(args, "--agent")
    home = _take_option(args, "--home")
    if (len(args) != 2 or args[0] not in ("claude-code", "gemini")
            or args[1] not in ("session-start", "session-end")):
        raise UsageError(f"bad hook arguments {' '.join(argv)!r}; expected {_USAGE}",
                         hint="reinstall the hooks with `wardian hooks install claude-code`")
    if args[0] == "gemini" and args[1] == "session-start":
        raise UsageError("session-start is provided for claude-code only")
    return args[0], args[1], agent, home


def run_hook(provider: str, event: str, stdin_text: str, *, agent: str | None = None,
             warn: Callable[[str], object] | None = None) -> str | None:
    """Handle one hook call; returns what to print on stdout (None = nothing).

    ``session-end`` records the close even when the input is not a JSON object (`warn`
    receives the reason). Shared by `main` and ``wardian hooks …``.

    Args:
        provider: ``claude-code`` or ``gemini``. event: ``session-start`` or ``session-end``.
        stdin_text: the hook's input. warn: ``callable(str)`` for warnings (default: ignore).

    Raises:
        UsageError: no agent; NotFoundError: unknown agent; StoreError: the database.
    """
    payload, warning = read_hook_payload(stdin_text)
    if warning and warn is not None:
        warn(warning)
    if event == "session-end":
        session_end(payload, agent=agent, provider=provider)
        # Gemini parses a hook's stdout as JSON: answer with an empty object.
        return "{}" if provider == "gemini" else None
    answer = session_start(payload, agent=agent)
    if answer.output is None:
        return None
    return json.dumps(answer.output, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    """The installed hook: ``python -P -c "…main()" PROVIDER EVENT [--agent NAME] [--home PATH]``.

    Does what ``wardian hooks PROVIDER EVENT`` does without loading the whole CLI;
    ``--home PATH`` sets ``WARDIAN_HOME`` for it (and the drain worker it starts). It never
    gets in the provider's way: every failure (an unknown agent, a locked or broken
    database, bad arguments) is printed on stderr as ``wardian hook: Error: …`` and the
    exit code is still 0; with ``WARDIAN_DEBUG=1`` the exception propagates instead.
    Input and output are UTF-8 whatever the locale.

    Returns:
        0.
    """
    label = "wardian hook"
    try:
        provider, event, agent, home = _parse_argv(sys.argv[1:] if argv is None else argv)
        if home:
            from wardian.config import ENV_HOME

            os.environ[ENV_HOME] = home  # the drain worker started detached inherits it
        label = f"wardian hook {provider} {event}"
        text = sys.stdin.buffer.read().decode("utf-8", "replace") if sys.stdin else ""
        out = run_hook(provider, event, text, agent=agent,
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
