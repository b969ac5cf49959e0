"""`wardian mcp install claude-code|codex|gemini|opencode`: reversible edits of each host's MCP
config that leave every other server alone, and a server started exactly as installed."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

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
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return path


CODEX = """# my codex settings
model = "o4"  # keep this comment

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]

[profiles.fast]
model = "mini"
"""

GEMINI = """{
  "theme": "GitHub",
  "mcpServers": {
    "search": {
      "command": "search-mcp",
      "args": ["--fast"]
    }
  }
}
"""


def _install(cli: CliRunner, *args: str) -> dict[str, object]:
    result = invoke(cli, "mcp", "install", *args, "--json")
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_codex_install_keeps_the_file_and_uninstall_restores_it_byte_for_byte(
    cli: CliRunner, home: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX)
    assert _install(cli, "codex", "--agent", "ada")["action"] == "installed"
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-server"]}
    ours = parsed["mcp_servers"]["wardian"]
    assert ours["args"][-4:] == ["wardian", "mcp", "--agent", "ada"]
    assert "WARDIAN_CAPABILITY" in ours["env_vars"]
    assert ours["env"]["WARDIAN_HOME"] == os.environ["WARDIAN_HOME"]
    assert "# keep this comment" in config.read_text()
    assert parsed["profiles"] == {"fast": {"model": "mini"}}
    assert _install(cli, "codex", "--agent", "ada")["action"] == "unchanged"
    assert _install(cli, "codex", "--uninstall")["action"] == "removed"
    assert config.read_text() == CODEX
    assert _install(cli, "codex", "--uninstall")["action"] == "absent"


@pytest.mark.parametrize("host,relative", [("gemini", ".gemini/settings.json"),
                                           ("claude-code", ".claude.json")])
def test_json_hosts_keep_other_servers_and_round_trip(
    cli: CliRunner, home: Path, host: str, relative: str
) -> None:
    config = home / relative
    config.parent.mkdir(exist_ok=True)
    config.write_text(GEMINI)
    assert _install(cli, host, "--scope", "user")["action"] == "installed"
    data = json.loads(config.read_text())
    assert data["theme"] == "GitHub"
    assert data["mcpServers"]["search"] == {"command": "search-mcp", "args": ["--fast"]}
    assert data["mcpServers"]["wardian"]["args"][-2:] == ["wardian", "mcp"]
    assert _install(cli, host, "--scope", "user", "--uninstall")["action"] == "removed"
    assert config.read_text() == GEMINI


def test_claude_code_project_file_is_created_and_removed_again(
    cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    doc = _install(cli, "claude-code")
    assert doc["path"] == str(project.resolve() / ".mcp.json")
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["wardian"]
    assert entry["type"] == "stdio"
    assert entry["env"]["WARDIAN_CAPABILITY"] == "${WARDIAN_CAPABILITY:-}"
    _install(cli, "claude-code", "--uninstall")
    assert not (project / ".mcp.json").exists()


def test_a_foreign_wardian_entry_is_never_replaced(cli: CliRunner, home: Path) -> None:
    config = home / ".gemini" / "settings.json"
    config.parent.mkdir()
    original = '{"mcpServers": {"wardian": {"command": "something-else"}}}'
    config.write_text(original)
    result = invoke(cli, "mcp", "install", "gemini")
    assert result.exit_code == 4
    assert "does not run `wardian mcp`" in result.stderr
    assert config.read_text() == original


def test_invalid_config_is_left_untouched(cli: CliRunner, home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("model = [unclosed\n")
    result = invoke(cli, "mcp", "install", "codex")
    assert result.exit_code == 2
    assert "not valid TOML" in result.stderr
    assert config.read_text() == "model = [unclosed\n"


def _expand_claude(value: str, environ: dict[str, str]) -> str:
    """Claude Code's ``${VAR:-default}`` expansion, for the started-as-configured test."""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}",
                  lambda m: environ.get(m.group(1), m.group(2) or ""), value)


@pytest.mark.parametrize("host", ["codex", "claude-code"])
def test_server_starts_exactly_as_the_installed_config_says(
    cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    agent_id = add_agent("ada")
    launch = capability_env(agent_id)  # what the host inherited from `agent launch`
    if host == "claude-code":  # the project entry runs `wardian` from PATH
        from tests.mcp.test_mcp_install_agents import _shim

        bin_dir = _shim(tmp_path / "bin")
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    doc = _install(cli, host)
    path = Path(str(doc["path"]))
    if host == "codex":
        entry = tomllib.loads(path.read_text())["mcp_servers"]["wardian"]
        # Codex clears the environment, then adds env_vars (forwarded) and env (literal).
        env = {name: launch[name] for name in entry["env_vars"] if name in launch}
        env.update(entry["env"])
    else:
        entry = json.loads(path.read_text())["mcpServers"]["wardian"]
        host_env = {**os.environ, **launch}  # Claude Code expands from its environment
        env = {k: _expand_claude(v, host_env) for k, v in entry["env"].items()}
        env["PATH"] = os.environ["PATH"]
    if os.environ.get("PYTHONPATH"):  # only when testing a source tree that is not installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    async def main() -> None:
        async with session(env, project, command=entry["command"],
                           args=entry["args"]) as client:
            saved = await client.call_tool("memory_save", {"text": "Started as configured",
                                                           "evidence": "the test said so"})
            assert not saved.is_error, saved
            assert structured(saved)["row"] == "Memory saved · This agent"
            assert structured(saved)["record"]["agent_id"] == agent_id

    anyio.run(main)


OPENCODE = """{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "tickets": {"type": "remote", "url": "http://127.0.0.1:9/mcp", "enabled": false}
  }
}
"""


def test_opencode_entry_is_one_local_command_and_round_trips(cli: CliRunner,
                                                             home: Path) -> None:
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(OPENCODE)
    assert _install(cli, "opencode", "--agent", "ada")["action"] == "installed"
    assert _install(cli, "opencode", "--agent", "bob")["action"] == "updated"
    data = json.loads(config.read_text())
    assert data["model"] == "anthropic/claude-sonnet-4-5"
    assert data["mcp"]["tickets"]["url"] == "http://127.0.0.1:9/mcp"
    ours = data["mcp"]["wardian"]
    assert ours["type"] == "local" and ours["enabled"] is True
    assert ours["command"][-6:] == ["wardian", "mcp", "--agent", "ada", "--agent", "bob"]
    assert ours["environment"]["WARDIAN_CAPABILITY"] == "{env:WARDIAN_CAPABILITY}"
    assert "args" not in ours  # opencode takes the whole argv in `command`
    assert _install(cli, "opencode", "--uninstall", "--agent", "ada")["agents"] == ["bob"]
    assert _install(cli, "opencode", "--uninstall")["action"] == "removed"
    assert config.read_text() == OPENCODE


def test_opencode_config_folder_follows_xdg_and_project_scope_names_no_path(
    cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    doc = _install(cli, "opencode")
    assert doc["path"] == str(tmp_path / "xdg" / "opencode" / "opencode.json")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    doc = _install(cli, "opencode", "--scope", "project", "--agent", "ada")
    assert doc["path"] == str(project.resolve() / "opencode.json")
    entry = json.loads((project / "opencode.json").read_text())["mcp"]["wardian"]
    assert entry["command"] == ["wardian", "mcp", "--agent", "ada"]
    assert entry["environment"]["WARDIAN_HOME"] == "{env:WARDIAN_HOME}"
    assert str(home) not in json.dumps(entry) and str(tmp_path) not in json.dumps(entry)


def test_a_commented_opencode_jsonc_is_not_rewritten_and_the_member_is_printed(
    cli: CliRunner, home: Path
) -> None:
    config = home / ".config" / "opencode" / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    original = '{\n  // my model\n  "model": "anthropic/claude-sonnet-4-5",\n}\n'
    config.write_text(original)
    result = invoke(cli, "mcp", "install", "opencode", "--agent", "ada")
    assert result.exit_code == 2, result.output
    assert "has comments, which opencode accepts" in result.stderr
    assert '"mcp"' in result.stderr and '"type": "local"' in result.stderr
    assert config.read_text() == original
