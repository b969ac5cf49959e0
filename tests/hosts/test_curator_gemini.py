"""The real Gemini CLI as the curator of a memory-consolidation run, through Wardian's
``gemini`` adapter: the model request names exactly the assigned model and the structured
batch the model returns is committed; an answer from another model — a reroute on the
provider's side, a newer model Gemini CLI puts in place of the assigned one, a silent
fallback after a quota error — fails the step with Wardian's error and commits nothing, as
does a quota error (Gemini CLI headless has no fallback for a concrete model); an effort is
refused before anything runs (Gemini CLI has no effort setting the adapter could pass).

What Gemini CLI 0.61.0 does, as these tests found it: ``init.model`` is always the ``-m``
value, whatever model is then asked; ``result.stats.models`` is keyed by the model that
answered (the response's ``modelVersion``); neither stdout nor stderr says when it replaced
or fell back from a model.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_home
from tests.e2e._support import W, write_claude_session
from tests.hosts.endpoint import Failure, Reply, Structured
from tests.hosts.hostcli import Host
from tests.hosts.sessions import refreshed_catalog, setup_agent, wardian

MODEL = "gemini-2.5-pro"
SAID = "From now on always run the linter with ruff before committing in this repo."
BATCH = {"operations": [{"op": "save", "text": "Run the linter with ruff before committing.",
                         "kind": "stable", "scope": "workspace",
                         "evidence": "always run the linter with ruff before committing"}]}


def _quota(model: str) -> Failure:
    """The Gemini API's answer for a model the key has no quota for (Gemini CLI reads
    ``limit: 0`` as a terminal quota error, not one to retry)."""
    return Failure(429, "Quota exceeded for metric: generativelanguage.googleapis.com/"
                        f"generate_content_free_tier_requests, limit: 0, model: {model}")


def _start(host: Host, agent: str, transcript: Path, model: str = MODEL,
           effort: str | None = None) -> subprocess.CompletedProcess[str]:
    curator: dict[str, Any] = {"target_type": "temporary_provider", "provider": "gemini",
                               "model": model}
    if effort:
        curator["effort"] = effort
    return wardian(host, "automation", "run", "start", "memory-consolidation", "--agent",
                   agent, "--assignments", json.dumps({"curator": curator}), "--archive",
                   str(transcript), "--wait", "--json", check=False)


def _run(host: Host, agent: str, transcript: Path, model: str = MODEL) -> dict[str, Any]:
    done = _start(host, agent, transcript, model)
    assert done.stdout.strip(), done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Gemini's model catalog, refreshed once for the module by the real CLI
    (`tests.hosts.sessions.refreshed_catalog`) as an operator without a Gemini API key
    refreshes it (with one the adapter would ask the real Gemini API): the adapter's fixed
    list of concrete ids."""
    return refreshed_catalog(tmp_path_factory.mktemp("catalog"), "gemini",
                             keyless={"GEMINI_API_KEY", "GOOGLE_API_KEY"})


def _host(gemini_host: Host, wardian_home: Path, refreshed: Path) -> tuple[Host, str, Path]:
    gemini_host.env["PATH"] = f"{gemini_host.exe.parent}:{gemini_host.env['PATH']}"
    copy_home(refreshed, wardian_home)  # the catalog, refreshed once for the module
    agent = setup_agent(gemini_host, wardian_home, hooks=False, seed=())
    transcript = write_claude_session(
        gemini_host.workspace / "session.jsonl", "s-curator",
        [("user", SAID), ("assistant", "Understood: ruff first.")],
        cwd=str(gemini_host.workspace))
    return gemini_host, agent.name, transcript


def _nothing_committed(host: Host, wardian_home: Path, agent: str) -> None:
    assert W(wardian_home, env=host.env).records(agent) == []


def test_gemini_cli_curates_with_exactly_the_assigned_model(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    host.endpoint.script(Reply(Structured(BATCH)))
    run = _run(host, agent, transcript)
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    (request,) = host.endpoint.main_requests
    assert request.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert request.model == MODEL
    # No effort is assigned (the adapter has none to pass): Gemini CLI's own thinking
    # settings for a 2.5 model go out.
    assert request.reasoning == {"thinkingConfig": {"includeThoughts": True,
                                                    "thinkingBudget": 8192}}, request.reasoning
    assert SAID in request.text()
    records = [r["text"] for r in W(wardian_home, env=host.env).records(agent)]
    assert records == ["Run the linter with ruff before committing."]


def test_a_response_from_another_model_fails_the_step_and_commits_nothing(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    host.endpoint.script(Reply(Structured(BATCH), model="gemini-2.5-flash"))
    run = _run(host, agent, transcript)
    assert run["status"] == "failed", run
    error = json.dumps(run["error"])
    assert "another model answered: assigned model gemini-2.5-pro, observed model " \
           "gemini-2.5-flash (from result.stats.models)" in error, error
    _nothing_committed(host, wardian_home, agent)


def test_a_quota_error_fails_the_step_and_no_other_model_is_asked(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    host.endpoint.script(_quota(MODEL), Reply(Structured(BATCH)))
    run = _run(host, agent, transcript)
    assert run["status"] == "failed", run
    error = json.dumps(run["error"])
    assert f"quota exhausted while running model {MODEL}" in error, error
    # Headless Gemini CLI has no fallback handler: a concrete model's chain is that model.
    assert [r.model for r in host.endpoint.requests] == [MODEL]
    _nothing_committed(host, wardian_home, agent)


def test_a_model_gemini_cli_replaces_with_a_newer_one_fails_the_step(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    """Gemini CLI 0.61.0 asks gemini-3.8-flash for ``-m gemini-3.5-flash`` (its "latest
    flash" for an API key), while its init event still names gemini-3.5-flash."""
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    host.endpoint.script(Reply(Structured(BATCH)))
    run = _run(host, agent, transcript, "gemini-3.5-flash")
    assert [r.model for r in host.endpoint.requests] == ["gemini-3.8-flash"]
    assert run["status"] == "failed", run
    error = json.dumps(run["error"])
    assert "assigned model gemini-3.5-flash, observed model gemini-3.8-flash" in error, error
    _nothing_committed(host, wardian_home, agent)


def test_a_silent_fallback_after_a_quota_error_fails_the_step(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    """For ``-m gemini-3.1-flash-lite`` Gemini CLI asks gemini-3.5-flash-lite and, on a
    quota error, falls back without a word to gemini-3.8-flash (its flash-lite chain is
    silent), exiting 0 with that model's answer."""
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    host.endpoint.script(_quota("gemini-3.5-flash-lite"), Reply(Structured(BATCH)))
    run = _run(host, agent, transcript, "gemini-3.1-flash-lite")
    assert [r.model for r in host.endpoint.requests] == ["gemini-3.5-flash-lite",
                                                         "gemini-3.8-flash"]
    assert run["status"] == "failed", run
    error = json.dumps(run["error"])
    assert "observed models gemini-3.5-flash-lite, gemini-3.8-flash" in error, error
    _nothing_committed(host, wardian_home, agent)


def test_an_empty_answer_fails_with_geminis_error_not_as_a_fallback(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    """Gemini CLI's stderr says "Ripgrep is not available. Falling back to GrepTool." where
    ripgrep is missing; that is no model fallback."""
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    # Gemini CLI retries an empty answer, then gives up: up to 3 times after waits of 1, 2
    # and 4 s unless its ``general.maxAttempts`` setting allows fewer; 2 is one retry.
    settings = json.loads(host.gemini_settings.read_text())
    settings["general"]["maxAttempts"] = 2
    host.write_json(host.gemini_settings, settings)
    host.endpoint.script(*[Reply()] * 2)
    run = _run(host, agent, transcript)
    assert run["status"] == "failed", run
    error = json.dumps(run["error"])
    assert "The model returned an empty response" in error, error
    assert "fell back" not in error and "GrepTool (from" not in error, error
    assert [r.model for r in host.endpoint.main_requests] == [MODEL, MODEL]
    _nothing_committed(host, wardian_home, agent)


def test_an_effort_is_refused_before_anything_runs(
        gemini_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(gemini_host, wardian_home, refreshed)
    done = _start(host, agent, transcript, MODEL, "high")
    assert done.returncode == 2, done.stderr
    assert f"gemini model {MODEL} has no effort levels, but effort 'high' was assigned" \
           in done.stderr, done.stderr
    assert host.endpoint.requests == []
    _nothing_committed(host, wardian_home, agent)
