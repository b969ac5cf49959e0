"""The same consolidation flow with a fake ``codex`` executable on PATH as the curator
(issue 9 acceptance): the exact ``-m`` and ``-c model_reasoning_effort`` are passed; a
reply naming another model fails the run and commits nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e._support import W, install_fake_codex, recorded_calls, write_claude_session
from wardian.memory.consolidation import get_cursor
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore

MODEL, EFFORT = "gpt-5.2-codex", "low"
ASSIGNMENTS = {"curator": {"target_type": "temporary_provider", "provider": "codex",
                           "model": MODEL, "effort": EFFORT}}
ANSWER = json.dumps({"operations": [
    {"op": "save", "text": "Use pnpm, not npm, in this repository", "kind": "stable",
     "scope": "workspace", "evidence": "always use pnpm instead of npm in this repository"},
    {"op": "save", "text": "The user likes yarn", "kind": "stable", "scope": "workspace",
     "evidence": "I love yarn"},  # not in the transcript: must be dropped
]})


def _transcript(tmp_path: Path) -> Path:
    return write_claude_session(tmp_path / "codex-curated.jsonl", "codex-curated", [
        ("user", "Please always use pnpm instead of npm in this repository."),
        ("assistant", "Understood."),
    ])


def _codex_exec_calls(record: Path) -> list[dict[str, object]]:
    return [c for c in recorded_calls(record) if c.get("mode") != "app-server"
            and "exec" in c["argv"]]


def _events(run_id: str) -> list[dict[str, Any]]:
    """The run's event log, read from state.db."""
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore

    store = RunStore(open_state_db())
    return store.events(run_id)


def _cursor(agent_id: str) -> int | None:
    store = MemoryStore(open_memory_db())
    return get_cursor(store, agent_id)


def test_codex_curator_gets_the_exact_model_and_effort(w: W, tmp_path: Path) -> None:
    record = install_fake_codex(w, tmp_path, scenario="ok", answer=ANSWER)
    agent_id, invoker = w.setup_agent("coder", assignments=ASSIGNMENTS,
                                      refresh=("codex",))
    w.close("coder", "s1", _transcript(tmp_path))
    (run,) = w.wait_runs(invoker, 1)
    assert run["status"] == "succeeded", (run, w.drain_log())

    (call,) = _codex_exec_calls(record)
    argv = call["argv"]
    assert isinstance(argv, list)
    assert argv[argv.index("-m") + 1] == MODEL
    assert argv[argv.index("-c") + 1] == f"model_reasoning_effort={EFFORT}"
    assert argv.count("-m") == 1 and "--fallback-model" not in argv

    commit = w.steps(run["run_id"])["commit"]["output"]
    assert [d["code"] for d in commit["dropped"]] == ["evidence_not_found"]
    dropped_events = [e["data"] for e in _events(run["run_id"])
                      if e["kind"] == "action.memory.op_dropped"]  # reported in the run
    assert [(e["code"], e["index"]) for e in dropped_events] == [("evidence_not_found", 1)]
    (record_doc,) = w.records("coder")
    assert record_doc["text"] == "Use pnpm, not npm, in this repository"
    assert _cursor(agent_id) == commit["cursor"] is not None


def test_a_reply_from_another_model_fails_the_run_and_commits_nothing(
    w: W, tmp_path: Path
) -> None:
    record = install_fake_codex(w, tmp_path, scenario="mismatch", answer=ANSWER)
    agent_id, invoker = w.setup_agent("coder", assignments=ASSIGNMENTS,
                                      refresh=("codex",))
    w.close("coder", "s1", _transcript(tmp_path))
    (run,) = w.wait_runs(invoker, 1)
    assert run["status"] == "failed", run
    assert MODEL in (run["error"] or "") and "gpt-5.1-codex-mini" in (run["error"] or "")
    steps = w.steps(run["run_id"])
    assert steps["curate"]["status"] == "failed"
    assert "commit" not in steps  # never reached
    assert w.records("coder", include_removed=True) == []
    assert _cursor(agent_id) is None
    assert len(_codex_exec_calls(record)) == 1  # no retry with another model
