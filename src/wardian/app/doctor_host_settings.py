"""Doctor check ``host-settings``: whether the hosts will run the hooks Wardian installed,
and settings files Wardian reads but will not rewrite (`wardian doctor`).

* Codex runs a hook that is not managed only once it was trusted in ``/hooks``. It
  records that in ``$CODEX_HOME/config.toml`` as ``[hooks.state."KEY"] trusted_hash =
  "sha256:…"``, KEY being ``<hooks.json path>:<event>:<group index>:<hook index>`` and the
  hash that of the hook's normalised form (`codex_hook_hash`); a hook whose hash differs
  (a reinstall rewrote it) must be trusted again, and ``enabled = false`` switches it off.
* Gemini CLI runs no hook when ``hooksConfig.enabled`` is false, and none whose name (or
  command) ``hooksConfig.disabled`` lists. It merges its settings files in this order,
  later ones winning for ``enabled`` and every one adding to ``disabled``: the system
  defaults (``$GEMINI_CLI_SYSTEM_DEFAULTS_PATH``, else ``/etc/gemini-cli/system-defaults.json``
  on Linux), the user's, the workspace's ``.gemini/settings.json`` (only in a folder the
  user trusts) and the system settings (``$GEMINI_CLI_SYSTEM_SETTINGS_PATH``, else
  ``/etc/gemini-cli/settings.json``), which override all. Doctor reads each of them, the
  workspace files of every registered agent's workspace included, and names the file that
  switches a hook off.
* Gemini CLI accepts ``//`` comments in its settings file; Wardian reads such a file but
  does not rewrite it (`wardian hooks install` prints the lines to add instead).

Spec: docs/hosts.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wardian.app.doctor import DoctorContext, Finding

__all__ = ["codex_hook_hash", "codex_hook_key", "gemini_layers"]

NAME = "host-settings"
_CODEX_EVENT = {"SessionStart": "session_start", "SessionEnd": "session_end"}
_TRUST_FIX = ("start `codex`, open `/hooks` and trust the Wardian hooks (once after every "
              "install that changed them); a run with `codex --dangerously-bypass-hook-trust` "
              "skips the check")


def codex_hook_key(hooks_json: Path, host_event: str, position: tuple[int, int]) -> str:
    """Codex's key of one hook's state: ``<hooks.json path>:<event>:<group>:<hook>``."""
    return f"{os.path.abspath(hooks_json)}:{_CODEX_EVENT[host_event]}:{position[0]}:" \
           f"{position[1]}"


def codex_hook_hash(host_event: str, matcher: str | None, hook: dict[str, Any]) -> str:
    """The hash Codex trusts a command hook by: SHA-256 of the canonical JSON (sorted keys,
    no spaces) of ``{event_name, matcher, hooks: [{type, command, timeout, async,
    statusMessage}]}``, absent values left out, the timeout defaulting to 600 s."""
    timeout = hook.get("timeout", hook.get("timeoutSec", 600))
    handler: dict[str, Any] = {
        "type": "command", "command": str(hook.get("command", "")),
        "timeout": max(int(timeout) if isinstance(timeout, int) else 600, 1),
        "async": bool(hook.get("async", False)),
    }
    if isinstance(hook.get("statusMessage"), str):
        handler["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": _CODEX_EVENT[host_event], "hooks": [handler]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _codex_states(config: Path) -> tuple[dict[str, Any], str | None]:
    """``hooks.state`` of Codex's config.toml, and why it could not be read (or None)."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, str(exc)
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return (state if isinstance(state, dict) else {}), None


def _codex(hooks: list[Any], hooks_json: Path) -> Iterator[Finding]:
    config = hooks_json.with_name("config.toml")
    states, unreadable = _codex_states(config)
    if unreadable:
        yield Finding.warning(NAME, f"Codex CLI: cannot read {config}: {unreadable}; whether "
                              "the Wardian hooks are trusted is unknown", subject=str(config))
        return
    for hook in hooks:
        if hook.host_event not in _CODEX_EVENT:
            continue
        key = codex_hook_key(hooks_json, hook.host_event, hook.position)
        state = states.get(key)
        state = state if isinstance(state, dict) else {}
        what = f"Codex CLI {hook.host_event} hook in {hooks_json}"
        if state.get("enabled") is False:
            yield Finding.problem(
                NAME, f"{what} is switched off in /hooks (enabled = false under "
                f'[hooks.state."{key}"] in {config}): Codex does not run it',
                fix="switch it on again in `/hooks` in `codex`", subject=key)
            continue
        trusted = state.get("trusted_hash")
        if trusted is None:
            yield Finding.problem(
                NAME, f"{what} is not trusted yet: Codex runs a hook only after it was "
                "trusted once in /hooks, so it does not run", fix=_TRUST_FIX, subject=key)
        elif trusted != codex_hook_hash(hook.host_event, hook.matcher, hook.spec):
            yield Finding.problem(
                NAME, f"{what} changed since it was trusted (an install rewrote it): Codex "
                "does not run it until it is trusted again", fix=_TRUST_FIX, subject=key)
        else:
            yield Finding.ok(NAME, f"{what} is trusted", subject=key)


def gemini_layers(user: Path, workspace: str | None) -> list[Path]:
    """The settings files Gemini CLI merges for a session in `workspace`, in its order
    (later ones win): system defaults, `user`, the workspace's, system settings."""
    import sys

    if sys.platform == "darwin":
        base = Path("/Library/Application Support/GeminiCli")
    elif sys.platform == "win32":
        base = Path("C:/ProgramData/gemini-cli")
    else:
        base = Path("/etc/gemini-cli")
    defaults = os.environ.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or base / "system-defaults.json"
    system = os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or base / "settings.json"
    layers = [Path(defaults), user]
    if workspace:
        layers.append(Path(workspace) / ".gemini" / "settings.json")
    layers.append(Path(system))
    return layers


def _hooks_config(path: Path) -> dict[str, Any]:
    """``hooksConfig`` of one Gemini settings file; empty when absent or unreadable (an
    unreadable user file is the ``hooks`` check's to report)."""
    from wardian._jsonc import strip_comments

    try:
        data = json.loads(strip_comments(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    config = data.get("hooksConfig") if isinstance(data, dict) else None
    return config if isinstance(config, dict) else {}


def _gemini(hooks: list[Any], settings: Path,
            workspaces: list[str | None]) -> Iterator[Finding]:
    said: set[str] = set()
    for workspace in workspaces:
        enabled_by: Path | None = None
        disabled: list[tuple[str, Path]] = []
        for layer in gemini_layers(settings, workspace):
            config = _hooks_config(layer)
            if "enabled" in config:
                enabled_by = layer if config["enabled"] is False else None
            names = config.get("disabled")
            disabled += [(n, layer) for n in names if isinstance(n, str)] \
                if isinstance(names, list) else []
        own = workspace is not None and enabled_by == gemini_layers(settings, workspace)[2]
        where = f" for sessions in {workspace} (once the folder is trusted)" if own else ""
        if enabled_by is not None:
            message = (f"Gemini CLI hooks are switched off (hooksConfig.enabled is false in "
                       f"{enabled_by}){where}: the Wardian hooks do not run")
            if message not in said:
                said.add(message)
                yield Finding.problem(
                    NAME, message,
                    fix=f'set "hooksConfig": {{"enabled": true}} in {enabled_by} (or remove '
                        '"enabled": false), then restart gemini', subject=str(enabled_by))
            continue
        for hook in hooks:
            listed = [(n, layer) for n, layer in disabled
                      if n in (hook.spec.get("name"), hook.command)]
            if not listed:
                continue
            name, layer = listed[0]
            message = (f"Gemini CLI {hook.host_event} hook {name!r} is listed in "
                       f"hooksConfig.disabled in {layer}: it does not run")
            if message not in said:
                said.add(message)
                yield Finding.problem(
                    NAME, message,
                    fix=f"remove {json.dumps(name)} from hooksConfig.disabled in {layer} "
                        "(or enable it in `/hooks` in gemini)", subject=str(layer))


def _host_settings(ctx: DoctorContext) -> Iterator[Finding]:
    from wardian.errors import WardianError
    from wardian.runtime.agents import read_agents
    from wardian.runtime.hook_install import HOSTS, has_comments, installed_hooks

    agents = ctx.read("state.db", read_agents) or []
    workspaces: list[str | None] = [None, *sorted({a.workspace for a in agents
                                                   if a.workspace})]
    for host, spec in HOSTS.items():
        path = spec.settings()
        if spec.comments and has_comments(path, host):
            yield Finding.warning(
                NAME, f"{spec.label}: {path} has comments, which {spec.label} accepts; "
                "Wardian reads it but will not rewrite it (the comments would be lost)",
                fix=f"`wardian hooks install {host} --agent NAME` prints the exact "
                    "\"hooks\" member to put in the file; add it by hand", subject=str(path))
        try:
            hooks = installed_hooks(host)
        except WardianError:
            continue  # the `hooks` check reports an unreadable file
        if not hooks:
            continue
        if host == "codex":
            yield from _codex(hooks, path)
        elif host == "gemini":
            yield from _gemini(hooks, path, workspaces)
