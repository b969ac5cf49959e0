"""Register ``wardian mcp`` in a host's MCP configuration, reversibly.

Hosts and files (checked against each host's documentation, 2026):

``claude-code``
    project scope (default): ``.mcp.json`` at the workspace root, ``{"mcpServers": {NAME:
    {"type": "stdio", "command", "args", "env"}}}``; user scope: ``~/.claude.json`` (or
    ``$CLAUDE_CONFIG_DIR/.claude.json``) top-level ``mcpServers``. Claude Code expands
    ``${VAR:-default}`` in ``env``.
``codex``
    user scope (default): ``$CODEX_HOME/config.toml`` (``~/.codex/config.toml``); project
    scope: ``.codex/config.toml``. A ``[mcp_servers.NAME]`` table with ``command``,
    ``args``, ``env`` (literal values) and ``env_vars`` (names forwarded from Codex's own
    environment: Codex clears every other variable before it spawns a server).
``gemini``
    user scope (default): ``~/.gemini/settings.json``; project scope:
    ``.gemini/settings.json``. ``mcpServers.NAME`` with ``command``, ``args``, ``env``;
    Gemini CLI scrubs its environment for servers and expands ``$VAR`` in ``env``.
``opencode``
    user scope (default): ``$XDG_CONFIG_HOME/opencode/opencode.json``
    (``~/.config/opencode/opencode.json``); project scope: ``opencode.json`` at the
    workspace root. ``mcp.NAME`` with ``"type": "local"``, ``command`` (the whole argv as
    one array), ``environment`` and ``enabled``; opencode substitutes ``{env:VAR}`` in
    config values (empty when unset). A commented ``.jsonc`` file is treated as Gemini's.

The server must see the launch's variables (`wardian.memory.principal.MANAGED_ENV`) when
the host runs inside ``wardian agent launch``: each entry forwards them by the host's own
mechanism. Outside a launch the forwarded values are empty (or, for Gemini, the unexpanded
``$NAME``, which the server drops), so the server answers recall read-only and refuses
changes.

One entry serves every agent: installing for bob adds ``--agent bob`` to the entry and
keeps ada's; ``--uninstall --agent bob`` removes only bob (the entry goes with its last
agent); ``--uninstall`` alone removes the entry. Inside a launch the server acts for the
launch's own agent; the listed agents only pick the read-only view outside one (as the
hooks do), so one server per host is enough.

A user-scope entry is personal: it starts this interpreter by absolute path and embeds
``WARDIAN_HOME`` when it is set at install time. A project-scope file is meant to be
shared through version control, so its entry carries nothing of this machine: it runs
``wardian`` from PATH and forwards ``WARDIAN_HOME`` from the host's environment.

Only the entry named ``wardian`` is touched; every other server, key, comment and the
file's layout are kept: JSON is edited as text (only our member's characters change, in
the file's own indentation) and TOML with tomlkit, which keeps comments and formatting.
Install then uninstall gives back the file as it was, byte for byte; a file Wardian
created is deleted again (as is one that held nothing else). A ``wardian`` entry that
is not ours is never replaced. Files are rewritten atomically and only when something changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wardian.errors import ConflictError, UsageError, ValidationError
from wardian.memory.principal import MANAGED_ENV

__all__ = [
    "HOSTS",
    "SERVER_KEY",
    "InstallResult",
    "config_path",
    "entry_argv",
    "install",
    "listed_agents",
    "server_argv",
]

Host = Literal["claude-code", "codex", "gemini", "opencode"]
Scope = Literal["project", "user"]
HOSTS: tuple[Host, ...] = ("claude-code", "codex", "gemini", "opencode")
SERVER_KEY = "wardian"
DEFAULT_SCOPE: dict[str, Scope] = {"claude-code": "project", "codex": "user", "gemini": "user",
                                   "opencode": "user"}
_SERVERS_KEY: dict[str, str] = {"opencode": "mcp"}
"""The top-level member that holds the servers, where it is not ``mcpServers``."""
_DISPLAY = {"claude-code": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI",
            "opencode": "opencode"}
ENV_HOME = "WARDIAN_HOME"
PORTABLE_COMMAND = "wardian"
"""What a project-scope entry runs (found on the host's PATH)."""


@dataclass(frozen=True)
class InstallResult:
    """What `install` did.

    Attributes:
        host: ``claude-code``, ``codex``, ``gemini`` or ``opencode``.
        path: the configuration file.
        action: ``installed``, ``updated``, ``unchanged``, ``removed`` or ``absent``.
        entry: the server entry as written (None after uninstall).
        agents: the agents the entry lists now (empty after uninstall).
        scope: ``project`` or ``user``.
        notes: what the operator should know (a project entry whose command is not on
            PATH here).
    """

    host: str
    path: str
    action: str
    entry: dict[str, Any] | None
    agents: tuple[str, ...] = ()
    scope: str = "user"
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"host": self.host, "path": self.path, "action": self.action,
                "server": SERVER_KEY, "scope": self.scope, "agents": list(self.agents),
                "entry": self.entry, "notes": list(self.notes)}


def server_argv(agents: list[str] | tuple[str, ...] = (), *, portable: bool = False
                ) -> list[str]:
    """How a host starts the server: this interpreter, by absolute path, ``-P -m wardian
    mcp [--agent A]…``. The interpreter is the installing environment's (a venv's
    ``bin/python``, not resolved through its symlink), so the entry works from a shell
    where that environment is not active; ``-P`` keeps the host's working directory off
    ``sys.path``. With `portable`, ``wardian mcp [--agent A]…``: the command found on PATH.

    Raises:
        UsageError: Python cannot tell which interpreter runs it.
    """
    tail = [arg for agent in agents for arg in ("--agent", agent)]
    if portable:
        return [PORTABLE_COMMAND, "mcp", *tail]
    if not sys.executable:
        raise UsageError(
            "cannot tell which Python interpreter runs Wardian (sys.executable is empty)",
            hint="run `wardian mcp install` from the wardian command of a normal install",
        )
    return [os.path.abspath(sys.executable), "-P", "-m", "wardian", "mcp", *tail]


def config_path(host: str, scope: str | None = None, *, project: Path | None = None) -> Path:
    """The configuration file of `host` at `scope` (default per host, see module doc).

    Args:
        project: the workspace root for project scope (default: git root of the cwd).

    Raises:
        UsageError: unknown host or scope.
    """
    host = _check_host(host)
    where = scope or DEFAULT_SCOPE[host]
    if where not in ("project", "user"):
        raise UsageError(f"unknown scope {where!r}", hint="use --scope project or --scope user")
    if where == "project":
        from wardian.memory.models import default_workspace

        root = project or Path(default_workspace())
        return root / {"claude-code": ".mcp.json", "codex": ".codex/config.toml",
                       "gemini": ".gemini/settings.json", "opencode": "opencode.json"}[host]
    home = Path.home()
    if host == "claude-code":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else home) / ".claude.json"
    if host == "codex":
        base = os.environ.get("CODEX_HOME")
        return (Path(base) if base else home / ".codex") / "config.toml"
    if host == "opencode":
        base = os.environ.get("XDG_CONFIG_HOME")
        folder = (Path(base) if base else home / ".config") / "opencode"
        plain, commented = folder / "opencode.json", folder / "opencode.jsonc"
        return commented if commented.is_file() and not plain.is_file() else plain
    return home / ".gemini" / "settings.json"


def _check_host(host: str) -> Host:
    if host not in HOSTS:
        raise UsageError(f"unknown host {host!r}",
                         hint="use claude-code, codex, gemini or opencode")
    return host


def _home_value() -> str | None:
    value = os.environ.get(ENV_HOME, "").strip()
    return os.path.abspath(os.path.expanduser(value)) if value else None


def entry_for(host: str, agents: list[str] | tuple[str, ...] = (), *,
              portable: bool = False) -> dict[str, Any]:
    """The server entry `install` writes for `host` (see the module doc); `portable` for a
    project-scope file (no path of this machine in it)."""
    host = _check_host(host)
    command, *args = server_argv(agents, portable=portable)
    home = None if portable else _home_value()
    forwarded = [*MANAGED_ENV, *([] if home else [ENV_HOME])]
    env: dict[str, str] = {ENV_HOME: home} if home else {}
    if host == "codex":
        return {"command": command, "args": args, "env": env, "env_vars": forwarded}
    if host == "claude-code":
        env.update({name: f"${{{name}:-}}" for name in forwarded})
        return {"type": "stdio", "command": command, "args": args, "env": env}
    if host == "opencode":
        env.update({name: f"{{env:{name}}}" for name in forwarded})
        return {"type": "local", "command": [command, *args], "environment": env,
                "enabled": True}
    env.update({name: f"${name}" for name in forwarded})
    return {"command": command, "args": args, "env": env}


def entry_argv(entry: Any) -> list[str]:
    """The command line an entry starts: ``command`` + ``args``, or opencode's one
    ``command`` array; empty for what is not an entry."""
    if not isinstance(entry, dict):
        return []
    command = entry.get("command", "")
    head = [str(c) for c in command] if isinstance(command, list) else [str(command)]
    args = entry.get("args") or []
    return [*head, *(map(str, args) if isinstance(args, list) else [])]


def _is_ours(entry: Any) -> bool:
    """Whether an existing ``wardian`` entry starts this server (``… wardian mcp …``)."""
    argv = entry_argv(entry)
    return "mcp" in argv and any("wardian" in part for part in argv)


def listed_agents(entry: Any) -> tuple[str, ...]:
    """The agents an existing entry of ours passes (``--agent A``, ``--agent=A``)."""
    args = entry_argv(entry)[1:]
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--agent" and index + 1 < len(args):
            out.append(args[index + 1])
        elif arg.startswith("--agent="):
            out.append(arg.split("=", 1)[1])
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class _Plan:
    """What one install or uninstall asks for."""

    host: Host
    scope: Scope
    agents: tuple[str, ...]
    uninstall: bool

    def keeps(self, existing: tuple[str, ...]) -> bool:
        """Whether this uninstall names agents the entry does not list (nothing changes)."""
        return self.uninstall and bool(self.agents) and not set(self.agents) & set(existing)

    def agents_after(self, existing: tuple[str, ...]) -> tuple[str, ...] | None:
        """The agents the entry lists afterwards; None: the entry goes."""
        if not self.uninstall:
            return tuple(dict.fromkeys([*existing, *self.agents]))
        if not self.agents:
            return None
        left = tuple(a for a in existing if a not in self.agents)
        return left or None

    def entry(self, agents: tuple[str, ...]) -> dict[str, Any]:
        return entry_for(self.host, agents, portable=self.scope == "project")

    def result(self, path: Path, action: str, entry: dict[str, Any] | None,
               agents: tuple[str, ...] = ()) -> InstallResult:
        notes: list[str] = []
        if entry is not None and self.scope == "project":
            import shutil

            if shutil.which(PORTABLE_COMMAND) is None:
                notes.append(
                    f"`{PORTABLE_COMMAND}` is not on PATH here, so the host cannot start "
                    "this project entry on this machine: put Wardian's bin folder on PATH, "
                    "or install with --scope user (a personal file naming this interpreter)")
        return InstallResult(self.host, str(path), action, entry, agents, self.scope,
                             tuple(notes))


def install(
    host: str, *, agents: list[str] | tuple[str, ...] = (), uninstall: bool = False,
    scope: str | None = None, path: Path | None = None,
) -> InstallResult:
    """Add (or remove) the ``wardian`` MCP server entry in `host`'s configuration, or add
    agents to it (or remove them from it); see the module doc.

    Args:
        agents: added as ``--agent A`` (read-only recall outside a launch) to the ones the
            entry lists already; with `uninstall`, only these are removed.
        uninstall: remove our entry (or only `agents` from it) instead.
        scope: ``project`` or ``user`` (default per host). A project entry is portable.
        path: the file to edit instead of the host's default (tests, unusual layouts).

    Raises:
        UsageError: unknown host or scope. ValidationError: the file is not valid JSON/TOML
            or its servers table has the wrong type (the file is left untouched).
        ConflictError (exit 4): a ``wardian`` entry that does not start ``wardian mcp``.
    """
    checked = _check_host(host)
    where = scope or DEFAULT_SCOPE[checked]
    target = Path(path) if path else config_path(checked, where)
    plan = _Plan(checked, "project" if where == "project" else "user",
                 tuple(dict.fromkeys(agents)), uninstall)
    if checked == "codex":
        return _install_toml(target, plan)
    return _install_json(target, plan)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}",
                         hint="fix the file by hand; Wardian will not overwrite it") from exc


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.wardian-tmp")
    tmp.write_text(text, encoding="utf-8")
    with contextlib.suppress(FileNotFoundError):
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)


def _conflict(path: Path, found: Any) -> ConflictError:
    return ConflictError(
        f"{path} already has an MCP server named {SERVER_KEY!r} that does not run "
        f"`wardian mcp` ({json.dumps(found, ensure_ascii=False)[:120]})",
        hint="rename or remove that entry by hand, then install again",
    )


def _install_json(path: Path, plan: _Plan) -> InstallResult:
    key = _SERVERS_KEY.get(plan.host, "mcpServers")
    text = _read(path)
    if text is None:
        if plan.uninstall:
            return plan.result(path, "absent", None)
        entry = plan.entry(plan.agents)
        _write(path, json.dumps({key: {SERVER_KEY: entry}}, indent=2,
                                ensure_ascii=False) + "\n")
        return plan.result(path, "installed", entry, plan.agents)
    if plan.host in ("gemini", "opencode"):
        _refuse_commented(text, path, plan)
    doc = _JsonText(text, path)
    servers = doc.member(doc.root, key)
    if servers is not None and text[servers.value_start] != "{":
        raise ValidationError("expected an object", path=key, source=str(path),
                              hint="fix the file by hand; Wardian will not overwrite it")
    ours = doc.member(servers.value_start, SERVER_KEY) if servers else None
    existing = json.loads(text[ours.value_start:ours.value_end]) if ours else None
    if ours is not None and not _is_ours(existing):
        raise _conflict(path, existing)
    if plan.uninstall and (ours is None or servers is None):
        return plan.result(path, "absent", None)
    if plan.keeps(listed_agents(existing)):
        return plan.result(path, "unchanged", existing, listed_agents(existing))
    agents = plan.agents_after(listed_agents(existing))
    if agents is None:
        assert ours is not None and servers is not None
        out = doc.without(servers.value_start, ours)
        emptied = _JsonText(out, path)
        left = emptied.member(emptied.root, key)
        if left is not None and not emptied.members(left.value_start):
            out = emptied.without(emptied.root, left)
        if not json.loads(out):
            path.unlink()
        else:
            _write(path, out)
        return plan.result(path, "removed", None)
    entry = plan.entry(agents)
    if existing == entry:
        return plan.result(path, "unchanged", entry, agents)
    if ours is not None:
        out = doc.replaced(ours, entry)
    elif servers is not None:
        out = doc.with_member(servers.value_start, SERVER_KEY, entry)
    else:
        out = doc.with_member(doc.root, key, {SERVER_KEY: entry})
    _write(path, out)
    return plan.result(path, "updated" if ours else "installed", entry, agents)


def _refuse_commented(text: str, path: Path, plan: _Plan) -> None:
    """Refuse a settings file that is valid only with its comments stripped (Gemini CLI
    and opencode accept comments; a rewrite would lose them), saying exactly what to put
    in it.

    Raises:
        ValidationError: `text` has comments (nothing is written).
    """
    from wardian._jsonc import strip_comments, strip_trailing_commas

    try:
        json.loads(text)
        return
    except json.JSONDecodeError:
        pass
    plain = strip_comments(text)
    if plan.host == "opencode":  # JSONC: trailing commas are allowed as well
        plain = strip_trailing_commas(plain)
    try:
        data = json.loads(plain)
    except json.JSONDecodeError:
        return  # not JSON at all: `_JsonText` says where
    key = _SERVERS_KEY.get(plan.host, "mcpServers")
    servers = data.get(key) if isinstance(data, dict) else None
    existing = servers.get(SERVER_KEY) if isinstance(servers, dict) else None
    if existing is not None and not _is_ours(existing):
        raise _conflict(path, existing)
    agents = plan.agents_after(listed_agents(existing))
    if plan.uninstall and existing is None:
        return
    what = (f'remove the "{SERVER_KEY}" member from "{key}"' if agents is None else
            f'put this member in "{key}" (replacing a "{SERVER_KEY}" one there):\n'
            f'"{SERVER_KEY}": ' + json.dumps(plan.entry(agents), indent=2, ensure_ascii=False))
    raise ValidationError(
        f"{path} has comments, which {_DISPLAY[plan.host]} accepts but a rewrite would "
        "lose, so Wardian does not edit it", source=str(path), hint=what)


@dataclass(frozen=True)
class _Member:
    """One ``"key": value`` of a JSON object, as character offsets into the text."""

    key: str
    key_start: int
    value_start: int
    value_end: int


class _JsonText:
    """A JSON document edited as text, so that everything outside the edited member keeps
    its bytes (Python's json module would re-indent the whole file).

    Raises:
        ValidationError: not a JSON object (the file is left untouched).
    """

    _WS = " \t\r\n"

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"not valid JSON ({exc.msg})", source=f"{path}:{exc.lineno}",
                hint="fix the file by hand; Wardian will not overwrite it") from exc
        if not isinstance(value, dict):
            raise ValidationError("expected a JSON object", source=str(path),
                                  hint="fix the file by hand; Wardian will not overwrite it")
        self.root = self._skip(0)

    def _skip(self, index: int) -> int:
        while index < len(self.text) and self.text[index] in self._WS:
            index += 1
        return index

    def members(self, start: int) -> list[_Member]:
        """The members of the object whose ``{`` is at `start`."""
        from json.decoder import scanstring  # type: ignore[attr-defined]

        decoder = json.JSONDecoder()
        out: list[_Member] = []
        index = self._skip(start + 1)
        while self.text[index] != "}":
            key, after = scanstring(self.text, index + 1)
            colon = self._skip(after)
            value_start = self._skip(colon + 1)
            _, value_end = decoder.raw_decode(self.text, value_start)
            out.append(_Member(key, index, value_start, value_end))
            index = self._skip(value_end)
            if self.text[index] == ",":
                index = self._skip(index + 1)
        return out

    def member(self, start: int, key: str) -> _Member | None:
        """The last member named `key` (the one JSON parsers keep) of the object at `start`."""
        found = [m for m in self.members(start) if m.key == key]
        return found[-1] if found else None

    def _indent_of(self, index: int) -> str:
        line_start = self.text.rfind("\n", 0, index) + 1
        line = self.text[line_start:index]
        return line[:len(line) - len(line.lstrip(" \t"))]

    def _unit(self) -> str:
        match = re.search(r"\n([ \t]+)\S", self.text)
        return match.group(1) if match else "  "

    def _dump(self, value: Any, indent: str) -> str:
        unit = self._unit()
        dumped = json.dumps(value, indent=len(unit) if set(unit) == {" "} else unit,
                            ensure_ascii=False)
        return dumped.replace("\n", "\n" + indent)

    def with_member(self, start: int, key: str, value: Any) -> str:
        """The text with ``"key": value`` appended to the object at `start`."""
        existing = self.members(start)
        if existing:
            last = existing[-1]
            indent = self._indent_of(last.key_start)
            separator = "\n" + indent if indent or "\n" in self.text else " "
            addition = f",{separator}{json.dumps(key)}: {self._dump(value, indent)}"
            return self.text[:last.value_end] + addition + self.text[last.value_end:]
        outer = self._indent_of(start)
        indent = outer + self._unit()
        close = self.text.index("}", start)
        body = f"\n{indent}{json.dumps(key)}: {self._dump(value, indent)}\n{outer}"
        return self.text[:start + 1] + body + self.text[close:]

    def replaced(self, member: _Member, value: Any) -> str:
        """The text with `member`'s value replaced by `value`."""
        indent = self._indent_of(member.key_start)
        return (self.text[:member.value_start] + self._dump(value, indent)
                + self.text[member.value_end:])

    def without(self, start: int, member: _Member) -> str:
        """The text without `member` of the object at `start` (and its separating comma):
        exactly what `with_member` added, when it was the last member."""
        members = self.members(start)
        position = members.index(member)
        if len(members) == 1:
            close = self.text.index("}", member.value_end)
            return self.text[:start + 1] + self.text[close:]
        if position == len(members) - 1:
            previous = members[position - 1]
            return self.text[:previous.value_end] + self.text[member.value_end:]
        return self.text[:member.key_start] + self.text[members[position + 1].key_start:]


def _install_toml(path: Path, plan: _Plan) -> InstallResult:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = _read(path)
    if text is None and plan.uninstall:
        return plan.result(path, "absent", None)
    try:
        doc = tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise ValidationError(f"not valid TOML ({exc})", source=str(path),
                              hint="fix the file by hand; Wardian will not overwrite it"
                              ) from exc
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise ValidationError("expected a table", path="mcp_servers", source=str(path),
                              hint="fix the file by hand; Wardian will not overwrite it")
    existing = servers.get(SERVER_KEY) if servers is not None else None
    plain: Any = existing.unwrap() if hasattr(existing, "unwrap") else existing  # type: ignore[union-attr]
    if existing is not None and not _is_ours(plain):
        raise _conflict(path, plain)
    if plan.uninstall and existing is None:
        return plan.result(path, "absent", None)
    if plan.keeps(listed_agents(plain)):
        return plan.result(path, "unchanged", plain, listed_agents(plain))
    agents = plan.agents_after(listed_agents(plain))
    if agents is None:
        assert servers is not None
        del servers[SERVER_KEY]
        dropped = not servers
        if dropped:
            del doc["mcp_servers"]
        out = tomlkit.dumps(doc)
        if dropped and out.endswith("\n\n"):  # the blank line tomlkit put before our table
            out = out.rstrip("\n") + "\n"
        if not out.strip() and text is not None:
            path.unlink()
        else:
            _write(path, out)
        return plan.result(path, "removed", None)
    entry = plan.entry(agents)
    if existing is not None and plain == entry:
        return plan.result(path, "unchanged", entry, agents)
    table = tomlkit.table()
    for key, value in entry.items():
        table.add(key, tomlkit.inline_table() if key == "env" and not value else value)
        if key == "env" and value:
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
    table.add(tomlkit.nl())  # a blank line before whatever table follows ours
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add("mcp_servers", servers)
    servers[SERVER_KEY] = table
    _write(path, tomlkit.dumps(doc))
    return plan.result(path, "updated" if existing is not None else "installed", entry,
                       agents)
