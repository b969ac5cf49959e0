"""The real Claude Code as the curator of a memory-consolidation run, through Wardian's
``claude`` adapter: the model request carries exactly the assigned model and effort, the
structured batch the model returns is committed, and a response from another model than
the assigned one (a reroute or fallback) fails the step with Wardian's error and commits
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_home
from tests.e2e._support import W, write_claude_session
from tests.hosts.endpoint import Reply, Structured
from tests.hosts.hostcli import Host
from tests.hosts.sessions import refreshed_catalog, setup_agent, wardian

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


def _opus_alias(host: Host) -> None:
    """The alias resolves to MODEL inside Claude Code (its documented
    ANTHROPIC_DEFAULT_OPUS_MODEL)."""
    host.env["ANTHROPIC_DEFAULT_OPUS_MODEL"] = MODEL


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Claude Code's model catalog, refreshed once for the module by the real CLI
    (`tests.hosts.sessions.refreshed_catalog`). The assignment is checked against it,
    refreshed as an operator without an Anthropic API key refreshes it: Claude Code's fixed
    aliases."""
    return refreshed_catalog(tmp_path_factory.mktemp("catalog"), "claude",
                             keyless={"ANTHROPIC_API_KEY"}, prepare=_opus_alias)


def _host(claude_host: Host, wardian_home: Path, refreshed: Path) -> tuple[Host, str, Path]:
    claude_host.env["PATH"] = f"{claude_host.exe.parent}:{claude_host.env['PATH']}"
    _opus_alias(claude_host)
    copy_home(refreshed, wardian_home)  # the catalog, refreshed once for the module
    agent = setup_agent(claude_host, wardian_home, hooks=False, seed=())
    transcript = write_claude_session(
        claude_host.workspace / "session.jsonl", "s-curator",
        [("user", SAID), ("assistant", "Understood: ruff first.")],
        cwd=str(claude_host.workspace))
    return claude_host, agent.name, transcript


def test_claude_code_curates_with_exactly_the_assigned_model_and_effort(
        claude_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(claude_host, wardian_home, refreshed)
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
        claude_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(claude_host, wardian_home, refreshed)
    host.endpoint.script(Reply(Structured(BATCH), model="claude-haiku-4-5"))
    run = _run(host, agent, transcript, "high")
    assert run["status"] == "failed", run
    error = json.dumps(run)
    assert "claude-haiku-4-5" in error, error
    assert W(wardian_home, env=host.env).records(agent) == []
