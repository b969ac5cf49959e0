"""Review mode's plan (`build_plan`) drops exactly what a commit (`commit_curator_batch`)
of the same batch drops, for every reason a commit has: the rules are one definition
(`wardian.memory.consolidation.check_operations`). Each batch is made up for the test and
run twice on one state: planned (read-only), then committed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wardian.app.consolidation import (
    archive_load,
    build_plan,
    commit_curator_batch,
    parse_curator_batch,
)
from wardian.config import open_state_db
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore
from wardian.runtime.archives import ArchiveStore


def _dbs() -> dict[str, Any]:
    """The current home's databases, as the action wrapper passes them."""
    from wardian.config import open_state_db

    return {"state": open_state_db(), "memory": open_memory_db()}

AGENT = "22222222-2222-4222-8222-222222222222"
LEAKED = "ghp_" + "Xq7RtVb2NcLm9KpZ4sWd8FyH1jUe3aGo6iQk"  # a GitHub token shape, made up


def _transcript(path: Path, lines: list[str]) -> Path:
    import json

    rows = [json.dumps({"type": "user", "uuid": f"u{i}", "sessionId": path.stem,
                        "timestamp": "2026-12-06T10:00:00Z", "cwd": "/work/orchard",
                        "message": {"role": "user", "content": text}})
            for i, text in enumerate(lines)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _codes(dropped: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(d["index"], d["code"]) for d in dropped]


@pytest.fixture
def state(tmp_path: Path, wardian_home: Path) -> dict[str, Any]:
    """Two records (one removed), and an archive of two sessions of which the first was
    consolidated by an earlier run."""
    store = MemoryStore(open_memory_db())
    kept = store.save(AGENT, "Orchard deploys go through the staging queue first.",
                      evidence="e", scope=Scope("workspace", "/work/orchard"), actor="t")
    gone = store.save(AGENT, "Orchard used tabs once.", evidence="e",
                      scope=Scope("workspace", "/work/orchard"), actor="t")
    store.remove(AGENT, gone.id, reason="no longer true", actor="t")
    archives = ArchiveStore(open_state_db())
    archives.import_transcript(AGENT, _transcript(tmp_path / "one.jsonl", [
        "The cache warms before the orchard benchmarks run."]), event_id="e1")
    first = archive_load(**_dbs(),
        agent_id=AGENT, agent_name="orchard", workspace="/work/orchard")
    archives.import_transcript(AGENT, _transcript(tmp_path / "two.jsonl", [
        "Please keep the orchard changelog in docs/CHANGES.md from now on.",
        f"my token is {LEAKED} for the orchard bot",
        "The staging queue is retired; deploys go straight to production now.",
    ]), event_id="e2")
    return {"kept": kept, "gone": gone, "first": first}


def test_the_plan_drops_what_the_commit_drops(state: dict[str, Any]) -> None:
    archive = archive_load(**_dbs(),
                           agent_id=AGENT, agent_name="orchard", workspace="/work/orchard")
    # another run consolidates the first session after this slice was read
    commit_curator_batch(memory=open_memory_db(),
                         run_id="earlier", agent_id=AGENT, workspace="/work/orchard",
                         operations=[], archive=state["first"], idempotency_key="earlier")
    kept, gone = state["kept"], state["gone"]
    ops = parse_curator_batch({"operations": [
        {"op": "save", "text": "Keep the changelog in docs/CHANGES.md.",
         "evidence": "keep the orchard changelog in docs/CHANGES.md"},
        {"op": "save", "text": "The cache warms before benchmarks.",  # consolidated meanwhile
         "evidence": "The cache warms before the orchard benchmarks run."},
        {"op": "save", "text": f"The orchard bot token is {LEAKED}",  # the archive
         "evidence": "for the orchard bot"},  # keeps it redacted; the curator made it up
        {"op": "save", "text": "orchard deploys go through the staging  queue first.",
         "evidence": "deploys go straight to production"},
        {"op": "update", "memory_id": kept.id[:8],
         "text": "Orchard deploys go straight to production.",
         "evidence": "deploys go straight to production now"},
        {"op": "remove", "memory_id": gone.id, "evidence": "The staging queue is retired",
         "reason": "retired"},
        {"op": "remove", "memory_id": "deadbeef", "evidence": "The staging queue is retired",
         "reason": "retired"},
        {"op": "save", "text": "Invented rule.", "evidence": "nobody said this"},
        {"op": "save", "text": "Past the limit.", "evidence": "from now on"},
    ]})
    plan, planned_drops = build_plan(memory=open_memory_db(),
                                     run_id="r", agent_id=AGENT, workspace="/work/orchard",
                                     operations=ops, archive=archive, idempotency_key=None,
                                     max_changes=8)
    expected = [(1, "already_consolidated"), (2, "secret_detected"), (3, "duplicate"),
                (5, "already_removed"), (6, "not_found"), (7, "evidence_not_found"),
                (8, "over_max_changes")]
    assert _codes(planned_drops) == expected
    assert plan is not None and [op["op"] for op in plan["operations"]] == ["create", "revise"]
    assert LEAKED not in repr(plan) and LEAKED not in repr(planned_drops)
    committed = commit_curator_batch(memory=open_memory_db(),
                                     run_id="r", agent_id=AGENT, workspace="/work/orchard",
                                     operations=ops, archive=archive, idempotency_key="r",
                                     max_changes=8)
    assert _codes(committed["dropped"]) == expected
    assert [a["op"] for a in committed["applied"]] == ["save", "update"]
