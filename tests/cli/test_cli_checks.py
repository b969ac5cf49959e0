"""Small refusals and shell completion (issue 20): bad input fails at the command, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner


def test_agent_add_refuses_an_unknown_provider(cli: CliRunner) -> None:
    res = invoke(cli, "agent", "add", "xx", "--provider", "nosuch")
    assert res.exit_code == 2 and "unknown provider 'nosuch'" in res.stderr
    assert "builtin" in res.stderr  # the known ones are listed
    assert "xx" not in invoke(cli, "agent", "list").stdout
    res = invoke(cli, "agent", "add", "xx", "--provider", "claud")
    assert res.exit_code == 2 and "did you mean 'claude'" in res.stderr


@pytest.mark.parametrize("kind", ["missing", "directory", "unreadable"])
def test_session_close_refuses_a_bad_transcript(cli: CliRunner, tmp_path: Path,
                                                 kind: str) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    path = tmp_path / "t.jsonl"
    if kind == "directory":
        path.mkdir()
    elif kind == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads every file")
        path.write_text("{}\n")
        path.chmod(0)
    res = invoke(cli, "session", "close", "--agent", "ada", "--boundary", "shutdown",
                 "--transcript", str(path))
    assert res.exit_code == 2, res.output
    assert str(path) in res.stderr
    from wardian.runtime.session_events import SessionEventQueue

    assert SessionEventQueue().list() == []  # nothing recorded


def _complete(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The installed console script: completion is keyed on the program's name.
    wardian = Path(sys.executable).with_name("wardian")
    return subprocess.run([str(wardian)], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("shell", "env", "needle"), [
    ("bash", {"COMP_WORDS": "wardian automation sess", "COMP_CWORD": "2"}, "session-close"),
    ("zsh", {"_TYPER_COMPLETE_ARGS": "wardian agent ad"}, "add"),
    ("fish", {"_TYPER_COMPLETE_ARGS": "wardian doc", "_TYPER_COMPLETE_FISH_ACTION": "get-args"},
     "doctor"),
])
def test_shell_completion_works(shell: str, env: dict[str, str], needle: str) -> None:
    source = _complete({"_WARDIAN_COMPLETE": f"source_{shell}"})
    assert source.returncode == 0 and "wardian" in source.stdout, source.stderr
    done = _complete({"_WARDIAN_COMPLETE": f"complete_{shell}", **env})
    assert done.returncode == 0, done.stderr
    assert needle in done.stdout


def test_completion_is_offered_once_on_the_root(cli: CliRunner) -> None:
    assert "--show-completion" in invoke(cli, "--help").stdout
    for group in ("agent", "automation", "hooks", "memory"):
        assert "completion" not in invoke(cli, group, "--help").stdout, group
