"""Each pinned host runs offline against the scripted endpoint: a scripted shell call runs
in the host, its output comes back to the model, and the final text reaches the user."""

from __future__ import annotations

import pytest

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host

PROMPT = "run the scripted command"
MODELS = {"claude": "claude-opus-4-5", "gemini": "gemini-2.5-pro",
          "codex": "gpt-5.1-codex", "opencode": "scripted-model"}
"""The model each host's `Host.prompt_argv` asks for, as the request names it."""


@pytest.mark.parametrize("name", ["claude", "gemini", "codex", "opencode"])
def test_scripted_shell_call_round_trip(name: str, request: pytest.FixtureRequest) -> None:
    host: Host = request.getfixturevalue(f"{name}_host")
    marker = f"smoke-{name}-output"
    host.endpoint.script(Reply(Shell(f"echo {marker}")), Reply("Finished the smoke run."))
    proc = host.run(argv=host.prompt_argv(PROMPT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Finished the smoke run." in proc.stdout
    main = host.endpoint.main_requests
    assert len(main) == 2, [r.path for r in host.endpoint.requests]
    assert {r.model for r in main} == {MODELS[name]}
    assert any(PROMPT in t for t in main[0].user_texts)
    assert any(marker in t for t in main[1].tool_results), main[1].tool_results
    assert host.endpoint.errors == []
    assert host.endpoint.overrun == 0
