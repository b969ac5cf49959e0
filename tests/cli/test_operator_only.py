"""Every operator (O) command of CLI.md refuses inside a managed process: exit 3, nothing run."""

from __future__ import annotations

import pytest
from tests.conftest import invoke

OPERATOR_COMMANDS = [
    ["settings", "list"],
    ["settings", "set", "agent_memory.enabled", "true"],
    ["agent", "add", "x", "--provider", "builtin"],
    ["agent", "list"],
    ["garden", "memory", "list", "--agent", "x"],
    ["garden", "memory", "refusals", "--agent", "x"],
    ["garden", "memory", "reviews", "--agent", "x"],
    ["garden", "memory", "review", "show", "r", "--agent", "x"],
    ["garden", "memory", "review", "apply", "r", "--agent", "x"],
    ["garden", "maintain", "check-receipt", "--idempotency-key", "k", "--agent", "x"],
    ["garden", "serve", "--port", "0"],
    ["library", "list"],
    ["library", "init"],
    ["automation", "runs"],
    ["automation", "run", "start", "memory-consolidation", "--agent", "x",
     "--assignments", "{}"],
    ["automation", "session-close", "list"],
    ["automation", "schedule", "list"],
    ["conversation", "list"],
    ["serve", "--status"],
]


@pytest.mark.parametrize("args", OPERATOR_COMMANDS, ids=" ".join)
def test_operator_commands_refuse_inside_a_managed_process(cli, args) -> None:  # type: ignore[no-untyped-def]
    result = invoke(cli, *args, env={"WARDIAN_AGENT_ID": "00000000-0000-4000-8000-000000000000"})
    assert result.exit_code == 3, (args, result.output, result.stderr)
    assert result.stderr.startswith("Error: ")
    assert "managed process" in result.stderr
