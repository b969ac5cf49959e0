"""A hook's input is bounded: JSON nested past the depth cap, or larger than the size cap,
is a warning and the session close is still recorded (without the input's details), both
through the installed hook (a real child process outside the venv) and through ``wardian
hooks HOST session-end``. Nothing raises past the hook (a RecursionError used to lose the
close)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import invoke
from tests.runtime.test_hooks import _installed, _shell
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.hooks import MAX_HOOK_DEPTH, MAX_HOOK_INPUT_BYTES
from wardian.runtime.session_events import SessionEventQueue


@pytest.fixture
def agent() -> str:
    return AgentRegistry(open_state_db()).add("coder", "claude").id


def _deep(levels: int, opener: str = "[", closer: str = "]") -> str:
    """A SessionEnd payload whose ``extra`` field nests `levels` deep."""
    return json.dumps({"session_id": "deep-1", "reason": "clear",
                       "transcript_path": "/tmp/t.jsonl"})[:-1] + (
        ', "extra": ' + opener * levels + closer * levels + "}")


@pytest.mark.parametrize("payload", [
    _deep(100_000),  # far past Python's recursion limit: json.loads raised RecursionError
    _deep(5_000, '{"a":', "}"),
    _deep(MAX_HOOK_DEPTH + 1),
], ids=["lists", "objects", "one-past-the-cap"])
def test_installed_hook_records_the_close_of_too_deep_input(
        payload: str, agent: str, tmp_path: Path, wardian_home: Path) -> None:
    command = _installed(tmp_path)["SessionEnd"]
    proc = _shell(command, payload, tmp_path, wardian_home)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert f"nested deeper than {MAX_HOOK_DEPTH} levels" in proc.stderr
    assert "recording the close without its details" in proc.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.agent_id, ev.source, ev.transcript_path) == (agent, "hook", None)


def test_input_at_the_depth_cap_is_read_with_its_details(
        agent: str, tmp_path: Path, wardian_home: Path) -> None:
    command = _installed(tmp_path)["SessionEnd"]
    # the payload object is level 1, so `extra` may nest MAX - 1 more
    proc = _shell(command, _deep(MAX_HOOK_DEPTH - 1), tmp_path, wardian_home)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.session_id, ev.boundary, ev.transcript_path) == ("deep-1", "clear",
                                                                "/tmp/t.jsonl")


def test_brackets_inside_strings_are_not_nesting(agent: str, tmp_path: Path,
                                                 wardian_home: Path) -> None:
    payload = json.dumps({"session_id": "s-str", "reason": "clear",
                          "note": "[" * 500 + '\\"{' * 300})
    proc = _shell(_installed(tmp_path)["SessionEnd"], payload, tmp_path, wardian_home)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert (ev.session_id, ev.boundary) == ("s-str", "clear")


def test_oversized_input_is_not_read_whole_and_the_close_is_recorded(
        agent: str, tmp_path: Path, wardian_home: Path) -> None:
    payload = json.dumps({"session_id": "big", "reason": "clear",
                          "pad": "x" * (MAX_HOOK_INPUT_BYTES + 10)})
    proc = _shell(_installed(tmp_path)["SessionEnd"], payload, tmp_path, wardian_home)
    assert proc.returncode == 0, proc.stderr
    assert f"larger than {MAX_HOOK_INPUT_BYTES} bytes" in proc.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert ev.agent_id == agent and ev.session_id != "big"


def test_cli_hook_command_records_the_close_of_too_deep_input(cli: CliRunner,
                                                              agent: str) -> None:
    res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "coder",
                 input=_deep(50_000))
    assert res.exit_code == 0, res.output
    assert f"nested deeper than {MAX_HOOK_DEPTH} levels" in res.stderr
    (ev,) = SessionEventQueue(open_state_db()).list()
    assert ev.agent_id == agent and ev.transcript_path is None


def test_session_start_with_too_deep_input_still_answers(agent: str, tmp_path: Path,
                                                         wardian_home: Path) -> None:
    proc = _shell(_installed(tmp_path)["SessionStart"], _deep(100_000), tmp_path,
                  wardian_home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"nested deeper than {MAX_HOOK_DEPTH} levels" in proc.stderr
