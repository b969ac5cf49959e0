"""`wardian doctor` check ``host-settings``: hooks a host will not run (Codex: not trusted
yet, changed since trusted, switched off; Gemini: hooks switched off or one listed as
disabled) and a Gemini settings file with comments, which Gemini accepts and Wardian reads
but does not rewrite. The real CLI, a temporary HOME; where the real Codex is installed its
app server says which key and hash it trusts a hook by, and doctor must agree with it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.hosts.hostcli import REAL_PATH, host_path
from typer.testing import CliRunner

from wardian.app.doctor_host_settings import codex_hook_hash


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME holding each host's user settings; no host CLI on PATH."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("CODEX_HOME", str(path / ".codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path / ".claude"))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    for layer in ("SETTINGS", "DEFAULTS"):  # no machine-wide Gemini file of this machine
        monkeypatch.setenv(f"GEMINI_CLI_SYSTEM_{layer}_PATH", str(tmp_path / f"no-{layer}"))
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return path


def _ok(cli: CliRunner, *argv: str) -> None:
    res = invoke(cli, *argv)
    assert res.exit_code == 0, res.output


def _doctor(cli: CliRunner, check: str = "host-settings") -> tuple[int, list[dict[str, Any]]]:
    res = invoke(cli, "doctor", "--json", "--check", check)
    doc = json.loads(res.stdout)
    return res.exit_code, [f for c in doc["checks"] for f in c["findings"]]


def _codex_setup(cli: CliRunner) -> Path:
    _ok(cli, "agent", "add", "ada", "--provider", "codex")
    _ok(cli, "hooks", "install", "codex", "--agent", "ada")
    return Path(os.environ["CODEX_HOME"])


def test_codex_hooks_not_yet_trusted_are_a_problem_with_the_fix(
    cli: CliRunner, home: Path
) -> None:
    _codex_setup(cli)
    code, findings = _doctor(cli)
    assert code == 1
    (start,) = [f for f in findings if "SessionStart" in f["message"]]
    assert start["status"] == "problem"
    assert "not trusted yet" in start["message"]
    assert "/hooks" in start["fix"] and "--dangerously-bypass-hook-trust" in start["fix"]
    assert start["subject"] == f"{home / '.codex' / 'hooks.json'}:session_start:0:0"


def _trust(codex_home: Path, states: dict[str, dict[str, Any]]) -> None:
    lines = []
    for key, state in states.items():
        lines.append(f"[hooks.state.{json.dumps(key)}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in state.items()]
    (codex_home / "config.toml").write_text("\n".join(lines) + "\n")


def _hook(codex_home: Path, event: str) -> dict[str, Any]:
    data = json.loads((codex_home / "hooks.json").read_text())
    hook: dict[str, Any] = data["hooks"][event][0]["hooks"][0]
    return hook


def test_trusted_changed_and_switched_off_codex_hooks(cli: CliRunner, home: Path) -> None:
    codex_home = _codex_setup(cli)
    key = f"{codex_home / 'hooks.json'}:session_start:0:0"
    current = codex_hook_hash("SessionStart", "", _hook(codex_home, "SessionStart"))
    _trust(codex_home, {key: {"trusted_hash": current}})
    code, findings = _doctor(cli)
    assert code == 0, findings
    assert [f["status"] for f in findings if f["subject"] == key] == ["ok"]
    _trust(codex_home, {key: {"trusted_hash": "sha256:" + "0" * 64}})
    code, findings = _doctor(cli)
    (changed,) = [f for f in findings if f["subject"] == key]
    assert code == 1 and "changed since it was trusted" in changed["message"]
    _trust(codex_home, {key: {"trusted_hash": current, "enabled": False}})
    code, findings = _doctor(cli)
    (off,) = [f for f in findings if f["subject"] == key]
    assert code == 1 and "switched off in /hooks" in off["message"]


def _codex_hooks_list(exe: Path, codex_home: Path, cwd: Path) -> list[dict[str, Any]]:
    """What the real Codex app server (`hooks/list`) reports for the hooks it finds."""
    env = {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{REAL_PATH}",
           "CODEX_HOME": str(codex_home)}
    with subprocess.Popen([str(exe), "app-server"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          env=env, cwd=cwd) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def call(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            stdin.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method,
                                    "params": params}) + "\n")
            stdin.flush()
            for line in stdout:
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == id_:
                    return message
            raise AssertionError("the app server closed its output")

        try:
            call(1, "initialize", {"clientInfo": {"name": "wardian-test", "version": "1"}})
            stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
            answer = call(2, "hooks/list", {"cwds": [str(cwd)]})
        finally:
            proc.kill()
    hooks: list[dict[str, Any]] = answer["result"]["data"][0]["hooks"]
    return hooks


@pytest.mark.hosts
def test_doctor_and_the_real_codex_agree_on_trust(
    cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = host_path("codex")
    if exe is None or shutil.which("node", path=REAL_PATH) is None:
        pytest.skip("codex is not installed (scripts/install-hosts)")
    node = Path(str(shutil.which("node", path=REAL_PATH))).parent
    monkeypatch.setenv("PATH", os.pathsep.join([str(exe.parent), str(node), os.environ["PATH"]]))
    codex_home = _codex_setup(cli)  # with codex on PATH: SessionStart and SessionEnd
    work = tmp_path / "work"
    work.mkdir()
    listed = {h["key"]: h for h in _codex_hooks_list(exe, codex_home, work)}
    start = f"{codex_home / 'hooks.json'}:session_start:0:0"
    end = f"{codex_home / 'hooks.json'}:session_end:0:0"
    assert {start, end} <= set(listed)
    assert listed[start]["trustStatus"] == listed[end]["trustStatus"] == "untrusted"
    for key, event in ((start, "SessionStart"), (end, "SessionEnd")):
        assert codex_hook_hash(event, "", _hook(codex_home, event)) == listed[key][
            "currentHash"]
    # Trust SessionStart as /hooks would; give SessionEnd a stale hash.
    _trust(codex_home, {start: {"trusted_hash": listed[start]["currentHash"]},
                        end: {"trusted_hash": "sha256:" + "1" * 64}})
    again = {h["key"]: h["trustStatus"] for h in _codex_hooks_list(exe, codex_home, work)}
    assert again[start] == "trusted" and again[end] == "modified"
    _, findings = _doctor(cli)
    by_key = {f["subject"]: f for f in findings}
    assert by_key[start]["status"] == "ok"
    assert by_key[end]["status"] == "problem"
    assert "changed since it was trusted" in by_key[end]["message"]


def _gemini_setup(cli: CliRunner, home: Path, settings: dict[str, Any]) -> Path:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(settings, indent=2) + "\n")
    _ok(cli, "agent", "add", "ada", "--provider", "gemini")
    _ok(cli, "hooks", "install", "gemini", "--agent", "ada")
    return path


def test_gemini_hooks_switched_off_are_a_problem(cli: CliRunner, home: Path) -> None:
    path = _gemini_setup(cli, home, {"hooksConfig": {"enabled": False}})
    code, findings = _doctor(cli)
    assert code == 1
    (off,) = [f for f in findings if "switched off" in f["message"]]
    assert "hooksConfig.enabled is false" in off["message"] and str(path) in off["message"]
    assert '"hooksConfig": {"enabled": true}' in off["fix"]


def test_a_gemini_hook_listed_as_disabled_is_a_problem(cli: CliRunner, home: Path) -> None:
    _gemini_setup(cli, home, {"hooksConfig": {"disabled": ["wardian-session-start"]}})
    code, findings = _doctor(cli)
    assert code == 1
    (listed,) = [f for f in findings if "hooksConfig.disabled" in f["message"]]
    assert "SessionStart" in listed["message"]
    assert 'remove "wardian-session-start" from hooksConfig.disabled' in listed["fix"]


def test_gemini_hooks_on_is_quiet(cli: CliRunner, home: Path) -> None:
    _gemini_setup(cli, home, {"hooksConfig": {"enabled": True}})
    code, findings = _doctor(cli)
    assert code == 0 and findings == [], findings


COMMENTED = """{
  // my theme
  "theme": "GitHub", /* the default */
  "url": "https://example.com/a//b"
}
"""


def test_a_commented_gemini_settings_file_is_read_and_left_alone_with_the_lines_to_add(
    cli: CliRunner, home: Path
) -> None:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(COMMENTED)
    _ok(cli, "agent", "add", "ada", "--provider", "gemini")
    res = invoke(cli, "hooks", "install", "gemini", "--agent", "ada")
    assert res.exit_code == 2, res.output
    assert path.read_text() == COMMENTED
    assert "has comments" in res.stderr
    start = res.stderr.index('"hooks": {')
    lines = res.stderr[start:]
    assert "wardian.runtime.hooks" in lines and "--agent ada" in lines
    # Doctor says why and how, and reads the file rather than calling it broken.
    code, findings = _doctor(cli)
    (note,) = findings
    assert note["status"] == "warning" and "has comments" in note["message"]
    assert "`wardian hooks install gemini --agent NAME` prints" in note["fix"]
    code, hook_findings = _doctor(cli, "hooks")
    assert code == 0 and not any("cannot read" in f["message"] for f in hook_findings)
    # The printed member, put in by hand, is what the hooks check then finds and runs.
    member = lines[:_member_end(lines)]
    edited = COMMENTED.replace('"https://example.com/a//b"\n',
                               f'"https://example.com/a//b",\n  {member}\n')
    path.write_text(edited)
    code, hook_findings = _doctor(cli, "hooks")
    assert code == 0, hook_findings
    assert sum("runs and answers" in f["message"] for f in hook_findings) == 2


def _member_end(text: str) -> int:
    """The end of the ``"hooks": {…}`` member at the start of `text`."""
    depth = 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    raise AssertionError(text)


def test_gemini_hooks_switched_off_by_a_workspace_or_system_file_name_that_file(
        cli: CliRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini merges system defaults, user, workspace and system settings (the system
    file wins): doctor reads every layer Gemini would, for each agent's workspace."""
    workspace = tmp_path / "shop"
    (workspace / ".gemini").mkdir(parents=True)
    project = workspace / ".gemini" / "settings.json"
    project.write_text('{\n  // ours\n  "hooksConfig": {"enabled": false}\n}\n')
    system = tmp_path / "etc" / "settings.json"
    system.parent.mkdir()
    defaults = tmp_path / "etc" / "system-defaults.json"
    defaults.write_text(json.dumps({"hooksConfig": {"disabled": ["wardian-session-end"]}}))
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(system))
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", str(defaults))
    _gemini_setup(cli, home, {"hooksConfig": {"enabled": True}})
    _ok(cli, "agent", "add", "bob", "--provider", "gemini", "--workspace", str(workspace))
    code, findings = _doctor(cli)
    assert code == 1
    messages = sorted(f["message"] for f in findings)
    (off,) = [m for m in messages if "switched off" in m]
    assert str(project) in off and f"for sessions in {workspace}" in off
    (listed,) = [m for m in messages if "hooksConfig.disabled" in m]
    assert "SessionEnd" in listed and str(defaults) in listed
    # The system settings override every other file, the workspace's too.
    system.write_text(json.dumps({"hooksConfig": {"enabled": True}}))
    code, findings = _doctor(cli)
    assert not any("switched off" in f["message"] for f in findings), findings
    system.write_text(json.dumps({"hooksConfig": {"enabled": False}}))
    code, findings = _doctor(cli)
    (off,) = [f for f in findings if "switched off" in f["message"]]
    assert str(system) in off["message"] and "for sessions in" not in off["message"]
