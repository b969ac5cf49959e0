"""The real Gemini CLI as the curator of a memory-consolidation run, through Wardian's
``gemini`` adapter."""

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

MODEL = "gemini-2.5-pro"
SAID = "From now on always run the linter with ruff before committing in this repo."
BATCH = {"operations": [{"op": "save", "text": "Run the linter with ruff before committing.",
                         "kind": "stable", "scope": "workspace",
                         "evidence": "always run the linter with ruff before committing"}]}


def _start(host: Host, agent: str, transcript: Path,
           effort: str | None = None) -> subprocess.CompletedProcess[str]:
    curator: dict[str, Any] = {"target_type": "temporary_provider", "provider": "gemini",
                               "model": MODEL}
    if effort:
        curator["effort"] = effort
    return wardian(host, "automation", "run", "start", "memory-consolidation", "--agent",
                   agent, "--assignments", json.dumps({"curator": curator}), "--archive",
                   str(transcript), "--wait", "--json", check=False)


def _run(host: Host, agent: str, transcript: Path) -> dict[str, Any]:
    done = _start(host, agent, transcript)
    assert done.stdout.strip(), done.stderr
    return dict(json.loads(done.stdout))


def _host(gemini_host: Host, wardian_home: Path) -> tuple[Host, str, Path]:
    gemini_host.env["PATH"] = f"{gemini_host.exe.parent}:{gemini_host.env['PATH']}"
    agent = setup_agent(gemini_host, wardian_home, hooks=False, seed=())
    # Refreshed as an operator without a Gemini API key refreshes it (the adapter would
    # otherwise ask the real Gemini API): the fixed list of concrete ids.
    keyless = {k: v for k, v in gemini_host.env.items()
               if k not in {"GEMINI_API_KEY", "GOOGLE_API_KEY"}}
    refreshed = subprocess.run([sys.executable, "-m", "wardian", "agent", "models",
                                "--provider", "gemini", "--refresh"], env=keyless,
                               cwd=gemini_host.workspace, capture_output=True, text=True,
                               timeout=120, check=False)
    assert refreshed.returncode == 0, refreshed.stderr
    transcript = write_claude_session(
        gemini_host.workspace / "session.jsonl", "s-curator",
        [("user", SAID), ("assistant", "Understood: ruff first.")],
        cwd=str(gemini_host.workspace))
    return gemini_host, agent.name, transcript


def test_gemini_cli_curates_with_exactly_the_assigned_model(
        gemini_host: Host, wardian_home: Path) -> None:
    host, agent, transcript = _host(gemini_host, wardian_home)
    host.endpoint.script(Reply(Structured(BATCH)))
    run = _run(host, agent, transcript)
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    (request,) = host.endpoint.main_requests
    assert request.model == MODEL
    assert SAID in request.text()
    records = [r["text"] for r in W(wardian_home, env=host.env).records(agent)]
    assert records == ["Run the linter with ruff before committing."]
