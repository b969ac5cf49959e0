"""Wardian's opencode plugin file (`wardian hooks install opencode`): agents are added and
removed one by one, the file goes with its last agent, a file that is not Wardian's is
never overwritten, the rendered plugin is valid JavaScript that runs the installed hook
commands, and the SessionStart/SessionEnd hooks answer and record for host ``opencode``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.hook_install import installed_hooks
from wardian.runtime.opencode_plugin import MARKER, plugin_path, read_hooks, render


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


def test_agents_are_added_and_removed_and_the_file_goes_with_the_last(
        cli: CliRunner, config_home: Path) -> None:
    for name in ("ada", "bob"):
        AgentRegistry(open_state_db()).add(name, "builtin")
    path = plugin_path()
    assert path == config_home / "opencode" / "plugins" / "wardian.js"
    for name in ("ada", "bob"):
        invoke(cli, "hooks", "install", "opencode", "--agent", name)
    hooks = installed_hooks("opencode")
    assert {(h.host_event, h.agents) for h in hooks} == {
        ("SessionStart", ("ada", "bob")), ("SessionEnd", ("ada", "bob"))}
    again = invoke(cli, "hooks", "install", "opencode", "--agent", "ada")
    assert "Nothing to change" in again.output
    invoke(cli, "hooks", "install", "opencode", "--uninstall", "--agent", "ada")
    assert {h.agents for h in installed_hooks("opencode")} == {("bob",)}
    invoke(cli, "hooks", "install", "opencode", "--uninstall", "--agent", "bob")
    assert not path.exists()


def test_a_plugin_file_that_is_not_wardians_is_left_alone(cli: CliRunner,
                                                          config_home: Path) -> None:
    AgentRegistry(open_state_db()).add("ada", "builtin")
    path = plugin_path()
    path.parent.mkdir(parents=True)
    own = "export const Mine = async () => ({});\n"
    path.write_text(own)
    result = invoke(cli, "hooks", "install", "opencode", "--agent", "ada")
    assert result.exit_code == 2, result.output
    assert "not Wardian's opencode plugin" in result.output
    assert path.read_text() == own


def test_a_broken_hook_line_is_refused_with_its_line() -> None:
    text = render({"hooks": {}}).replace(MARKER + "{", MARKER + "{oops", 1)
    from wardian.errors import ValidationError

    with pytest.raises(ValidationError) as caught:
        read_hooks(text, source="wardian.js")
    assert "line " in caught.value.message and "not valid JSON" in caught.value.message


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the plugin")
def test_the_plugin_runs_its_hooks_and_adds_the_context(tmp_path: Path) -> None:
    """The rendered plugin under node: its system-prompt hook runs the SessionStart
    command once per session (its stdin is the payload) and adds the context; on exit the
    SessionEnd command runs for the session."""
    log = tmp_path / "calls.jsonl"
    start = (f"cat >> {log}; echo >> {log}; printf '%s' '"
             + json.dumps({"hookSpecificOutput": {"additionalContext": "CTX-7f3"}}) + "'")
    end = f"cat >> {log}; echo >> {log}"
    data = {"hooks": {e: [{"matcher": "", "hooks": [{"type": "command", "command": c,
                                                     "timeout": 5}]}]
                      for e, c in (("SessionStart", start), ("SessionEnd", end))}}
    plugin = tmp_path / "wardian.mjs"
    plugin.write_text(render(data))
    driver = tmp_path / "drive.mjs"
    driver.write_text(
        f'import {{ WardianMemory }} from "{plugin}";\n'
        'const hooks = await WardianMemory({ directory: "/w" });\n'
        'const out = { system: [] };\n'
        'await hooks["experimental.chat.system.transform"]({ sessionID: "ses_a1" }, out);\n'
        'await hooks["experimental.chat.system.transform"]({ sessionID: "ses_a1" }, out);\n'
        'console.log(JSON.stringify(out.system));\n')
    proc = subprocess.run(["node", str(driver)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["CTX-7f3", "CTX-7f3"]
    calls = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [c["hook_event_name"] for c in calls] == ["SessionStart", "SessionEnd"]
    assert {c["session_id"] for c in calls} == {"ses_a1"} and calls[0]["cwd"] == "/w"
