"""`wardian mcp install HOST --agent A` for several agents keeps every agent's server, and
a project-scope entry (the file a team shares through version control) names no path of
this machine."""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from tests.conftest import invoke
from tests.mcp.conftest import add_agent, capability_env, session, structured


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME (hosts' user configs live there)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree as the current directory."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def _install(cli: CliRunner, *args: str) -> dict[str, Any]:
    result = invoke(cli, "mcp", "install", *args, "--json")
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


HOSTS = {"codex": ".codex/config.toml", "gemini": ".gemini/settings.json",
         "claude-code": ".claude.json"}


def _entry(host: str, path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    if host == "codex":
        found: dict[str, Any] | None = tomllib.loads(path.read_text()).get(
            "mcp_servers", {}).get("wardian")
    else:
        found = json.loads(path.read_text()).get("mcpServers", {}).get("wardian")
    return found


def _agents(entry: dict[str, Any] | None) -> list[str]:
    assert entry is not None
    args = entry["args"]
    return [args[i + 1] for i, arg in enumerate(args) if arg == "--agent"]


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_second_agents_install_keeps_the_first_agents_server(
    cli: CliRunner, home: Path, host: str
) -> None:
    config = home / HOSTS[host]
    config.parent.mkdir(exist_ok=True)
    original = '{"theme": "dark"}\n' if host != "codex" else 'model = "o4"\n'
    config.write_text(original)
    assert _install(cli, host, "--scope", "user", "--agent", "ada")["action"] == "installed"
    second = _install(cli, host, "--scope", "user", "--agent", "bob")
    assert second["action"] == "updated"
    assert second["agents"] == ["ada", "bob"]
    assert _agents(_entry(host, config)) == ["ada", "bob"]
    # Reinstalling either agent changes nothing.
    assert _install(cli, host, "--scope", "user", "--agent", "ada")["action"] == "unchanged"
    assert _install(cli, host, "--scope", "user", "--agent", "bob")["action"] == "unchanged"
    # An install without --agent keeps the agents too.
    assert _install(cli, host, "--scope", "user")["action"] == "unchanged"
    # Uninstalling one agent removes only that agent.
    gone = _install(cli, host, "--scope", "user", "--uninstall", "--agent", "bob")
    assert gone["action"] == "updated"
    assert _agents(_entry(host, config)) == ["ada"]
    # Naming an agent the entry does not list leaves it alone.
    other = _install(cli, host, "--scope", "user", "--uninstall", "--agent", "carol")
    assert other["action"] == "unchanged"
    assert _agents(_entry(host, config)) == ["ada"]
    # The last agent takes the entry with it: the file is as it was.
    assert _install(cli, host, "--scope", "user", "--uninstall", "--agent", "ada")[
        "action"] == "removed"
    assert config.read_text() == original


def test_uninstall_without_agent_removes_the_whole_entry(cli: CliRunner, home: Path) -> None:
    _install(cli, "gemini", "--agent", "ada")
    _install(cli, "gemini", "--agent", "bob")
    assert _install(cli, "gemini", "--uninstall")["action"] == "removed"
    assert not (home / ".gemini" / "settings.json").exists()


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("host,relative", [("claude-code", ".mcp.json"),
                                           ("codex", ".codex/config.toml"),
                                           ("gemini", ".gemini/settings.json")])
def test_a_project_entry_names_no_path_of_this_machine(
    cli: CliRunner, home: Path, project: Path, host: str, relative: str
) -> None:
    doc = _install(cli, host, "--scope", "project", "--agent", "ada")
    path = project / relative
    assert Path(doc["path"]) == path.resolve()
    assert doc["scope"] == "project"
    text = path.read_text()
    for machine in (sys.executable, os.path.abspath(sys.executable), str(home),
                    os.environ["WARDIAN_HOME"], str(project.parent)):
        assert machine not in text, (machine, text)
    entry = _entry(host, path)
    assert entry is not None
    assert entry["command"] == "wardian"
    assert entry["args"] == ["mcp", "--agent", "ada"]
    assert not any(os.path.isabs(s) for s in _strings(entry)), entry
    # WARDIAN_HOME is forwarded from the host's environment, never embedded.
    if host == "codex":
        assert "WARDIAN_HOME" in entry["env_vars"] and "WARDIAN_HOME" not in entry["env"]
    elif host == "claude-code":
        assert entry["env"]["WARDIAN_HOME"] == "${WARDIAN_HOME:-}"
    else:
        assert entry["env"]["WARDIAN_HOME"] == "$WARDIAN_HOME"


def test_claude_code_default_scope_is_the_portable_project_file(
    cli: CliRunner, home: Path, project: Path
) -> None:
    doc = _install(cli, "claude-code")
    assert doc["path"] == str(project.resolve() / ".mcp.json")
    assert _entry("claude-code", project / ".mcp.json") == doc["entry"]
    assert doc["entry"]["command"] == "wardian"


def test_a_user_entry_still_names_this_interpreter(cli: CliRunner, home: Path) -> None:
    doc = _install(cli, "claude-code", "--scope", "user")
    assert doc["entry"]["command"] == os.path.abspath(sys.executable)
    assert doc["entry"]["env"]["WARDIAN_HOME"] == os.environ["WARDIAN_HOME"]
    assert doc["notes"] == []


def test_the_install_says_when_wardian_is_not_on_path(
    cli: CliRunner, home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = invoke(cli, "mcp", "install", "claude-code")
    assert result.exit_code == 0, result.output
    assert "`wardian` is not on PATH here" in result.stdout
    assert "--scope user" in result.stdout


def _shim(folder: Path) -> Path:
    """A `wardian` on PATH that runs this interpreter's Wardian (what a normal install
    puts there)."""
    folder.mkdir()
    script = folder / "wardian"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -P -m wardian "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def test_the_portable_project_entry_starts_the_server_and_acts_for_the_launch(
    cli: CliRunner, home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = _shim(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    ada = add_agent("ada")
    bob = add_agent("bob")
    _install(cli, "claude-code", "--agent", "ada")
    doc = _install(cli, "claude-code", "--agent", "bob")
    assert doc["notes"] == []
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["wardian"]
    # Claude Code expands ${VAR:-} from its own environment: the launch's variables and
    # the operator's WARDIAN_HOME.
    from tests.mcp.test_mcp_install import _expand_claude

    launch = {**os.environ, **capability_env(bob)}
    env = {k: _expand_claude(v, launch) for k, v in entry["env"].items()}
    env["PATH"] = os.environ["PATH"]
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    async def main() -> None:
        async with session(env, project, command=entry["command"],
                           args=entry["args"]) as client:
            saved = await client.call_tool("memory_save", {"text": "Bob's launch fact",
                                                           "evidence": "the test said so"})
            assert not saved.is_error, saved
            assert structured(saved)["record"]["agent_id"] == bob

    anyio.run(main)
    assert ada != bob


COMMENTED = """{
  // Gemini accepts comments in its settings
  "theme": "GitHub"
}
"""


def test_a_commented_gemini_settings_file_is_left_alone_with_the_entry_to_add(
    cli: CliRunner, home: Path
) -> None:
    config = home / ".gemini" / "settings.json"
    config.parent.mkdir()
    config.write_text(COMMENTED)
    result = invoke(cli, "mcp", "install", "gemini", "--agent", "ada")
    assert result.exit_code == 2, result.output
    assert "has comments" in result.stderr and "not valid JSON" not in result.stderr
    assert config.read_text() == COMMENTED
    member = result.stderr[result.stderr.index('"wardian": {') + len('"wardian": '):]
    entry = json.loads(member[:member.index("\n}") + 2])
    assert entry["args"][-2:] == ["--agent", "ada"]
    assert entry["command"] == os.path.abspath(sys.executable)
