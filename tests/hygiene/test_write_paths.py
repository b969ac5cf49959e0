"""The shared scanner on the other write paths: consolidation commit, plan preview and
apply, archive import, and a run's stored step inputs, outputs and events."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

from wardian.engine.actions import ActionContext, get_action
from wardian.memory.store import MemoryStore

AGENT = "11111111-1111-4111-8111-111111111111"
_RNG = random.Random(77)


def _token() -> str:
    return "ghp" + "_" + "".join(_RNG.choice(string.ascii_letters + string.digits)
                                 for _ in range(36))


def test_consolidation_drops_a_secret_op_with_a_run_event() -> None:
    token = _token()
    password = "Tr0ub" + "4dor&3"
    archive_text = (f"user: deploy with {token} please\n"
                    f"user: The DB password should always be {password} in staging.\n"
                    "user: always run the linters before committing\n")
    archive = {"text": archive_text, "messages": [], "cursor": None}
    batch = {"operations": [
        {"op": "save", "text": f"Deploy with {token}", "evidence": f"deploy with {token}"},
        {"op": "save", "text": "The DB password is set for staging",
         "evidence": f"The DB password should always be {password} in staging."},
        {"op": "save", "text": "Run the linters before committing",
         "evidence": "always run the linters before committing"},
    ]}
    events: list[tuple[str, dict[str, Any]]] = []
    ctx = ActionContext(
        run_id="run-1", step_id="commit", attempt=1, agent_id=AGENT, workspace="/repo",
        invocation={"trigger": "manual", "payload": {}}, inputs={}, steps={},
        idempotency_key=None, emit=lambda kind, data: events.append((kind, data)),
        agent_name="dev",
    )
    result = get_action("memory.commit")(ctx, batch=batch, archive=archive)
    assert result["counts"]["save"] == 1 and result["counts"]["dropped"] == 2
    dropped = [data for kind, data in events if kind == "memory.op_dropped"]
    assert [d["code"] for d in dropped] == ["secret_detected", "secret_detected"]
    assert "GitHub Token in text" in dropped[0]["reason"]
    assert "Password Assignment in evidence" in dropped[1]["reason"]
    dumped = json.dumps([events, result])
    assert token not in dumped and password not in dumped
    store = MemoryStore()
    assert [r.text for r in store.list(AGENT)] == ["Run the linters before committing"]
    store.close()


def test_plan_preview_reports_secret_detected_and_apply_is_disabled(
    tmp_path: Path, wardian_home: Path
) -> None:
    from tests.conftest import invoke
    from typer.testing import CliRunner

    from wardian.memory.models import Scope
    from wardian.runtime.agents import AgentRegistry

    cli = CliRunner()
    owner = AgentRegistry().add("ada", provider="claude", workspace=str(tmp_path))
    store = MemoryStore()
    record = store.save(owner.id, "Deploy from CI", evidence="e", scope=Scope.agent(),
                        actor="test")
    store.close()
    token = _token()
    plan = {
        "schema_version": 1, "plan_id": "p-secret", "agent_id": owner.id,
        "idempotency_key": "k-secret", "operations": [
            {"op": "create", "client_key": "c1", "text": f"Deploy with {token}",
             "kind": "stable", "scope": {"kind": "agent"}, "evidence_excerpt": "chat"},
            {"op": "revise", "memory_id": record.id,
             "expected_revision_id": record.current_revision_id,
             "evidence_excerpt": "The admin password is " + "hunter" + "22"},
        ],
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    shown = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "ada", "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert doc["conflict_free"] is False
    assert [(c["kind"], c["path"], c["detector"]) for c in doc["conflicts"]] == [
        ("secret_detected", "operations[0].text", "GitHub Token"),
        ("secret_detected", "operations[1].evidence_excerpt", "Password Assignment"),
    ]
    assert token not in shown.stdout and "hunter22" not in shown.stdout
    human = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "ada")
    assert "CONFLICT secret_detected" in human.stdout and token not in human.stdout
    assert "apply is disabled" in human.stdout
    applied = invoke(cli, "garden", "maintain", "apply", str(path), "--agent", "ada",
                     "--confirm", doc["digest_prefix"])
    assert applied.exit_code == 4, applied.output
    store = MemoryStore()
    assert [r.text for r in store.list(owner.id)] == ["Deploy from CI"]
    assert store.get(record.id).evidence == "e"
    store.close()
    from wardian.memory.maintenance.previews import PreviewCache

    cache = PreviewCache()
    rows = cache.conn.execute("SELECT preview_json FROM maintenance_previews").fetchall()
    cache.close()
    assert all(token not in row[0] for row in rows)
