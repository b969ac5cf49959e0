"""`wardian memory draft-plan` through the real CLI inside a (capability-holding) managed
context: prints a plan for the agent's own records and writes nothing; the operator then
previews it (spec "Operator maintenance in Garden"; issue 3 point 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import invoke

from wardian.memory.maintenance.plan import load_plan_file


def _managed_env(agent_id: str) -> dict[str, str]:
    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    me = current()
    store = MemoryStore(open_memory_db())
    token = CapabilityStore(store.conn).mint(
        agent_id, pid=me.pid, started_at=me.started_at, workspace=None
    )
    return {"WARDIAN_AGENT_ID": agent_id, "WARDIAN_CAPABILITY": token}


def test_draft_plan_prints_a_plan_for_own_records_and_writes_nothing(
    kit: Any, cli: Any, tmp_path: Path
) -> None:
    a, b = kit.record("a"), kit.record("b")
    foreign = kit.record("foreign", agent=kit.other)
    env = _managed_env(kit.owner.id)
    before = kit.fingerprint()
    result = invoke(cli, "memory", "draft-plan", a.id[:8], b.id, env=env)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["agent_id"] == kit.owner.id
    assert [op["expected_revision_id"] for op in doc["operations"]] == [
        a.current_revision_id, b.current_revision_id]
    out = tmp_path / "draft.json"
    result = invoke(cli, "memory", "draft-plan", a.id, "--output", str(out), env=env)
    assert result.exit_code == 0, result.stderr
    assert load_plan_file(out).agent_id == kit.owner.id
    refused = invoke(cli, "memory", "draft-plan", foreign.id, env=env)
    assert refused.exit_code == 1
    assert kit.fingerprint() == before
    # The agent may draft, but not preview or apply.
    denied = invoke(cli, "garden", "maintain", "preview", str(out), "--agent", "alice", env=env)
    assert denied.exit_code == 3
    # The operator previews the draft: conflict-free against the current revisions.
    preview = invoke(cli, "garden", "maintain", "preview", str(out), "--agent", "alice",
                     "--json")
    assert preview.exit_code == 0 and json.loads(preview.stdout)["conflict_free"]
