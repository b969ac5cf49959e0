"""``--curator host`` end to end with the real Claude Code: ``wardian automation session-close
add --curator host`` picks a small model of the agent's own provider (``claude``) from its
refreshed catalog, prints it and stores it as an ordinary exact assignment; a real
``claude -p`` session closed by Wardian's SessionEnd hook then runs memory-consolidation
with Claude Code as the curator, whose model request carries exactly that model. The batch
the endpoint returns is committed when its evidence is the user's words in the session's
archive, and dropped (reported in the run, nothing stored) when it quotes words the session
never had."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._support import W
from tests.hosts.endpoint import Recorded, Reply, Structured
from tests.hosts.hostcli import Host
from tests.hosts.sessions import Agent as SessionAgent
from tests.hosts.sessions import archived, install, saved_from, wait_closed

MODEL = "claude-opus-4-5"
"""The model the user's own session runs with."""

HAIKU = "claude-haiku-5-5"
"""What the pinned Claude Code resolves the ``haiku`` alias to by default. The host's home
points the alias at the endpoint's side model (`tests.hosts.hostcli.SIDE_MODEL`), so the test
points it back (Claude Code's documented ANTHROPIC_DEFAULT_HAIKU_MODEL): an older Haiku such
as ``claude-haiku-4-5`` takes no effort in Claude Code, which then reports none and the
adapter fails the step closed."""

SAID = ("From now on, always write commit messages in the imperative mood and keep the "
        "subject line under fifty characters.")
QUOTE = "always write commit messages in the imperative mood"
RECORD = "Write commit messages in the imperative mood, subject under fifty characters."
INVENTED = "never squash commits before a release"
"""Words the session never had: evidence the archive cannot back."""


def _events(run_id: str) -> list[dict[str, Any]]:
    """The run's event log, read from state.db."""
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore

    store = RunStore(open_state_db())
    return store.events(run_id)


def _batch(evidence: str) -> dict[str, Any]:
    return {"operations": [{"op": "save", "text": RECORD, "kind": "stable",
                            "scope": "workspace", "evidence": evidence}]}


LISTED = [
    {"id": "claude-opus-5-5", "display_name": "Claude Opus 5.5",
     "capabilities": {"effort": {"levels": ["low", "medium", "high", "xhigh", "max"]}}},
    {"id": "claude-sonnet-5-5", "display_name": "Claude Sonnet 5.5",
     "capabilities": {"effort": {"levels": ["low", "medium", "high", "xhigh", "max"]}}},
    {"id": HAIKU, "display_name": "Claude Haiku 5.5",
     "capabilities": {"effort": {"levels": ["low", "medium", "high"]}}},
]
"""The Anthropic ``/v1/models`` listing the endpoint serves when the catalog is refreshed
with an API key."""


def _setup(host: Host, home: Path, *, listed: bool = False, name: str = "ada",
           ) -> tuple[SessionAgent, dict[str, Any], str]:
    """Memory + logging on, agent `name` on provider ``claude`` in the host's workspace,
    the claude catalog refreshed, a ``--curator host`` invoker added (returns its JSON and
    the line it printed), enabled, and Wardian's hooks installed.

    The catalog is refreshed as an operator without an Anthropic API key refreshes it
    (Claude Code's fixed aliases), or with `listed` as one with a key does: the Anthropic
    ``/v1/models`` listing (served by the endpoint, `LISTED`) before the aliases."""
    # The curator's ``claude`` is the pinned one (the drain worker the hook starts finds it
    # on PATH); its ``haiku`` alias resolves to HAIKU, not to the endpoint's side model.
    host.env["PATH"] = f"{host.exe.parent}:{host.env['PATH']}"
    host.env["ANTHROPIC_DEFAULT_HAIKU_MODEL"] = HAIKU
    w = W(home, env=host.env)
    w.run("settings", "set", "agent_memory.enabled", "true")
    w.run("settings", "set", "conversation_logging.enabled", "true")
    agent = w.json("agent", "add", name, "--provider", "claude",
                   "--workspace", str(host.workspace))
    if listed:
        host.endpoint.models = LISTED
        w.run("settings", "set", "providers.anthropic.base_url", host.endpoint.url)
        refresh_env = w.env
    else:
        refresh_env = {k: v for k, v in w.env.items() if k != "ANTHROPIC_API_KEY"}
    refreshed = subprocess.run([sys.executable, "-m", "wardian", "agent", "models",
                                "--provider", "claude", "--refresh"], env=refresh_env,
                               cwd=host.workspace, capture_output=True, text=True,
                               timeout=120, check=False)
    assert refreshed.returncode == 0, refreshed.stderr
    added = w.run("automation", "session-close", "add", "--blueprint",
                  "memory-consolidation", "--name", f"consolidate {name}", "--agent", name,
                  "--require-archive", "--curator", "host", "--json")
    created = json.loads(added.stdout)
    w.run("automation", "session-close", "enable", created["id"])
    install(host, name)
    return SessionAgent(agent["id"], name, created["id"], w), created, added.stderr


def _session(host: Host, agent: SessionAgent, batch: dict[str, Any]
             ) -> tuple[dict[str, Any], Recorded, Path]:
    """A real ``claude -p`` session whose user says `SAID`, closed by its SessionEnd hook;
    the endpoint answers the session's turn, then the curator's request with `batch`.
    Returns the invoker's run (history JSON), the curator's request and the transcript."""
    host.endpoint.script(Reply("Noted: imperative mood, short subjects."),
                         Reply(Structured(batch)))
    proc = host.run("-p", SAID, "--model", MODEL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (transcript,) = host.transcripts()
    event = wait_closed(agent, transcript)
    assert event.archive_status == "available", event.archive_detail
    assert archived(agent, transcript)
    (run,) = agent.w.wait_runs(agent.invoker, 1)
    session_turn, *rest = host.endpoint.main_requests
    assert session_turn.model == MODEL and SAID in session_turn.text()
    assert len(rest) == 1, [(r.model, r.path) for r in rest]
    assert host.endpoint.errors == [] and host.endpoint.overrun == 0
    return run, rest[0], transcript


@pytest.mark.parametrize(("listed", "chosen"), [(False, "haiku"), (True, HAIKU)],
                         ids=["fixed-aliases", "api-listing"])
def test_curator_host_assigns_a_small_exact_model_that_curates_the_session(
        claude_host: Host, wardian_home: Path, listed: bool, chosen: str) -> None:
    agent, created, printed = _setup(claude_host, wardian_home, listed=listed)
    # 1. the printed choice: the catalog's small model (the listed id before the alias),
    # its lowest effort
    assert f"curator: claude {chosen} effort low (catalog fetched " in printed, printed
    # 2. stored as an ordinary exact assignment (no fallback), as the CLI lists it
    expected = {"curator": {"target_type": "temporary_provider", "provider": "claude",
                            "model": chosen, "effort": "low"}}
    assert created["assignments"] == expected
    (invoker,) = agent.w.json("automation", "session-close", "list")
    assert invoker["assignments"] == expected and invoker["status"] == "enabled", invoker
    # 3. the real session, closed by its hook; the curator is Claude Code on that model
    run, curator, transcript = _session(claude_host, agent, _batch(QUOTE))
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    # the listed id itself, or the alias as Claude Code resolves it
    assert curator.model == HAIKU, curator.model
    assert curator.body.get("output_config", {}).get("effort") == "low", curator.reasoning
    assert SAID in curator.text()  # the archive of the session reached the curator
    commit = agent.w.steps(run["run_id"])["commit"]["output"]
    assert commit["dropped"] == [], commit
    (record,) = agent.w.records(agent.name)
    assert record["text"] == RECORD
    assert record["evidence"] == QUOTE
    assert saved_from(agent, transcript) == [record]  # the quote is the user's own words


def test_a_batch_quoting_words_the_session_never_had_commits_nothing(
        claude_host: Host, wardian_home: Path) -> None:
    agent, _, _ = _setup(claude_host, wardian_home)
    run, curator, _ = _session(claude_host, agent, _batch(INVENTED))
    assert curator.model == HAIKU
    assert run["status"] == "succeeded", json.dumps(run)[-3000:]
    commit = agent.w.steps(run["run_id"])["commit"]["output"]
    assert [d["code"] for d in commit["dropped"]] == ["evidence_not_found"], commit
    dropped = [e["data"] for e in _events(run["run_id"])
               if e["kind"] == "action.memory.op_dropped"]  # reported in the run
    assert [(e["code"], e["index"]) for e in dropped] == [("evidence_not_found", 0)], dropped
    assert agent.w.records(agent.name, include_removed=True) == []
