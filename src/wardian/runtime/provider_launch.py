"""``wardian agent launch NAME [-- ARGS]``: the agent's provider CLI, interactive and managed.

The launch reuses the managed-launch machinery of `wardian.runtime.launch` unchanged:
`exec_managed` mints the capability, writes the startup context, records ``Memory loaded``,
forwards signals, waits, and runs `_on_runtime_exit` (which records the session-close
event). The managed command is a tiny shim, the launcher's ``provider`` program
(`wardian.runtime.launcher`, `exec_provider`), that reads the startup context from
``$WARDIAN_MEMORY_CONTEXT`` and **replaces itself** (``exec``) with the provider CLI,
passing model, effort and the context the way that provider accepts instructions
(providers.md):

* ``claude``: ``--model M --effort E --append-system-prompt TEXT``; plus ``--session-id
  <launch id>`` (a UUID4) unless the operator resumes or names a session, so the
  transcript is ``~/.claude/projects/<cwd>/<launch id>.jsonl`` and the SessionEnd hook
  reports the same session as the launch (one event, not two).
* ``codex``: ``-m M -c model_reasoning_effort=E -c developer_instructions=TEXT``.
* ``opencode``: ``-m provider/model --prompt TEXT`` (the TUI; no effort flag, so a configured
  effort is refused);
* ``gemini``: ``-m M``; Gemini has no append-instructions flag (``GEMINI_SYSTEM_MD``
  would replace the whole system prompt), so the context is the interactive session's
  first prompt (``-i TEXT``) unless the operator passes ``-i``/``-p`` themselves. Gemini has
  no effort flag: a configured effort is refused rather than silently dropped.

Because the shim ``exec``s, the provider keeps the shim's pid: the ``Memory loaded`` event
names the provider process. Spec: CLI.md ``agent launch``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from wardian.errors import UsageError

__all__ = ["LAUNCHABLE", "exec_provider", "find_transcript", "launch_agent", "provider_argv"]

LAUNCHABLE = {"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode"}
"""Provider name -> the interactive CLI command."""

_CLAUDE_SESSION_FLAGS = {"--resume", "-r", "--continue", "-c", "--session-id", "--fork-session"}
_GEMINI_PROMPT_FLAGS = {"-i", "--prompt-interactive", "-p", "--prompt"}
_OPENCODE_PROMPT_FLAGS = {"--prompt", "-p"}


def _has_flag(args: Sequence[str], flags: set[str]) -> bool:
    return any(a in flags or a.split("=", 1)[0] in flags for a in args)


def provider_argv(
    provider: str,
    *,
    model: str | None,
    effort: str | None,
    context: str | None,
    launch_id: str | None,
    args: Sequence[str] = (),
) -> list[str]:
    """The provider CLI's argv for an interactive managed launch (without the executable's
    path resolved: ``argv[0]`` is the command name).

    Args:
        provider: ``claude``, ``codex`` or ``gemini``.
        model, effort: the agent's selection (None = the CLI's default).
        context: the startup context text, or None (memory disabled).
        launch_id: ``$WARDIAN_LAUNCH_ID`` (claude uses it as the session id).
        args: the operator's extra arguments (after ``--``), appended last.

    Raises:
        UsageError: a provider that cannot be launched interactively, or an effort the
            provider's CLI has no flag for.
    """
    if provider not in LAUNCHABLE:
        raise UsageError(
            f"`agent launch` cannot start provider {provider!r} interactively",
            hint=f"launchable providers: {', '.join(LAUNCHABLE)}; for others use "
            "`wardian agent exec NAME -- CMD`",
        )
    argv = [LAUNCHABLE[provider]]
    if provider == "claude":
        if model:
            argv += ["--model", model]
        if effort:
            argv += ["--effort", effort]
        if context:
            argv += ["--append-system-prompt", context]
        if launch_id and not _has_flag(args, _CLAUDE_SESSION_FLAGS):
            argv += ["--session-id", launch_id]
    elif provider == "codex":
        if model:
            argv += ["-m", model]
        if effort:
            argv += ["-c", f"model_reasoning_effort={json.dumps(effort)}"]
        if context:
            # A TOML basic string: JSON string escapes are valid TOML escapes.
            argv += ["-c", f"developer_instructions={json.dumps(context, ensure_ascii=False)}"]
    elif provider == "opencode":
        # The TUI: `-m provider/model`; effort is a model variant, which only `opencode run`
        # takes (`--variant`), so a configured effort is refused rather than dropped. No
        # append-instructions flag: the context is the session's first prompt.
        if effort:
            raise UsageError(
                f"the interactive opencode TUI takes no variant flag; this agent's effort "
                f"{effort!r} cannot be passed",
                hint="clear it with `wardian agent set NAME --effort ''`, or use `wardian "
                "agent exec NAME -- opencode run --variant EFFORT …`",
            )
        if model:
            argv += ["-m", model]
        if context and not _has_flag(args, _OPENCODE_PROMPT_FLAGS):
            argv += ["--prompt", context]
    else:  # gemini
        if effort:
            raise UsageError(
                f"the gemini CLI has no effort flag; this agent's effort {effort!r} cannot be "
                "passed",
                hint="clear the agent's effort, or use a provider that takes one",
            )
        if model:
            argv += ["-m", model]
        if context and not _has_flag(args, _GEMINI_PROMPT_FLAGS):
            argv += ["-i", context]
    return [*argv, *args]


def claude_projects_dir() -> Path:
    """Where Claude Code keeps transcripts (``$CLAUDE_CONFIG_DIR/projects`` or
    ``~/.claude/projects``)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


def codex_sessions_dir() -> Path:
    """Where Codex keeps rollouts (``$CODEX_HOME/sessions`` or ``~/.codex/sessions``)."""
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "sessions"


def _codex_rollout(started_at: float, workspace: str | None) -> str | None:
    """The newest Codex rollout written since `started_at` whose ``session_meta.cwd`` lies in
    `workspace` (rollouts are named by Codex's own thread id, so the launch cannot name it)."""
    sessions = codex_sessions_dir()
    if not sessions.is_dir():
        return None
    from datetime import UTC, datetime, timedelta

    first = datetime.fromtimestamp(started_at, UTC).date() - timedelta(days=1)
    last = datetime.now(UTC).date() + timedelta(days=1)
    best: tuple[float, str] | None = None
    day = first
    while day <= last:
        folder = sessions / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        day += timedelta(days=1)
        try:
            files = list(folder.glob("rollout-*.jsonl"))
        except OSError:
            continue
        for path in files:
            try:
                mtime = path.stat().st_mtime
                if mtime < started_at - 1.0:
                    continue
                with path.open(encoding="utf-8") as handle:
                    meta = json.loads(handle.readline() or "{}")
            except (OSError, ValueError):
                continue
            payload = meta.get("payload") if isinstance(meta, dict) else None
            cwd = payload.get("cwd") if isinstance(payload, dict) else None
            if not isinstance(cwd, str):
                continue  # not a rollout we can place: never fail the session close
            if workspace and not (cwd == workspace or cwd.startswith(workspace + os.sep)):
                continue
            if best is None or mtime > best[0]:
                best = (mtime, str(path))
    return best[1] if best else None


def find_transcript(
    session_id: str,
    *,
    provider: str | None = None,
    started_at: float | None = None,
    workspace: str | None = None,
) -> tuple[str | None, str | None]:
    """The transcript a managed launch left. Read-only; never raises.

    * Claude Code names its transcript after the session id, which `agent launch` sets to
      the launch id: ``<projects>/<encoded cwd>/<session id>.jsonl``.
    * Codex (no session-end hook exists): for an agent whose provider is ``codex``, the
      newest rollout written since the runtime started (`started_at`, seconds since the
      epoch) for a directory inside `workspace`.

    Returns:
        (path, provider) — ``(None, None)`` when there is none.
    """
    if session_id and "/" not in session_id and "\\" not in session_id:
        try:
            for candidate in claude_projects_dir().glob(f"*/{session_id}.jsonl"):
                if candidate.is_file():
                    return str(candidate), "claude-code"
        except OSError:
            pass
    if provider == "codex" and started_at is not None:
        found = _codex_rollout(started_at, workspace)
        if found:
            return found, "codex"
    return None, None


def launch_agent(agent_ref: str, args: Sequence[str], *, workspace: str | None = None) -> int:
    """Start the agent's provider CLI as a managed process and wait for it.

    Args:
        agent_ref: agent name, id or unique id prefix.
        args: extra provider arguments (after ``--``).
        workspace: ``--workspace`` directory, or None (see `wardian.runtime.launch`).

    Returns:
        The provider's exit code (128 + N when it died of signal N).

    Raises:
        NotFoundError: unknown agent. UsageError: the provider cannot be launched.
        ProviderNotInstalled: the provider CLI is not on PATH.
    """
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.launch import exec_managed

    registry = AgentRegistry(open_state_db())
    agent = registry.get(agent_ref)
    # Check everything we can before starting anything (provider, flags, executable).
    provider_argv(agent.provider, model=agent.model, effort=agent.effort, context=None,
                  launch_id=None, args=args)
    from wardian.providers.process import resolve_executable

    resolve_executable(LAUNCHABLE[agent.provider], agent.provider)
    from wardian._process import launcher_argv

    shim = ["provider", agent.provider]
    if agent.model:
        shim += ["--model", agent.model]
    if agent.effort:
        shim += ["--effort", agent.effort]
    return exec_managed(agent, launcher_argv(*shim, "--", *args), workspace=workspace,
                        source="launch")


def exec_provider(provider: str, *, model: str | None, effort: str | None,
                  args: Sequence[str]) -> int:
    """The managed child of `launch_agent`: build the provider CLI's argv (`provider_argv`,
    with the startup context of ``$WARDIAN_MEMORY_CONTEXT``) and ``exec`` it.

    Does not return once the CLI starts (on Windows: runs it and returns its exit code).

    Raises:
        UsageError: see `provider_argv`. ProviderNotInstalled: the CLI is not on PATH.
    """
    from wardian.memory.principal import ENV_LAUNCH_ID, ENV_MEMORY_CONTEXT

    context = None
    context_path = os.environ.get(ENV_MEMORY_CONTEXT)
    if context_path:
        context = Path(context_path).read_text(encoding="utf-8")
    command = provider_argv(provider, model=model, effort=effort, context=context,
                            launch_id=os.environ.get(ENV_LAUNCH_ID), args=args)
    from wardian.providers.process import resolve_executable

    executable = resolve_executable(command[0], provider)
    sys.stdout.flush()
    if os.name == "nt":  # pragma: no cover - no exec on Windows: run and pass the code on
        import subprocess

        return subprocess.call([executable, *command[1:]])
    os.execv(executable, [command[0], *command[1:]])
    return 127  # pragma: no cover - execv does not return


if __name__ == "__main__":  # the shim's earlier command line: `python -m` this module
    from wardian.runtime.launcher import main

    sys.exit(main(["provider", *sys.argv[1:]]))
