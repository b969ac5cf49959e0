"""Human run output prints a step's own `summary` and `next` in full (review mode's plan path
and preview command were hidden in a truncated table cell)."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

ASSIGN = ('{"curator":{"target_type":"temporary_provider","provider":"builtin",'
          '"model":"curator-rules"}}')


def test_review_mode_names_the_plan_and_the_next_command(cli) -> None:  # type: ignore[no-untyped-def]
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    example = str(files("wardian.library") / "examples" / "claude-code-session.jsonl")
    result = invoke(cli, "automation", "run", "start", "memory-consolidation", "--agent", "ada",
                    "--assignments", ASSIGN, "--input", "mode=review", "--archive", example,
                    "--wait")
    assert result.exit_code == 0, result.output + result.stderr
    next_lines = [line for line in result.output.splitlines() if "next:" in line]
    assert len(next_lines) == 1
    assert "wardian garden maintain preview " in next_lines[0]
    assert next_lines[0].rstrip().endswith(".json --agent " + next_lines[0].split()[-1])
    run_id = result.output.split()[1]
    shown = invoke(cli, "automation", "run", "show", run_id)
    assert "wardian garden maintain preview" in shown.output


# --- fits 100 columns, nothing cut short (issue 20, new-user trial) -------------------------


def _session(path: Path, turns: list[tuple[str, str]]) -> Path:
    """A made-up Claude Code session (the real record shapes; no corpus text)."""
    from tests.e2e._support import write_claude_session

    return write_claude_session(path, "made-up-session", turns)


def _start(cli: CliRunner, transcript: Path) -> str:
    result = invoke(cli, "automation", "run", "start", "memory-consolidation", "--agent", "ada",
                    "--assignments", ASSIGN, "--archive", str(transcript), "--wait", "--json")
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["id"])


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return [json.dumps(value, ensure_ascii=False)] if value is not None else []


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_run_show_fits_100_columns_and_prints_every_output_in_full(
        cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    long_turn = ("From now on always run the formatter before committing, because the "
                 "review bot in this repository rejects unformatted patches and that wastes "
                 "a whole round trip of review on the maintainers' side every single time.")
    run_id = _start(cli, _session(tmp_path / "s.jsonl", [
        ("user", long_turn), ("assistant", "Understood, I will run the formatter first.")]))
    shown = invoke(cli, "automation", "run", "show", run_id)
    assert shown.exit_code == 0
    wide = [line for line in shown.stdout.splitlines() if len(line) > 100]
    assert not wide, wide
    assert "..." not in shown.stdout  # no JSON cut short
    doc = json.loads(invoke(cli, "automation", "run", "show", run_id, "--json").stdout)
    flat = _flat(shown.stdout)
    for attempt in doc["attempts"]:
        if attempt["output"] is None:
            continue
        assert f"Output of {attempt['step_id']} (attempt {attempt['attempt']}):" in shown.stdout
        for leaf in _leaves(attempt["output"]):
            if len(leaf) < 80:  # longer words may be broken to fit
                assert _flat(leaf) in flat, (attempt["step_id"], leaf)
    assert _flat(json.dumps(long_turn)) in flat  # the long message, in full


def test_runs_list_fits_100_columns(cli: CliRunner, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    _start(cli, _session(tmp_path / "s.jsonl", [("user", "hello"), ("assistant", "hi")]))
    listed = invoke(cli, "automation", "runs")
    assert listed.exit_code == 0
    assert max(len(line) for line in listed.stdout.splitlines()) <= 100
    assert "memory-consolidation" in listed.stdout  # not folded


def test_a_run_that_saves_nothing_says_why(cli: CliRunner, tmp_path: Path) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    chat = _session(tmp_path / "s.jsonl", [
        ("user", "what does the parse function in utils return?"),
        ("assistant", "It returns a list of tokens."),
        ("user", "thanks"),
    ])
    result = invoke(cli, "automation", "run", "start", "memory-consolidation", "--agent", "ada",
                    "--assignments", ASSIGN, "--archive", str(chat), "--wait")
    assert result.exit_code == 0, result.output
    summary = _flat(" ".join(line for line in result.stdout.splitlines()
                             if "summary:" in line or line.startswith(" " * 15)))
    assert "0 saved" in summary
    assert "nothing to keep: no durable signal" in summary
    assert "in the 3 messages read" in summary
