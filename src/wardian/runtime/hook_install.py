"""Installing Wardian's hooks into a host's settings file: Claude Code, Codex, Gemini CLI,
and opencode's plugin file (`wardian.runtime.opencode_plugin`: the same entries, in a
plugin opencode loads, since it has no hook settings).

One hook entry per event, listing every agent it reports for (``--agent ada --agent
bob``): installing for bob adds bob to the entry and never removes ada; ``--uninstall
--agent bob`` removes only bob (the entry goes with its last agent); ``--uninstall`` alone
removes Wardian's entries. Other keys, other hooks and their order are kept, and the file is
written back in its own style (indentation, trailing newline, ASCII escapes), so install
followed by uninstall gives back the same bytes. Files are replaced atomically and only
when something changed; a file that is not a JSON object is refused and left untouched.

The hook command is ``PYTHON -P -c "…main()" HOST EVENT [--agent NAME]… [--home PATH]``
(`hook_argv`): the installing interpreter by absolute path, so the hook works where that
environment is not active; ``wardian doctor`` checks that it still resolves.
Spec: docs/hosts.md (what each host documents).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wardian.errors import UsageError, ValidationError

__all__ = [
    "HOOK_MAIN",
    "HOSTS",
    "HostSpec",
    "InstallResult",
    "InstalledHook",
    "has_comments",
    "hook_argv",
    "hook_command",
    "host_version",
    "install_hooks",
    "installed_hooks",
    "supported_events",
]

HOOK_MAIN = "import sys; from wardian.runtime.hooks import main; sys.exit(main())"
"""The ``-c`` program of an installed hook (imports only what a hook needs)."""


def _claude_settings() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "settings.json"


def _codex_hooks() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "hooks.json"


def _gemini_settings() -> Path:
    base = os.environ.get("GEMINI_CLI_HOME")
    return (Path(base) if base else Path.home()) / ".gemini" / "settings.json"


def _opencode_plugin() -> Path:
    from wardian.runtime.opencode_plugin import plugin_path

    return plugin_path()


@dataclass(frozen=True)
class HostSpec:
    """How one host configures hooks.

    Attributes:
        name: ``claude-code``, ``codex`` or ``gemini``. label: for messages.
        events: the host's event name -> Wardian's hook event (``session-start``/``-end``).
        timeout: the per-hook ``timeout`` value written (the host's unit: Claude Code and
            Codex seconds, Gemini milliseconds). settings: the default settings file.
        named: whether hook configurations carry a ``name`` (Gemini shows it in logs).
        since: host event -> the first host version that has it (installed only when the
            host's version, `host_version`, is known and at least that).
        command: the host's executable name (for `host_version`).
        comments: whether the host accepts ``//`` and ``/* */`` comments in its settings
            file (Gemini CLI strips them before parsing).
        plugin: the "settings file" is Wardian's own plugin file holding the entries
            (opencode); it is removed when its last entry goes.
    """

    name: str
    label: str
    events: dict[str, str]
    timeout: int
    settings: Callable[[], Path]
    named: bool = False
    since: dict[str, tuple[int, ...]] = field(default_factory=dict)
    command: str = ""
    comments: bool = False
    plugin: bool = False


HOSTS: dict[str, HostSpec] = {
    "claude-code": HostSpec("claude-code", "Claude Code",
                            {"SessionStart": "session-start", "SessionEnd": "session-end"},
                            10, _claude_settings),
    # Codex Desktop clamps hook timeouts above 3 s (with a warning); the hook needs < 0.2 s.
    # SessionEnd came with Codex 0.145.0 (openai/codex PR 33895).
    "codex": HostSpec("codex", "Codex CLI",
                      {"SessionStart": "session-start", "SessionEnd": "session-end"}, 3,
                      _codex_hooks, since={"SessionEnd": (0, 145, 0)}, command="codex"),
    "gemini": HostSpec("gemini", "Gemini CLI",
                       {"SessionStart": "session-start", "SessionEnd": "session-end"},
                       10_000, _gemini_settings, named=True, comments=True),
    "opencode": HostSpec("opencode", "opencode",
                         {"SessionStart": "session-start", "SessionEnd": "session-end"},
                         10, _opencode_plugin, plugin=True),
}
"""Hosts whose hooks Wardian installs (docs/hosts.md says why Antigravity is not one)."""


_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
VERSION_TIMEOUT_S = 20
"""The longest ``HOST --version`` may run, seconds (a hung executable counts as unknown)."""


def host_version(command: str) -> tuple[int, ...] | None:
    """The version ``COMMAND --version`` prints (first ``X.Y.Z``), the command found on
    PATH; None when it is not found, fails or prints no version. Bounded in time and
    output."""
    import shutil
    import subprocess

    exe = shutil.which(command)
    if not exe:
        return None
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search((proc.stdout or "")[:4096])
    return tuple(int(x) for x in found.groups()) if proc.returncode == 0 and found else None


def supported_events(spec: HostSpec) -> tuple[dict[str, str], str | None]:
    """The host events to install for `spec` (events with a `since` only when the
    installed version has them) and, when one was left out, why."""
    if not spec.since:
        return dict(spec.events), None
    version = host_version(spec.command)
    events = {e: w for e, w in spec.events.items()
              if e not in spec.since or (version is not None and version >= spec.since[e])}
    if len(events) == len(spec.events):
        return events, None
    need = ", ".join(f"{e} needs {'.'.join(map(str, v))}" for e, v in spec.since.items()
                     if e not in events)
    seen = ("no `" + spec.command + "` found on PATH" if version is None
            else f"{spec.label} {'.'.join(map(str, version))} found")
    return events, f"{seen} ({need})"


def _host(name: str) -> HostSpec:
    try:
        return HOSTS[name]
    except KeyError:
        raise UsageError(f"unknown hook host {name!r}",
                         hint=f"hosts: {', '.join(HOSTS)}") from None


def hook_argv(host: str, event: str, agents: list[str] | tuple[str, ...] = (),
              home: str | None = None) -> list[str]:
    """The argv of one installed hook (see the module docstring).

    ``-P`` keeps the session's working directory off ``sys.path`` (a project's own
    ``json.py`` or ``wardian/`` must not shadow the modules the hook imports); the
    interpreter is the installing environment's, not resolved through its symlink, so the
    venv's packages load.

    Raises:
        UsageError: Python cannot tell which interpreter runs it.
    """
    if not sys.executable:
        raise UsageError(
            "cannot tell which Python interpreter runs Wardian (sys.executable is empty)",
            hint="run `wardian hooks install` from the wardian command of a normal install",
        )
    argv = [os.path.abspath(sys.executable), "-P", "-c", HOOK_MAIN, host, event]
    for agent in agents:
        argv += ["--agent", agent]
    if home:
        argv += ["--home", home]
    return argv


def _join(argv: list[str]) -> str:
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import subprocess

        return subprocess.list2cmdline(argv)
    import shlex

    return shlex.join(argv)


def hook_command(host: str, event: str, agents: list[str] | tuple[str, ...] = (),
                 home: str | None = None) -> str:
    """`hook_argv` as one shell command line (quoted, so spaces in paths are safe)."""
    return _join(hook_argv(host, event, agents, home))


@dataclass(frozen=True)
class InstalledHook:
    """A Wardian hook found in a settings file.

    Attributes:
        host, event: e.g. ``claude-code``, ``session-start``. host_event: ``SessionStart``.
        command: the command line as written. argv: it split (None when it cannot be).
        agents, home: what the command passes.
        position: (matcher group index, index in that group's ``hooks``) within the host
            event's list: hosts that key per-hook state by position (Codex) need it.
        matcher: the group's ``matcher`` (None when it has none). spec: the hook object as
            written.
    """

    host: str
    event: str
    host_event: str
    command: str
    argv: list[str] | None
    agents: tuple[str, ...]
    home: str | None
    position: tuple[int, int] = (-1, -1)
    matcher: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)


def _split(command: str) -> list[str] | None:
    import shlex

    try:
        return shlex.split(command)
    except ValueError:
        return None


def _parse_ours(host: str, event: str, command: str) -> tuple[tuple[str, ...], str | None]:
    """The agents and home a Wardian hook command passes."""
    from wardian.runtime.hook_argv import parse_hook_argv

    argv = _split(command) or []
    if host in argv:
        try:
            args = parse_hook_argv(argv[argv.index(host):])
            return args.agents, args.home
        except UsageError:
            pass
    return (), None


def _is_ours(hook: Any, host: str, event: str) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    command = str(hook.get("command", ""))
    return "wardian" in command and (
        ("wardian.runtime.hooks" in command and f" {host} {event}" in command)
        or f" hooks {host} {event}" in command  # the CLI form of older installs
    )


@dataclass
class _Style:
    indent: str | int | None
    separators: tuple[str, str]
    newline: bool
    ensure_ascii: bool


def _style(text: str) -> _Style:
    """How `text` (a JSON document) is formatted, so a rewrite keeps its bytes; a new
    (empty) file gets two-space indentation and a final newline."""
    if not text.strip():
        return _Style(2, (",", ": "), True, ensure_ascii=False)
    match = re.search(r"[{\[][ \t]*\r?\n([ \t]+)\S", text)
    indent: str | int | None
    if match:
        unit = match.group(1)
        indent = len(unit) if set(unit) == {" "} else unit
        separators = (",", ": ")
    else:
        indent = None
        compact = re.search(r'"\s*:\s', text) is None and ", " not in text
        separators = (",", ":") if compact and text.strip() else (", ", ": ")
    has_non_ascii = any(ord(c) > 127 for c in text)
    return _Style(indent, separators, text.endswith("\n") or not text,
                  ensure_ascii=not has_non_ascii and "\\u" in text)


def _dump(data: dict[str, Any], style: _Style) -> str:
    text = json.dumps(data, indent=style.indent, separators=style.separators,
                      ensure_ascii=style.ensure_ascii)
    return text + ("\n" if style.newline else "")


def _load(path: Path, spec: HostSpec) -> tuple[dict[str, Any], str]:
    if not path.exists():
        return {}, ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    hint = "fix the file by hand; Wardian will not overwrite it"
    if not text.strip():
        return {}, text
    if spec.plugin:
        from wardian.runtime.opencode_plugin import read_hooks

        return _checked(read_hooks(text, source=str(path)), path, spec, hint), text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        data = _commented(text, spec)
        if data is None:
            raise ValidationError(
                f"the settings file is not valid JSON: {exc.msg} at line {exc.lineno} "
                f"column {exc.colno}", source=str(path), hint=hint) from exc
    if not isinstance(data, dict):
        raise ValidationError("the settings file must be a JSON object", source=str(path),
                              hint=hint)
    return _checked(data, path, spec, hint), text


def _checked(data: dict[str, Any], path: Path, spec: HostSpec, hint: str) -> dict[str, Any]:
    """`data` after checking its ``hooks`` member has the shape the hosts document."""
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ValidationError("expected an object", path="hooks", source=str(path), hint=hint)
    for event in spec.events:
        if isinstance(hooks, dict) and not isinstance(hooks.get(event, []), list):
            raise ValidationError("expected a list of matcher groups", path=f"hooks.{event}",
                                  source=str(path), hint=hint)
    return data


def _commented(text: str, spec: HostSpec) -> Any:
    """The value of `text` read with its comments stripped, when `spec`'s host accepts
    comments and that parses; else None."""
    if not spec.comments:
        return None
    from wardian._jsonc import strip_comments

    try:
        return json.loads(strip_comments(text))
    except json.JSONDecodeError:
        return None


def has_comments(path: Path, host: str) -> bool:
    """Whether `host`'s settings file at `path` is valid only with its comments stripped
    (the host reads it; Wardian reads it but will not rewrite it)."""
    spec = _host(host)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return isinstance(_commented(text, spec), dict)
    return False


def _our_hooks(data: dict[str, Any], spec: HostSpec, host_event: str) -> list[dict[str, Any]]:
    hooks = data.get("hooks")
    groups = hooks.get(host_event, []) if isinstance(hooks, dict) else []
    event = spec.events[host_event]
    return [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if _is_ours(h, spec.name, event)]


def _remove_ours(data: dict[str, Any], spec: HostSpec, host_event: str) -> int:
    """Remove our hooks for `host_event`; drop containers only they filled. Returns count."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(host_event), list):
        return 0
    event = spec.events[host_event]
    removed = 0
    groups: list[Any] = []
    for group in hooks[host_event]:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            groups.append(group)
            continue
        kept = [h for h in inner if not _is_ours(h, spec.name, event)]
        removed += len(inner) - len(kept)
        if len(kept) == len(inner):
            groups.append(group)
        elif kept:
            groups.append({**group, "hooks": kept})
    if groups:
        hooks[host_event] = groups
    else:
        del hooks[host_event]
    if not hooks:
        del data["hooks"]
    return removed


def _is_commented(text: str) -> bool:
    try:
        json.loads(text or "{}")
    except json.JSONDecodeError:
        return True
    return False


def _commented_refusal(path: Path, data: dict[str, Any]) -> ValidationError:
    """The refusal to rewrite a commented settings file, with exactly what to put in it."""
    hooks = json.dumps(data.get("hooks", {}), indent=2, ensure_ascii=False)
    lines = f'"hooks": {hooks}'
    return ValidationError(
        f"{path} has comments, which the host accepts but a rewrite would lose, so Wardian "
        "does not edit it", source=str(path),
        hint="make the file's top-level \"hooks\" member this (replace the one there, or "
             "add it with a comma after the member before it):\n" + lines)


def installed_hooks(host: str, settings_path: Path | None = None) -> list[InstalledHook]:
    """The Wardian hooks in `host`'s settings file (none when the file is absent). Read-only.

    Raises:
        UsageError / ValidationError: the file cannot be read or is not a JSON object.
    """
    spec = _host(host)
    path = Path(settings_path).expanduser() if settings_path else spec.settings()
    data, _ = _load(path, spec)
    found = []
    for host_event, event in spec.events.items():
        hooks = data.get("hooks")
        groups = hooks.get(host_event, []) if isinstance(hooks, dict) else []
        for group_index, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            for handler_index, hook in enumerate(inner):
                if not _is_ours(hook, spec.name, event):
                    continue
                command = str(hook.get("command", ""))
                agents, home = _parse_ours(spec.name, event, command)
                matcher = group.get("matcher")
                found.append(InstalledHook(
                    spec.name, event, host_event, command, _split(command), agents, home,
                    (group_index, handler_index), matcher if isinstance(matcher, str) else None,
                    dict(hook)))
    return found


@dataclass
class InstallResult:
    """What `install_hooks` did: the file, whether it changed, which host events were
    added or removed, which kept their entry but lost agents (`updated`, an uninstall
    with `--agent`) and which agents those were (`agents_removed`), the agents the hooks
    now list, and the embedded data dir; `events` the host events this install wrote
    (all of the host's on uninstall), `skipped_reason` why some were left out (the host's
    version lacks them) or None."""

    host: str
    settings_path: str
    changed: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    agents_removed: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    home: str | None = None
    events: list[str] = field(default_factory=list)
    skipped_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"host": self.host, "settings_path": self.settings_path,
                "changed": self.changed, "added": self.added, "removed": self.removed,
                "updated": self.updated, "agents_removed": self.agents_removed,
                "agents": self.agents, "home": self.home, "events": self.events,
                "skipped_reason": self.skipped_reason}


def install_hooks(
    host: str,
    settings_path: Path | None = None,
    *,
    agents: list[str] | tuple[str, ...] = (),
    uninstall: bool = False,
) -> InstallResult:
    """Add (or remove) Wardian's hooks for `host` in its settings file.

    Install: each event gets one Wardian hook ``{"type": "command", "command": …,
    "timeout": N}`` (in its own matcher group ``{"matcher": "", "hooks": […]}`` the first
    time); the agents it lists are the ones it had plus `agents`; an existing entry is
    updated in place, so its position is kept. Run again, nothing changes. When
    ``WARDIAN_HOME`` is set its absolute path is embedded as ``--home`` (the host runs the
    hook without the installer's environment).

    Uninstall: with `agents`, only those are removed from the list (the entry goes with its
    last agent); without, every Wardian hook of the host goes. Containers left empty by
    that are dropped; nothing else is touched.

    Args:
        host: ``claude-code``, ``codex`` or ``gemini``.
        settings_path: default the host's user settings file (`HostSpec.settings`).
        agents: agent names the hooks report for.

    Raises:
        UsageError: unknown host. ValidationError: the file is not a JSON object (left as
            it is).
    """
    from wardian.config import ENV_HOME

    spec = _host(host)
    path = Path(settings_path).expanduser() if settings_path else spec.settings()
    data, text = _load(path, spec)
    before = json.dumps(data)
    env_home = os.environ.get(ENV_HOME, "").strip()
    result = InstallResult(spec.name, str(path), changed=False)
    wanted_events, result.skipped_reason = (dict(spec.events), None) if uninstall else (
        supported_events(spec))
    result.events = list(wanted_events)
    for host_event, event in spec.events.items():
        if host_event not in wanted_events:
            continue
        ours = _our_hooks(data, spec, host_event)
        current: list[str] = []
        home: str | None = None
        for hook in ours:
            listed, listed_home = _parse_ours(spec.name, event, str(hook.get("command", "")))
            current += [a for a in listed if a not in current]
            home = home or listed_home
        if uninstall:
            keep = [a for a in current if a not in agents] if agents else []
            if keep and len(ours) == 1:
                command = hook_command(spec.name, event, keep, home)
                if ours[0].get("command") != command:
                    ours[0]["command"] = command
                    result.updated.append(host_event)
                    result.agents_removed += [a for a in current
                                              if a in agents and a not in result.agents_removed]
                result.agents = keep
            elif _remove_ours(data, spec, host_event):
                result.removed.append(host_event)
            continue
        wanted = current + [a for a in agents if a not in current]
        home = os.path.abspath(os.path.expanduser(env_home)) if env_home else home
        result.agents, result.home = wanted, home
        command = hook_command(spec.name, event, wanted, home)
        if len(ours) == 1:
            if ours[0].get("command") != command or ours[0].get("timeout") != spec.timeout:
                ours[0]["command"] = command
                ours[0]["timeout"] = spec.timeout
                result.added.append(host_event)
            continue
        _remove_ours(data, spec, host_event)
        entry: dict[str, Any] = {"type": "command", "command": command,
                                 "timeout": spec.timeout}
        if spec.named:
            entry = {"name": f"wardian-{event}", **entry}
        data.setdefault("hooks", {}).setdefault(host_event, []).append(
            {"matcher": "", "hooks": [entry]})
        result.added.append(host_event)
    if json.dumps(data) != before and not spec.plugin and _is_commented(text):
        raise _commented_refusal(path, data)
    if json.dumps(data) != before:
        result.changed = True
        if spec.plugin and not data.get("hooks"):
            path.unlink(missing_ok=True)  # the plugin goes with its last entry
            return result
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.wardian-tmp")
        if spec.plugin:
            from wardian.runtime.opencode_plugin import render

            tmp.write_text(render(data), encoding="utf-8")
        else:
            tmp.write_text(_dump(data, _style(text)), encoding="utf-8")
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    return result
