"""The operator's Garden services (`wardian.app.garden`, `.maintenance`, `.portable`,
`.instruction_import`) over real SQLite files: what the CLI and the web app now call
instead of opening stores themselves (issue 13)."""

from __future__ import annotations

import json
import sqlite3
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from wardian._util import format_utc, utc_now
from wardian.app import garden, maintenance, portable
from wardian.app.plan_file import write_plan
from wardian.config import open_state_db
from wardian.errors import NotFoundError, UsageError
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry

WS = "/srv/orchard"


@pytest.fixture
def owner(wardian_home: Path) -> str:
    registry = AgentRegistry(open_state_db())
    return registry.add("quill", provider="claude", workspace=WS).id


def _save(owner: str, text: str, *, kind: str = "stable") -> str:
    store = MemoryStore(open_memory_db())
    return store.save(owner, text, evidence="said in review", kind=kind,  # type: ignore[arg-type]
                      scope=Scope("workspace", WS), actor="test").id


def _status(record_id: str) -> str:
    store = MemoryStore(open_memory_db())
    return store.get(record_id, agent_id=None).status


def test_find_record_names_the_operators_list_command(
    owner: str
) -> None:
    record_id = _save(owner, "Lint runs before the image build")
    with pytest.raises(NotFoundError) as missing:
        garden.find_record(open_memory_db(), "ffffffff")
    assert missing.value.hint is not None
    assert "wardian garden memory list --agent NAME" in missing.value.hint
    assert garden.find_record(open_memory_db(), record_id[:10]).id == record_id
    record, revisions = garden.record_history(open_memory_db(), record_id[:10])
    assert record.id == record_id and [r.seq for r in revisions] == [1]


def test_stale_checkpoints_follow_the_review_setting(owner: str, wardian_home: Path) -> None:
    old = _save(owner, "Halfway through renaming the queue", kind="current")
    _save(owner, "Another checkpoint, fresh", kind="current")
    conn = sqlite3.connect(wardian_home / "memory.db")
    conn.execute("UPDATE records SET updated_at = ? WHERE id = ?",
                 (format_utc(utc_now() - timedelta(days=9)), old))
    conn.commit()
    conn.close()
    found = garden.stale_checkpoints(open_state_db(), open_memory_db(), owner)
    assert found.review_days == 14 and found.records == []
    from wardian.config import SettingsStore

    settings = SettingsStore(open_state_db())
    settings.set("memory.current_review_days", "7")
    found = garden.stale_checkpoints(open_state_db(), open_memory_db(), owner)
    assert found.review_days == 7 and [s.record.id for s in found.records] == [old]
    plan = maintenance.stale_retire_plan(owner, found.records, review_days=7)
    assert [op["memory_id"] for op in plan["operations"]] == [old]


def test_a_web_confirmation_applies_only_what_the_dialog_showed(owner: str) -> None:
    record_id = _save(owner, "The staging cluster is retired")
    plan, _ = maintenance.retire_record_plan(open_memory_db(), owner, record_id,
                                             reason="superseded")
    maintenance.preview_plan(plan, owner)
    shown = maintenance.confirmation_for(plan, owner)
    assert (shown.owner_id, shown.operation_count) == (owner, 1)
    assert shown.digest_prefix.startswith("sha256:") and len(shown.digest_prefix) == 19

    wrong = (owner, "1", "sha256:000000000000")
    with pytest.raises(maintenance.ApplyAborted, match="not this plan's"):
        maintenance.apply_loaded(plan, owner,
                                 confirm=maintenance.confirmed_as_shown("apply", wrong))
    maintenance.preview_plan(plan, owner)  # an aborted apply spends the reviewed preview
    with pytest.raises(maintenance.ApplyAborted):  # declined: zero changes
        maintenance.apply_loaded(plan, owner, confirm=maintenance.confirmed_as_shown(
            "decline", (owner, "1", shown.digest_prefix)))
    assert _status(record_id) == "active"
    maintenance.preview_plan(plan, owner)
    result = maintenance.apply_loaded(plan, owner, confirm=maintenance.confirmed_as_shown(
        "apply", (owner, "1", shown.digest_prefix)))
    assert not result.replayed and _status(record_id) == "removed"


def test_revise_scope_takes_agent_workspace_or_an_absolute_path(owner: str) -> None:
    assert maintenance.revise_scope(None) is None
    assert maintenance.revise_scope("agent") == Scope.agent()
    assert maintenance.revise_scope("/srv/elsewhere") == Scope.workspace("/srv/elsewhere")
    with pytest.raises(UsageError, match="unknown scope"):
        maintenance.revise_scope("team")
    record_id = _save(owner, "Deploys go out on Tuesdays")
    plan, document = maintenance.revise_record_plan(
        open_memory_db(), owner, record_id, scope=maintenance.revise_scope("agent"))
    assert document["operations"][0]["scope"] == {"kind": "agent"}
    assert plan.plan_id == document["plan_id"]


def test_export_restore_round_trip_confirms_the_files_digest(
    owner: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_id = _save(owner, "Releases are tagged from main only")
    exported = portable.export_text(open_memory_db(), owner, "quill", fmt="json")
    assert exported.records == 1
    path = tmp_path / "quill.json"
    path.write_text(exported.text, encoding="utf-8")
    with pytest.raises(UsageError, match="exactly one"):
        portable.read_export([path, path])
    with pytest.raises(UsageError, match="unknown format"):
        portable.export_text(open_memory_db(), owner, "quill", fmt="yaml")
    export = portable.read_export([path])
    assert (export.records, export.revisions) == (1, 1)
    with pytest.raises(maintenance.ConfirmationMismatch):
        portable.confirm_restore(export, "restore?", "sha256:000000000000")

    fresh = tmp_path / "fresh-home"
    fresh.mkdir(mode=0o700)
    monkeypatch.setenv("WARDIAN_HOME", str(fresh))
    # The question itself is asked on the controlling terminal (tests/memory/maintenance/
    # test_human_step.py runs it on a pseudo-terminal); the restore writes what was confirmed.
    result = portable.restore_export(open_memory_db(), export, owner)
    assert (result.records, result.revisions) == (1, 1)
    restored = garden.find_record(open_memory_db(), record_id)
    assert restored.text == "Releases are tagged from main only"


def test_write_plan_is_private_and_defaults_to_the_data_dirs_plans(wardian_home: Path) -> None:
    plan = {"plan_id": "import-0123", "operations": []}
    path = write_plan(plan)
    assert path == wardian_home / "plans" / "import-0123.json"
    assert json.loads(path.read_text(encoding="utf-8")) == plan
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_record_marks_show_why_a_record_is_flagged(owner: str, wardian_home: Path) -> None:
    clean = _save(owner, "Lint runs before the image build")
    flagged = _save(owner, "The staging host answers on port 8443")
    conn = sqlite3.connect(wardian_home / "memory.db")
    with conn:  # as the secret-scan migration sets it aside
        conn.execute("UPDATE records SET flagged = ? WHERE id = ?",
                     ("secret_detected: Private Key in text", flagged))
    conn.close()
    assert garden.record_marks(garden.find_record(open_memory_db(), clean)) == []
    assert garden.record_marks(garden.find_record(open_memory_db(), flagged)) == [
        "flagged: secret_detected: Private Key in text"]
