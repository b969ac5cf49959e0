"""Doctor checks for the host side: installed hooks and provider CLIs (`wardian doctor`).

* ``hooks``: every Wardian hook installed for Claude Code, Codex or Gemini — its command
  still splits, its interpreter still exists (a moved or deleted venv breaks the hook
  silently: hosts swallow a hook's failure), its agents exist, and a dry-run payload of the
  host's documented shape round-trips through the exact command (``WARDIAN_HOOK_DRY_RUN=1``:
  nothing is written) and comes back as the JSON the host expects.
* ``provider-clis``: which provider CLIs are on PATH and their versions, and whether each
  version is one the host tests ran (`wardian.app.hosts_tested`; another is a warning); one
  an invoker runs but PATH lacks is a problem, one only an agent names is a warning
  (`agent launch` needs it; hooks and the builtin curator do not).

Spec: docs/hosts.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator

from wardian.app.doctor import DoctorContext, Finding

__all__: list[str] = []

_PAYLOADS = {
    "session-start": {"session_id": "wardian-doctor", "transcript_path": None,
                      "hook_event_name": "SessionStart", "source": "startup"},
    "session-end": {"session_id": "wardian-doctor", "transcript_path": None,
                    "hook_event_name": "SessionEnd", "reason": "other"},
}


def _reinstall(host: str, agents: tuple[str, ...]) -> str:
    named = "".join(f" --agent {a}" for a in agents)
    return f"`wardian hooks install {host}{named}` (run from the wardian you use now)"


def _round_trip(argv: list[str], host: str, event: str, cwd: str) -> str | None:
    """Run the hook in dry-run mode; None when it answered as the host expects."""
    from wardian.runtime.hooks import DRY_RUN_ENV

    payload = dict(_PAYLOADS[event], cwd=cwd)
    try:
        proc = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True,
                              timeout=20, env={**os.environ, DRY_RUN_ENV: "1"}, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not run: {exc}"
    if proc.returncode != 0 or proc.stderr.strip():
        return (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    out = proc.stdout.strip()
    if event == "session-start" or host == "gemini":
        try:
            answer = json.loads(out)
        except ValueError:
            return f"answered {out[:80]!r}, not JSON"
        if event == "session-start" and not isinstance(answer.get("hookSpecificOutput"), dict):
            return "answered JSON without hookSpecificOutput"
    elif out:
        return f"printed {out[:80]!r} where the host expects nothing"
    return None


def _hooks(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.errors import WardianError
    from wardian.runtime.agents import read_agents
    from wardian.runtime.hook_install import HOSTS, installed_hooks

    name = "hooks"
    total = 0
    known: dict[str, str | None] | None = None  # name or id -> workspace
    registered = ctx.read("state.db", read_agents)
    if registered is not None:
        known = {}
        for agent in registered:
            known[agent.id] = known[agent.name] = agent.workspace
    for host, spec in HOSTS.items():
        path = spec.settings()
        try:
            hooks = installed_hooks(host)
        except WardianError as exc:
            yield Finding.warning(name, f"{spec.label}: cannot read {path}: {exc.message}",
                                  subject=str(path))
            continue
        for hook in hooks:
            total += 1
            what = f"{spec.label} {hook.host_event} hook in {path}"
            if not hook.argv:
                yield Finding.problem(name, f"{what}: its command cannot be parsed",
                                      fix=_reinstall(host, hook.agents), subject=str(path))
                continue
            program = hook.argv[0]
            resolved = program if os.path.isabs(program) else shutil.which(program)
            if not resolved or not os.access(resolved, os.X_OK):
                yield Finding.problem(
                    name, f"{what}: its interpreter {program} no longer exists (the "
                    "environment was moved or removed; the host ignores the failing hook)",
                    fix=_reinstall(host, hook.agents), subject=str(path))
                continue
            missing = [a for a in hook.agents if known is not None and a not in known]
            if missing:
                yield Finding.problem(
                    name, f"{what}: agent(s) {', '.join(missing)} no longer exist",
                    fix=f"`wardian hooks install {host} --uninstall "
                        + " ".join(f"--agent {a}" for a in missing) + "`", subject=str(path))
                continue
            unbound = [a for a in hook.agents if known is not None and not known.get(a)]
            if len(unbound) > 1:
                yield Finding.problem(
                    name, f"{what}: agents {', '.join(unbound)} have no workspace, so a "
                    "session started outside `wardian agent launch` maps to none of them",
                    fix=f"`wardian agent set {unbound[-1]} --workspace PATH` (the project "
                        "it works in)", subject=str(path))
                continue
            spaces = [known.get(a) for a in hook.agents] if known is not None else []
            cwd = next((w for w in spaces if w), str(ctx.data_dir.parent))
            failure = _round_trip(hook.argv, host, hook.event, cwd)
            if failure:
                yield Finding.problem(name, f"{what}: a test payload failed: {failure}",
                                      fix=_reinstall(host, hook.agents), subject=str(path))
                continue
            agents = ", ".join(hook.agents) or "the managed session's agent"
            yield Finding.ok(name, f"{what} runs and answers (agents: {agents})",
                             subject=str(path))
    if not total:
        yield Finding.ok(name, "no Wardian hooks installed (`wardian hooks install HOST "
                         "--agent NAME` adds them)")


_CLIS = {"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode"}


def _version(executable: str) -> str:
    try:
        proc = subprocess.run([executable, "--version"], capture_output=True, text=True,
                              timeout=10, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"version unknown ({type(exc).__name__})"
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0][:80] if text else "version unknown"


def _needed_providers(ctx: DoctorContext) -> dict[str, tuple[list[str], list[str]]]:
    """Provider -> (agents whose provider it is, invoker roles that run it).

    An invoker role runs a provider through a ``temporary_provider`` assignment, or through
    an ``agent`` assignment naming an agent (name, id or unique id prefix) whose provider it is.
    """
    from wardian.invokers.store import read_assignments
    from wardian.runtime.agents import read_agents

    needed: dict[str, tuple[list[str], list[str]]] = {}
    agents, invokers = ctx.read("state.db", lambda conn: (
        read_agents(conn) or [], read_assignments(conn) or [])) or ([], [])
    for agent in agents:
        needed.setdefault(agent.provider, ([], []))[0].append(agent.name)
    for invoker_id, assignments_json in invokers:
        try:
            assignments = json.loads(assignments_json)
        except ValueError:
            continue
        for role, item in assignments.items():
            if not isinstance(item, dict):
                continue
            provider = item.get("provider")
            via = ""
            if item.get("target_type") == "agent":
                target = str(item.get("agent") or "")
                match = [a for a in agents if target in (a.name, a.id)] or [
                    a for a in agents if target and a.id.startswith(target)]
                provider, via = (match[0].provider, f" (agent {match[0].name})") \
                    if len(match) == 1 else (None, "")
            if isinstance(provider, str):
                needed.setdefault(provider, ([], []))[1].append(
                    f"invoker {invoker_id[:8]} role {role}{via}")
    return needed


def _some(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _provider_clis(ctx: DoctorContext) -> Iterator[Finding]:
    """A provider CLI that an invoker runs but PATH lacks is a problem (the automation fails
    unattended); one that only an agent names is a warning: `agent launch` needs it, while
    hooks (the host runs them) and the builtin curator do not."""
    name = "provider-clis"
    needed = _needed_providers(ctx)
    for provider, executable in _CLIS.items():
        path = shutil.which(executable)
        agents, roles = needed.get(provider, ([], []))
        if path:
            from wardian.app.hosts_tested import TESTED, tested_note

            version = _version(path)
            note = tested_note(executable, version)
            if note is None or note[0]:
                tail = f" · {note[1]}" if note else ""
                yield Finding.ok(name, f"{executable}: {path} · {version}{tail}",
                                 subject=provider)
            else:
                yield Finding.warning(
                    name, f"{executable}: {path} · {version} · {note[1]}: Wardian's "
                    "hooks, transcripts and MCP entries were checked against that version",
                    fix=f"it may work as it is; to match what was tested, install "
                        f"{executable} {TESTED[executable]}", subject=provider)
        elif roles:
            yield Finding.problem(
                name, f"{executable} is not on PATH, but {_some(roles)} "
                f"{'runs' if len(roles) == 1 else 'run'} it: those runs will fail",
                fix=f"install the {executable} CLI, or re-assign the role with `wardian "
                    "automation session-close set ID --assignments '{\"ROLE\": "
                    "{\"target_type\": \"temporary_provider\", \"provider\": "
                    "\"builtin\"}}'` (`schedule set` for a schedule)",
                subject=provider)
        elif agents:
            who = (f"agents {_some(agents)} name" if len(agents) > 1
                   else f"agent {agents[0]} names")
            yield Finding.warning(
                name, f"{executable} is not on PATH; {who} "
                f"it as provider, so `wardian agent launch {agents[0]}` fails until it is "
                "installed (hooks and the builtin curator do not need it)",
                fix=f"install the {executable} CLI, or `wardian agent set {agents[0]} "
                    "--provider P` for the CLI you use",
                subject=provider)
        else:
            yield Finding.ok(name, f"{executable}: not installed (nothing needs it)",
                             subject=provider)
