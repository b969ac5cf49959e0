"""The real opencode as the curator of a memory-consolidation run, through Wardian's
``opencode`` adapter: the model request carries exactly the assigned model and variant
(the effort), and the structured batch the model returns is committed; a model opencode
no longer has fails the step with Wardian's error and commits nothing; an effort the
model has no variant for is refused before anything runs.

opencode records the model it asked for, not the one that answered (its export carries
the configured ``providerID/modelID`` whatever the endpoint reports), so a reroute on the
provider's side cannot be seen through it; docs/hosts.md says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import building_home, copy_home
from tests.e2e._support import W, write_claude_session
from tests.hosts.conftest import require_host
from tests.hosts.endpoint import Reply, ScriptedEndpoint
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent, wardian

REASONER = "scripted-reasoner"
"""A model of the scripted provider that reasons, so opencode offers variants for it."""
SAID = "From now on always run the linter with ruff before committing in this repo."
BATCH = {"operations": [{"op": "save", "text": "Run the linter with ruff before committing.",
                         "kind": "stable", "scope": "workspace",
                         "evidence": "always run the linter with ruff before committing"}]}


def _start(host: Host, agent: str, transcript: Path, model: str,
           effort: str | None) -> subprocess.CompletedProcess[str]:
    curator: dict[str, Any] = {"target_type": "temporary_provider", "provider": "opencode",
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


def _config(host: Host) -> Path:
    return host.home / ".config" / "opencode" / "opencode.json"


def _with_reasoner(host: Host) -> None:
    """Add `REASONER` to the scripted provider and put opencode on the host's PATH (the
    adapter runs ``opencode`` from there)."""
    config = _config(host)
    data = json.loads(config.read_text())
    data["provider"]["scripted"]["models"][REASONER] = {"name": REASONER, "reasoning": True}
    config.write_text(json.dumps(data))
    host.env["PATH"] = f"{host.exe.parent}:{host.env['PATH']}"


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data directory holding opencode's model catalog, refreshed once for the module by
    the real CLI (``agent models --provider opencode --refresh`` runs ``opencode models``)
    from a host set up as each test's is; each test starts from its own copy."""
    root = tmp_path_factory.mktemp("catalog")
    with ScriptedEndpoint() as endpoint, building_home(root) as home:
        host = Host.create("opencode", require_host("opencode"), root / "opencode", endpoint)
        _with_reasoner(host)
        done = subprocess.run([sys.executable, "-m", "wardian", "agent", "models",
                               "--provider", "opencode", "--refresh"],
                              env={**host.env, "WARDIAN_HOME": str(home)}, cwd=host.workspace,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert f"scripted/{REASONER}" in done.stdout, done.stdout
    yield home


def _host(opencode_host: Host, wardian_home: Path, refreshed: Path) -> tuple[Host, str, Path]:
    _with_reasoner(opencode_host)
    copy_home(refreshed, wardian_home)
    agent = setup_agent(opencode_host, wardian_home, hooks=False, seed=())
    transcript = write_claude_session(
        opencode_host.workspace / "session.jsonl", "s-curator",
        [("user", SAID), ("assistant", "Understood: ruff first.")],
        cwd=str(opencode_host.workspace))
    return opencode_host, agent.name, transcript


def test_opencode_curates_with_exactly_the_assigned_model_and_variant(
        opencode_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(opencode_host, wardian_home, refreshed)
    host.endpoint.script(Reply(json.dumps(BATCH)))
    run = _run(host, agent, transcript, f"scripted/{REASONER}", "high")
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    (request,) = host.endpoint.main_requests
    assert request.model == REASONER
    assert request.reasoning.get("reasoning", {}).get("effort") == "high", request.reasoning
    assert SAID in request.text()
    records = [r["text"] for r in W(wardian_home, env=host.env).records(agent)]
    assert records == ["Run the linter with ruff before committing."]


def test_a_model_opencode_no_longer_has_fails_the_step_and_commits_nothing(
        opencode_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(opencode_host, wardian_home, refreshed)
    data = json.loads(_config(host).read_text())  # removed after the catalog was refreshed
    del data["provider"]["scripted"]["models"][REASONER]
    _config(host).write_text(json.dumps(data))
    host.endpoint.script(Reply(json.dumps(BATCH)))
    run = _run(host, agent, transcript, f"scripted/{REASONER}", "high")
    assert run["status"] == "failed", run
    assert f"opencode: model scripted/{REASONER}" in json.dumps(run["error"]), run["error"]
    assert host.endpoint.main_requests == []  # opencode asked no other model instead
    assert W(wardian_home, env=host.env).records(agent) == []


def test_an_effort_the_model_has_no_variant_for_is_refused_before_anything_runs(
        opencode_host: Host, wardian_home: Path, refreshed: Path) -> None:
    host, agent, transcript = _host(opencode_host, wardian_home, refreshed)
    done = _start(host, agent, transcript, "scripted/scripted-model", "high")
    assert done.returncode == 2, done.stderr
    assert "has no effort levels, but effort 'high' was assigned" in done.stderr
    assert host.endpoint.requests == []
    assert W(wardian_home, env=host.env).records(agent) == []
