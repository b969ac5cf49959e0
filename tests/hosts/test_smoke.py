"""Each pinned host runs offline against the scripted endpoint: a scripted shell call runs
in the host, its output comes back to the model, and the final text reaches the user.

opencode's round trip is checked by `tests.hosts.test_transcript_opencode` on the run whose
session it then exports (`assert_round_trip`): one opencode start instead of two."""

from __future__ import annotations

import subprocess

import pytest

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host

PROMPT = "run the scripted command"
MODELS = {"claude": "claude-opus-4-5", "gemini": "gemini-2.5-pro",
          "codex": "gpt-5.1-codex", "opencode": "scripted-model"}
"""The model each host's `Host.prompt_argv` asks for, as the request names it."""


FINAL = "Finished the smoke run."


def assert_round_trip(host: Host, proc: subprocess.CompletedProcess[str], prompt: str,
                      marker: str, final: str) -> None:
    """`proc`, one turn of `prompt` whose scripted shell call printed `marker` and whose
    last reply was `final`, made the round trip: exit 0, `final` shown, two model requests
    for the host's model, the prompt in the first, the shell output in the second, and the
    script neither failed nor ran out."""
    name = host.name
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert final in proc.stdout
    main = host.endpoint.main_requests
    assert len(main) == 2, [r.path for r in host.endpoint.requests]
    assert {r.model for r in main} == {MODELS[name]}
    assert any(prompt in t for t in main[0].user_texts)
    assert any(marker in t for t in main[1].tool_results), main[1].tool_results
    assert host.endpoint.errors == []
    assert host.endpoint.overrun == 0


@pytest.mark.parametrize("name", ["claude", "gemini", "codex"])
def test_scripted_shell_call_round_trip(name: str, request: pytest.FixtureRequest) -> None:
    host: Host = request.getfixturevalue(f"{name}_host")
    marker = f"smoke-{name}-output"
    host.endpoint.script(Reply(Shell(f"echo {marker}")), Reply(FINAL))
    assert_round_trip(host, host.run(argv=host.prompt_argv(PROMPT)), PROMPT, marker, FINAL)
