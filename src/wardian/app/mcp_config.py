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

The server must see the launch's variables (`wardian.memory.principal.MANAGED_ENV`) when
the host runs inside ``wardian agent launch``: each entry forwards them by the host's own
mechanism, and embeds ``WARDIAN_HOME`` when it is set at install time. Outside a launch
the forwarded values are empty (or, for Gemini, the unexpanded ``$NAME``, which the server
drops), so the server answers recall read-only and refuses changes.

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
    "install",
    "server_argv",
]

Host = Literal["claude-code", "codex", "gemini"]
Scope = Literal["project", "user"]
HOSTS: tuple[Host, ...] = ("claude-code", "codex", "gemini")
SERVER_KEY = "wardian"
DEFAULT_SCOPE: dict[str, Scope] = {"claude-code": "project", "codex": "user", "gemini": "user"}
ENV_HOME = "WARDIAN_HOME"


@dataclass(frozen=True)
class InstallResult:
    """What `install` did.

    Attributes:
        host: ``claude-code``, ``codex`` or ``gemini``.
        path: the configuration file.
        action: ``installed``, ``updated``, ``unchanged``, ``removed`` or ``absent``.
        entry: the server entry as written (None after uninstall).
    """

    host: str
    path: str
    action: str
    entry: dict[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"host": self.host, "path": self.path, "action": self.action,
                "server": SERVER_KEY, "entry": self.entry}


def server_argv(agent: str | None = None) -> list[str]:
    """How a host starts the server: this interpreter, by absolute path, ``-P -m wardian
    mcp [--agent A]``. The interpreter is the installing environment's (a venv's
    ``bin/python``, not resolved through its symlink), so the entry works from a shell
    where that environment is not active; ``-P`` keeps the host's working directory off
    ``sys.path``.

    Raises:
        UsageError: Python cannot tell which interpreter runs it.
    """
    if not sys.executable:
        raise UsageError(
            "cannot tell which Python interpreter runs Wardian (sys.executable is empty)",
            hint="run `wardian mcp install` from the wardian command of a normal install",
        )
    argv = [os.path.abspath(sys.executable), "-P", "-m", "wardian", "mcp"]
    if agent:
        argv += ["--agent", agent]
    return argv


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
                       "gemini": ".gemini/settings.json"}[host]
    home = Path.home()
    if host == "claude-code":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else home) / ".claude.json"
    if host == "codex":
        base = os.environ.get("CODEX_HOME")
        return (Path(base) if base else home / ".codex") / "config.toml"
    return home / ".gemini" / "settings.json"


def _check_host(host: str) -> Host:
    if host not in HOSTS:
        raise UsageError(f"unknown host {host!r}", hint="use claude-code, codex or gemini")
    return host


def _home_value() -> str | None:
    value = os.environ.get(ENV_HOME, "").strip()
    return os.path.abspath(os.path.expanduser(value)) if value else None


def entry_for(host: str, agent: str | None = None) -> dict[str, Any]:
    """The server entry `install` writes for `host` (see the module doc)."""
    host = _check_host(host)
    command, *args = server_argv(agent)
    home = _home_value()
    forwarded = [*MANAGED_ENV, *([] if home else [ENV_HOME])]
    env: dict[str, str] = {ENV_HOME: home} if home else {}
    if host == "codex":
        return {"command": command, "args": args, "env": env, "env_vars": forwarded}
    if host == "claude-code":
        env.update({name: f"${{{name}:-}}" for name in forwarded})
        return {"type": "stdio", "command": command, "args": args, "env": env}
    env.update({name: f"${name}" for name in forwarded})
    return {"command": command, "args": args, "env": env}


def _is_ours(entry: Any) -> bool:
    """Whether an existing ``wardian`` entry starts this server (``… wardian mcp …``)."""
    if not isinstance(entry, dict):
        return False
    argv = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return "mcp" in argv and any("wardian" in part for part in argv)


def install(
    host: str, *, agent: str | None = None, uninstall: bool = False, scope: str | None = None,
    path: Path | None = None,
) -> InstallResult:
    """Add (or remove) the ``wardian`` MCP server entry in `host`'s configuration.

    Args:
        agent: embedded as ``--agent A`` (read-only recall outside a launch).
        uninstall: remove our entry instead.
        scope: ``project`` or ``user`` (default per host).
        path: the file to edit instead of the host's default (tests, unusual layouts).

    Raises:
        UsageError: unknown host or scope. ValidationError: the file is not valid JSON/TOML
            or its servers table has the wrong type (the file is left untouched).
        ConflictError (exit 4): a ``wardian`` entry that does not start ``wardian mcp``.
    """
    host = _check_host(host)
    target = Path(path) if path else config_path(host, scope)
    if host == "codex":
        return _install_toml(target, host, agent, uninstall)
    return _install_json(target, host, agent, uninstall)


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


def _install_json(path: Path, host: str, agent: str | None, uninstall: bool) -> InstallResult:
    text = _read(path)
    if text is None:
        if uninstall:
            return InstallResult(host, str(path), "absent", None)
        entry = entry_for(host, agent)
        _write(path, json.dumps({"mcpServers": {SERVER_KEY: entry}}, indent=2,
                                ensure_ascii=False) + "\n")
        return InstallResult(host, str(path), "installed", entry)
    doc = _JsonText(text, path)
    servers = doc.member(doc.root, "mcpServers")
    if servers is not None and text[servers.value_start] != "{":
        raise ValidationError("expected an object", path="mcpServers", source=str(path),
                              hint="fix the file by hand; Wardian will not overwrite it")
    ours = doc.member(servers.value_start, SERVER_KEY) if servers else None
    existing = json.loads(text[ours.value_start:ours.value_end]) if ours else None
    if ours is not None and not _is_ours(existing):
        raise _conflict(path, existing)
    if uninstall:
        if ours is None or servers is None:
            return InstallResult(host, str(path), "absent", None)
        out = doc.without(servers.value_start, ours)
        emptied = _JsonText(out, path)
        left = emptied.member(emptied.root, "mcpServers")
        if left is not None and not emptied.members(left.value_start):
            out = emptied.without(emptied.root, left)
        if not json.loads(out):
            path.unlink()
        else:
            _write(path, out)
        return InstallResult(host, str(path), "removed", None)
    entry = entry_for(host, agent)
    if existing == entry:
        return InstallResult(host, str(path), "unchanged", entry)
    if ours is not None:
        out = doc.replaced(ours, entry)
    elif servers is not None:
        out = doc.with_member(servers.value_start, SERVER_KEY, entry)
    else:
        out = doc.with_member(doc.root, "mcpServers", {SERVER_KEY: entry})
    _write(path, out)
    return InstallResult(host, str(path), "updated" if ours else "installed", entry)


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


def _install_toml(path: Path, host: str, agent: str | None, uninstall: bool) -> InstallResult:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = _read(path)
    if text is None and uninstall:
        return InstallResult(host, str(path), "absent", None)
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
    if existing is not None and not _is_ours(existing):
        raise _conflict(path, existing.unwrap() if hasattr(existing, "unwrap") else existing)
    if uninstall:
        if existing is None:
            return InstallResult(host, str(path), "absent", None)
        assert servers is not None
        del servers[SERVER_KEY]
        if not servers:
            del doc["mcp_servers"]
        out = tomlkit.dumps(doc)
        if not out.strip() and text is not None:
            path.unlink()
        else:
            _write(path, out)
        return InstallResult(host, str(path), "removed", None)
    entry = entry_for(host, agent)
    if existing is not None and existing.unwrap() == entry:
        return InstallResult(host, str(path), "unchanged", entry)
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
    return InstallResult(host, str(path), "updated" if existing is not None else "installed",
                         entry)
