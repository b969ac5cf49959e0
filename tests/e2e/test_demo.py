"""`python -m wardian.demo` (what `make demo` runs) does the real work end to end."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e._support import write_claude_session


@pytest.fixture(autouse=True)
def _remove_demo_homes(tmp_path: Path) -> Iterator[None]:
    """Delete every throwaway data directory the demo made (it leaves them for the user)."""
    yield
    for home in tmp_path.glob("wardian-demo-*"):
        shutil.rmtree(home, ignore_errors=True)


def _demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["TMPDIR"] = str(tmp_path)  # the throwaway WARDIAN_HOME goes under the test's dir
    return subprocess.run([sys.executable, "-m", "wardian.demo", *args], env=env, text=True,
                          capture_output=True, timeout=180, check=False)


def test_demo_consolidates_the_shipped_example(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "src" / "wardian" / "library" / \
        "examples" / "claude-code-session.jsonl"
    assert example.is_file(), "the shipped example transcript is missing"
    proc = _demo(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    home = re.search(r"throwaway data directory:\s+(\S+)", out)
    assert home and Path(home.group(1)).parent == tmp_path
    for command in ("$ wardian settings set agent_memory.enabled true",
                    "$ wardian automation session-close add --blueprint memory-consolidation",
                    "$ wardian session close --agent demo-agent --boundary clear",
                    "$ wardian agent exec demo-agent --"):
        assert command in out
    assert re.search(r"result: [1-9]\d* saved", out), out
    assert re.search(r"^    saved \[[0-9a-f]{8}\] (stable|current)", out, re.M), out
    assert "full run: `wardian automation run show " in out
    assert "Memory loaded · " in proc.stderr  # the collapsed row before the provider starts
    # (a line holding the throwaway dir's path may be wider: the test's temp path is long)
    wide = [line for line in out.splitlines() if len(line) > 100 and home.group(1) not in line]
    assert not wide, wide  # fits a terminal 100 columns wide; no JSON cut with "..."
    assert not re.search(r'\w\.\.\.["}\]]', out)  # no JSON cut off with "..."
    assert "--json" not in out  # no echoed command whose output is never shown
    # The closing command is one pasteable line: the data directory and the command together
    # (wrapped, the first line would only set a variable and the second read the default).
    closing = [line for line in out.splitlines() if "automation runs" in line]
    assert closing, out
    assert re.fullmatch(rf"  WARDIAN_HOME={re.escape(home.group(1))} \S*wardian automation runs",
                        closing[-1]), closing
    recalled = out.split("## Recalled memory", 1)[1]
    assert re.search(r"^- \[[0-9a-f]{8}\] (stable|current)", recalled, re.M), recalled


def test_demo_runs_on_a_users_own_transcript(tmp_path: Path) -> None:
    transcript = write_claude_session(tmp_path / "mine.jsonl", "mine", [
        ("user", "Always use tabs for indentation in this repository, never spaces."),
        ("assistant", "Understood, tabs it is."),
    ])
    proc = _demo(tmp_path, "--transcript", str(transcript))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Transcript (claude format):\n  {transcript}" in proc.stdout
    assert "Run " in proc.stdout and " succeeded" in proc.stdout


def test_demo_refuses_a_missing_transcript(tmp_path: Path) -> None:
    proc = _demo(tmp_path, "--transcript", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 2 and "transcript not found" in proc.stderr
