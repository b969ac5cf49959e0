"""The real Codex CLI as the curator of a memory-consolidation run, through Wardian's
``codex`` adapter: the model request carries exactly the assigned model and the assigned
effort as the Responses ``reasoning.effort``, and the structured batch the model returns is
committed; a response served by another model fails the step with Wardian's error and
commits nothing; an effort the model does not list, and Codex's ``ultra`` (which Codex does
not send as the effort), are refused before anything runs.

Codex sees a reroute in the ``OpenAI-Model`` response header (the OpenAI API names the
model that served the request there) and reports it in ``codex exec --json`` as an error
item ``model rerouted: <asked> -> <served> (<reason>)``; the rollout's ``turn_context``
keeps the model it asked for, so that item is the only record of the served model.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_home
from tests.e2e._support import W, write_claude_session
from tests.hosts.endpoint import Reply, Structured
from tests.hosts.hostcli import Host
from tests.hosts.sessions import refreshed_catalog, setup_agent, wardian

MODEL = "gpt-5.5"
"""A model of Codex's own catalog (``codex app-server`` ``model/list``), whose efforts are
low, medium, high and xhigh."""
ULTRA_MODEL = "gpt-6.2-sol"
"""A model Codex lists with the efforts max and ``ultra`` ("Maximum reasoning with
automatic task delegation")."""
SAID = "From now on always run the linter with ruff before committing in this repo."
BATCH = {"operations": [{"op": "save", "text": "Run the linter with ruff before committing.",
                         "kind": "stable", "scope": "workspace",
                         "evidence": "always run the linter with ruff before committing"}]}


def _start(host: Host, agent: str, transcript: Path, model: str,
           effort: str | None) -> subprocess.CompletedProcess[str]:
    curator: dict[str, Any] = {"target_type": "temporary_provider", "provider": "codex",
                               "model": model}
    if effort:
        curator["effort"] = effort
    return wardian(host, "automation", "run", "start", "memory-consolidation", "--agent",
                   agent, "--assignments", json.dumps({"curator": curator}), "--archive",
                   str(transcript), "--wait", "--json", check=False)


def _run(host: Host, agent: str, transcript: Path, model: str,
         effort: str | None) -> dict[str, Any]:
    done = _start(host, agent, transcript, model, effort)
    assert done.stdout.strip(), done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The codex model catalog, refreshed once for the module by the real CLI
    (`tests.hosts.sessions.refreshed_catalog`)."""
    return refreshed_catalog(tmp_path_factory.mktemp("catalog"), "codex")


def _host(codex_host: Host, wardian_home: Path, refreshed: Path) -> tuple[Host, str, Path]:
    codex_host.env["PATH"] = f"{codex_host.exe.parent}:{codex_host.env['PATH']}"
    copy_home(refreshed, wardian_home)  # the catalog, refreshed once for the module
    agent = setup_agent(codex_host, wardian_home, hooks=False, seed=())
    transcript = write_claude_session(
        codex_host.workspace / "session.jsonl", "s-curator",
        [("user", SAID), ("assistant", "Understood: ruff first.")],
        cwd=str(codex_host.workspace))
    return codex_host, agent.name, transcript


def _rollout_contexts(host: Host) -> list[dict[str, Any]]:
    """The ``turn_context`` payloads of every rollout Codex wrote."""
    out = []
    for path in host.transcripts():
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "turn_context":
                out.append(record["payload"])
    return out


def test_codex_curates_with_exactly_the_assigned_model_and_effort(
        codex_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(codex_host, wardian_home, refreshed)
    host.endpoint.script(Reply(Structured(BATCH)))
    run = _run(host, agent, transcript, MODEL, "high")
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    (request,) = host.endpoint.main_requests
    assert request.model == MODEL
    assert request.reasoning.get("reasoning", {}).get("effort") == "high", request.reasoning
    assert SAID in request.text()
    assert [(c["model"], c["effort"]) for c in _rollout_contexts(host)] == [(MODEL, "high")]
    records = [r["text"] for r in W(wardian_home, env=host.env).records(agent)]
    assert records == ["Run the linter with ruff before committing."]


def test_a_response_from_another_model_fails_the_step_and_commits_nothing(
        codex_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(codex_host, wardian_home, refreshed)
    host.endpoint.script(Reply(Structured(BATCH), model="other-model"))
    run = _run(host, agent, transcript, MODEL, "high")
    assert run["status"] == "failed", run
    error = json.dumps(run["error"])
    assert "other-model" in error, error
    assert f"model rerouted: {MODEL} -> other-model" in error, error
    (request,) = host.endpoint.main_requests
    assert request.model == MODEL
    # The rollout names only the model Codex asked for: the reroute is seen in the stream.
    assert {c["model"] for c in _rollout_contexts(host)} == {MODEL}
    assert W(wardian_home, env=host.env).records(agent) == []


def test_an_effort_the_model_does_not_list_is_refused_before_anything_runs(
        codex_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(codex_host, wardian_home, refreshed)
    # Codex would send "max" to the API as it is (it checks no effort against the model).
    done = _start(host, agent, transcript, MODEL, "max")
    assert done.returncode == 2, done.stderr
    assert f"effort 'max' is not supported by codex model {MODEL}" in done.stderr, done.stderr
    assert host.endpoint.requests == []
    assert host.transcripts() == []
    assert W(wardian_home, env=host.env).records(agent) == []


def test_codex_sends_another_effort_for_ultra_and_records_ultra(codex_host: Host) -> None:
    """Why a role step refuses ``ultra``: the request carries a lower reasoning effort than
    the one assigned, and the rollout, the adapter's only record of the effort, says
    ``ultra`` all the same."""
    codex_host.endpoint.script(Reply("ok"))
    proc = codex_host.run("exec", "--json", "--skip-git-repo-check", "-m", ULTRA_MODEL,
                          "-c", "model_reasoning_effort=ultra", "say ok")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (request,) = codex_host.endpoint.requests
    assert request.model == ULTRA_MODEL
    assert request.reasoning["reasoning"]["effort"] == "xhigh", request.reasoning
    assert [c["effort"] for c in _rollout_contexts(codex_host)] == ["ultra"]


def test_ultra_is_refused_before_anything_runs(codex_host: Host, wardian_home: Path,
                                                refreshed: Path) -> None:
    host, agent, transcript = _host(codex_host, wardian_home, refreshed)
    done = _start(host, agent, transcript, ULTRA_MODEL, "ultra")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "effort 'ultra' cannot be passed to codex" in done.stderr, done.stderr
    assert host.endpoint.requests == []
    assert host.transcripts() == []
    assert W(wardian_home, env=host.env).records(agent) == []
