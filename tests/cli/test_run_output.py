"""Human run output prints a step's own `summary` and `next` in full (review mode's plan path
and preview command were hidden in a truncated table cell)."""

from __future__ import annotations

from importlib.resources import files

from tests.conftest import invoke

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
