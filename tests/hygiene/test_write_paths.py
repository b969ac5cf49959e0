"""The shared scanner on the other write paths: consolidation commit, plan preview and
apply, archive import, and a run's stored step inputs, outputs and events."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

from wardian.engine.actions import ActionContext, get_action
from wardian.memory.db import open_memory_db
from wardian.memory.store import MemoryStore


def _dbs() -> dict[str, Any]:
    """The current home's databases, as the action wrapper passes them."""
    from wardian.config import open_state_db

    return {"state": open_state_db(), "memory": open_memory_db()}

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
    archive: dict[str, Any] = {"text": archive_text, "messages": [], "cursor": None}
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
    assert result.counts["save"] == 1 and result.counts["dropped"] == 2
    dropped = [data for kind, data in events if kind == "memory.op_dropped"]
    assert [d["code"] for d in dropped] == ["secret_detected", "secret_detected"]
    assert "GitHub Token in text" in dropped[0]["reason"]
    assert "Password Assignment in evidence" in dropped[1]["reason"]
    dumped = json.dumps([events, result.model_dump(mode="json")])
    assert token not in dumped and password not in dumped
    store = MemoryStore(open_memory_db())
    assert [r.text for r in store.list(AGENT)] == ["Run the linters before committing"]


def test_plan_preview_reports_secret_detected_and_apply_is_disabled(
    tmp_path: Path, wardian_home: Path
) -> None:

    from typer.testing import CliRunner

    from tests.conftest import invoke
    from wardian.config import open_state_db
    from wardian.memory.models import Scope
    from wardian.runtime.agents import AgentRegistry

    cli = CliRunner()
    owner = AgentRegistry(open_state_db()).add("ada", provider="claude", workspace=str(tmp_path))
    store = MemoryStore(open_memory_db())
    record = store.save(owner.id, "Deploy from CI", evidence="e", scope=Scope.agent(),
                        actor="test")
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
    store = MemoryStore(open_memory_db())
    assert [r.text for r in store.list(owner.id)] == ["Deploy from CI"]
    assert store.get(record.id).evidence == "e"
    from wardian.config import open_state_db
    from wardian.memory.maintenance.previews import PreviewCache

    cache = PreviewCache(open_state_db())
    rows = cache.conn.execute("SELECT preview_json FROM maintenance_previews").fetchall()
    assert all(token not in row[0] for row in rows)


def _claude_line(role: str, text: str, n: int) -> str:
    message: dict[str, object] = (
        {"role": "user", "content": text} if role == "user" else
        {"role": "assistant", "model": "claude-x", "id": f"m{n}",
         "content": [{"type": "text", "text": text}]})
    return json.dumps({
        "type": role, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
        "sessionId": "s1", "timestamp": "2026-11-29T10:00:00Z", "cwd": "/repo",
        "message": message,
    })


def test_archive_import_stores_placeholders_and_counts_them(tmp_path: Path) -> None:
    from wardian.app.consolidation import archive_load
    from wardian.config import open_state_db
    from wardian.runtime.archives import ArchiveStore

    token = _token()
    key = "AKIA" + "".join(_RNG.choice(string.ascii_uppercase) for _ in range(16))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([
        _claude_line("user", f"use {token} and {key} for the deploy", 0),
        _claude_line("assistant", "Done; the deploy ran.", 1),
        _claude_line("user", "Always run the linters first.", 2),
    ]) + "\n", encoding="utf-8")
    archives = ArchiveStore(open_state_db())
    manifest = archives.import_transcript(AGENT, path, event_id="e1")
    assert manifest.secrets_redacted == 2
    stored = archives.conn.execute("SELECT text, meta_json FROM archive_messages").fetchall()
    assert token not in json.dumps([tuple(r) for r in stored]) and key not in str(stored[0][0])
    assert stored[0][0] == ("use [REDACTED:github-token] and [REDACTED:aws-access-key] "
                            "for the deploy")
    # The same file closed again adds nothing (the archived prefix compares redacted).
    again = archives.import_transcript(AGENT, path, event_id="e2")
    assert again.message_count == 0
    loaded = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo")
    assert loaded["secrets_redacted"] == 2 and token not in loaded["text"]
    from_file = archive_load(**_dbs(), agent_id=AGENT, agent_name="dev", workspace="/repo",
                             transcript_path=str(path))
    assert from_file["secrets_redacted"] == 2 and token not in json.dumps(from_file)


LEAKY = """\
blueprint: {id: leaky, name: Leaky, version: 1}
inputs:
  note: {type: string, default: "nothing here"}
steps:
  - id: fetch
    action: test.fetch
    with: {hint: "{{ inputs.note }}"}
  - id: tell
    action: log
    with: {message: "fetched {{ steps.fetch.output.key }}"}
"""


def test_run_step_inputs_outputs_and_events_are_stored_redacted(
    tmp_path: Path, wardian_home: Path
) -> None:
    import sqlite3

    from tests.engine.helpers import actions, create_run, write_blueprint
    from wardian.config import open_state_db
    from wardian.engine.executor import execute_run
    from wardian.engine.runs import RunStore

    token = _token()
    password = "Tr0ub" + "4dor&3"

    def fetch(ctx: Any, hint: str) -> dict[str, str]:
        ctx.emit("fetched", {"detail": f"the password is {password}"})
        return {"key": token, "hint": hint}

    store = RunStore(open_state_db())
    with actions(**{"test.fetch": fetch}):
        run = create_run(store, write_blueprint(tmp_path / "bp", LEAKY))
        final = execute_run(run.id, store=store)
    assert final.status == "succeeded", final.error
    attempts = {a.step_id: a for a in final.attempts}
    assert attempts["fetch"].output == {"key": "[REDACTED:github-token]",
                                        "hint": "nothing here"}
    assert attempts["tell"].input["with"]["message"] == "fetched [REDACTED:github-token]"
    conn = sqlite3.connect(wardian_home / "state.db")
    for table in ("runs", "step_attempts", "run_events"):
        for row in conn.execute(f"SELECT * FROM {table}"):
            stored = " ".join(str(v) for v in row)
            assert token not in stored and password not in stored, table
    conn.close()
