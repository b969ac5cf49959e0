"""`wardian doctor` says whether each installed host CLI is a version the real-host tests
ran: the real CLI and doctor, a PATH holding exactly the CLIs a test wants (a one-line
script printing a version, or the real hosts `scripts/install-hosts` installed)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.hosts.hostcli import host_path, pins
from typer.testing import CliRunner

from wardian.app.hosts_tested import TESTED


def test_the_shipped_list_is_the_pins_the_host_tests_run() -> None:
    # A bump of tests/hosts/pins.txt must be copied into wardian.app.hosts_tested.TESTED.
    assert {command: pin.version for command, pin in pins().items()} == TESTED


@pytest.fixture
def bin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def _findings(cli: CliRunner) -> list[dict[str, Any]]:
    res = invoke(cli, "doctor", "--json", "--check", "provider-clis")
    assert res.exit_code == 0, res.output
    return [f for c in json.loads(res.stdout)["checks"] for f in c["findings"]]


def _about(findings: list[dict[str, Any]], command: str) -> dict[str, Any]:
    (found,) = [f for f in findings if f["message"].startswith(f"{command}:")]
    return found


def _script(folder: Path, command: str, line: str) -> None:
    exe = folder / command
    exe.write_text(f"#!{sys.executable}\nprint({line!r})\n")
    exe.chmod(0o755)


def test_a_tested_version_says_tested(cli: CliRunner, bin_path: Path) -> None:
    _script(bin_path, "codex", f"codex-cli {TESTED['codex']}")
    found = _about(_findings(cli), "codex")
    assert found["status"] == "ok"
    assert found["message"].endswith(f"codex-cli {TESTED['codex']} · tested")


def test_another_version_says_not_tested_and_which_was(cli: CliRunner, bin_path: Path) -> None:
    _script(bin_path, "gemini", "0.60.2")
    found = _about(_findings(cli), "gemini")
    assert found["status"] == "warning"
    assert f"not tested with version 0.60.2 (tested: {TESTED['gemini']})" in found["message"]
    assert TESTED["gemini"] in found["fix"]


def test_a_missing_host_is_fine(cli: CliRunner, bin_path: Path) -> None:
    found = _about(_findings(cli), "opencode")
    assert found["status"] == "ok" and "not installed" in found["message"]


@pytest.mark.hosts
@pytest.mark.parametrize("command", sorted(TESTED))
def test_the_real_installed_host_is_reported_tested(
    cli: CliRunner, bin_path: Path, command: str
) -> None:
    exe = host_path(command)
    node = shutil.which("node", path=str(Path(sys.executable).parent) + ":" + _real_path())
    if exe is None or node is None:
        pytest.skip(f"{command} {TESTED[command]} is not installed (scripts/install-hosts)")
    (bin_path / command).symlink_to(exe)
    (bin_path / "node").symlink_to(node)
    found = _about(_findings(cli), command)
    assert found["status"] == "ok", found
    assert found["message"].endswith(" · tested"), found


def _real_path() -> str:
    from tests.hosts.hostcli import REAL_PATH

    return REAL_PATH
