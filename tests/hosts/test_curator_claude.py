"""The real Claude Code as the curator of a memory-consolidation run, through Wardian's
``claude`` adapter: the model request carries exactly the assigned model and effort, the
structured batch the model returns is committed, and a response from another model than
the assigned one (a reroute or fallback) fails the step with Wardian's error and commits
nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e._support import W, write_claude_session
from tests.hosts.endpoint import Reply, Structured
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent, wardian

MODEL = "claude-opus-4-5"
SAID = "From now on always run the linter with ruff before committing in this repo."
BATCH = {"operations": [{"op": "save", "text": "Run the linter with ruff before committing.",
                         "kind": "stable", "scope": "workspace",
                         "evidence": "always run the linter with ruff before committing"}]}


def _run(host: Host, agent: str, transcript: Path, effort: str) -> dict[str, Any]:
    assignments = {"curator": {"target_type": "temporary_provider", "provider": "claude",
                               "model": "opus", "effort": effort}}
    done = wardian(host, "automation", "run", "start", "memory-consolidation", "--agent",
                   agent, "--assignments", json.dumps(assignments), "--archive",
                   str(transcript), "--wait", "--json", check=False)
    assert done.stdout.strip(), done.stderr
    return dict(json.loads(done.stdout))


def _host(claude_host: Host, wardian_home: Path) -> tuple[Host, str, Path]:
    claude_host.env["PATH"] = f"{claude_host.exe.parent}:{claude_host.env['PATH']}"
    agent = setup_agent(claude_host, wardian_home, hooks=False, seed=())
    # The assignment is checked against the provider's catalog, refreshed as an operator
    # without an Anthropic API key refreshes it: Claude Code's fixed aliases. The alias
    # resolves to MODEL inside Claude Code (its documented ANTHROPIC_DEFAULT_OPUS_MODEL).
    claude_host.env["ANTHROPIC_DEFAULT_OPUS_MODEL"] = MODEL
    keyless = {k: v for k, v in claude_host.env.items() if k != "ANTHROPIC_API_KEY"}
    refreshed = subprocess.run([sys.executable, "-m", "wardian", "agent", "models",
                                "--provider", "claude", "--refresh"], env=keyless,
                               cwd=claude_host.workspace, capture_output=True, text=True,
                               timeout=120, check=False)
    assert refreshed.returncode == 0, refreshed.stderr
    transcript = write_claude_session(
        claude_host.workspace / "session.jsonl", "s-curator",
        [("user", SAID), ("assistant", "Understood: ruff first.")],
        cwd=str(claude_host.workspace))
    return claude_host, agent.name, transcript


def test_claude_code_curates_with_exactly_the_assigned_model_and_effort(
        claude_host: Host, wardian_home: Path) -> None:
    host, agent, transcript = _host(claude_host, wardian_home)
    host.endpoint.script(Reply(Structured(BATCH)))
    run = _run(host, agent, transcript, "high")
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    (request,) = host.endpoint.main_requests
    assert request.model == MODEL
    assert request.reasoning, "the request carried no effort/thinking settings"
    assert SAID in request.text()
    records = [r["text"] for r in W(wardian_home, env=host.env).records(agent)]
    assert "Run the linter with ruff before committing." in records


def test_a_response_from_another_model_fails_the_step_and_commits_nothing(
        claude_host: Host, wardian_home: Path) -> None:
    host, agent, transcript = _host(claude_host, wardian_home)
    host.endpoint.script(Reply(Structured(BATCH), model="claude-haiku-4-5"))
    run = _run(host, agent, transcript, "high")
    assert run["status"] == "failed", run
    error = json.dumps(run)
    assert "claude-haiku-4-5" in error, error
    assert W(wardian_home, env=host.env).records(agent) == []
