"""Stale `current` checkpoints (age in the startup context, `garden memory stale`, a retire
plan) and one-record corrections (`garden memory retire|revise`) through the real CLI."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import invoke
from tests.terminal import on_terminal, without_terminal
from wardian._util import format_utc, utc_now
from wardian.config import open_state_db
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.recall import load_startup_context
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry

WS = "/work/project"


@pytest.fixture
def owner(wardian_home: Path) -> str:
    return AgentRegistry(open_state_db()).add("ada", provider="claude", workspace=WS).id


def _age(home: Path, record_id: str, days: int) -> None:
    """Make a record look saved `days` ago (as if written then)."""
    conn = sqlite3.connect(home / "memory.db")
    conn.execute("UPDATE records SET updated_at = ? WHERE id = ?",
                 (format_utc(utc_now() - timedelta(days=days, minutes=5)), record_id))
    conn.commit()
    conn.close()


def _save(text: str, owner: str, kind: str = "current") -> str:
    store = MemoryStore(open_memory_db())
    record = store.save(owner, text, evidence="e", kind=kind,  # type: ignore[arg-type]
                        scope=Scope("workspace", WS), actor="test")
    return record.id


def test_startup_context_shows_age_and_marks_old_checkpoints_stale(
    owner: str, wardian_home: Path
) -> None:
    fresh = _save("Release validation awaits a macOS run", owner)
    old = _save("Migrating the billing tables", owner)
    _save("Prefer small commits", owner, kind="stable")
    _age(wardian_home, fresh, 3)
    _age(wardian_home, old, 20)
    store = MemoryStore(open_memory_db())
    context = load_startup_context(store, agent_id=owner, agent_name="ada", workspace=WS)
    lines = {line.split("] ", 1)[0][-8:]: line for line in context.text.splitlines()
             if line.startswith("- [")}
    assert lines[fresh[:8]].endswith("Release validation awaits a macOS run (saved 3 days ago)")
    assert lines[old[:8]].endswith(
        "(saved 20 days ago; stale: update it if still active, else remove it)")
    assert "saved" not in next(v for v in lines.values() if "Prefer small commits" in v)
    # A longer review period makes the 20-day one fresh again.
    relaxed = load_startup_context(store, agent_id=owner, agent_name="ada", workspace=WS,
                                   current_review_days=30)
    assert "stale" not in relaxed.text


def test_stale_lists_old_checkpoints_and_drafts_a_retire_plan(
    cli: CliRunner, owner: str, wardian_home: Path, tmp_path: Path
) -> None:
    old = _save("Migrating the billing tables", owner)
    _save("Fresh checkpoint", owner)
    _age(wardian_home, old, 15)
    listed = invoke(cli, "garden", "memory", "stale", "--agent", "ada", "--json")
    assert listed.exit_code == 0, listed.output
    doc = json.loads(listed.stdout)
    assert [(r["id"], r["age_days"]) for r in doc["records"]] == [(old, 15)]
    assert doc["current_review_days"] == 14
    assert invoke(cli, "settings", "set", "memory.current_review_days", "30").exit_code == 0
    assert json.loads(invoke(cli, "garden", "memory", "stale", "--agent", "ada",
                             "--json").stdout)["records"] == []
    assert invoke(cli, "settings", "set", "memory.current_review_days", "14").exit_code == 0
    plan = tmp_path / "stale.json"
    shown = invoke(cli, "garden", "memory", "stale", "--agent", "ada", "--draft-plan", str(plan))
    assert "saved 15 days ago" in shown.stdout and "Retire plan written" in shown.stdout
    document = json.loads(plan.read_text(encoding="utf-8"))
    assert [op["op"] for op in document["operations"]] == ["retire"]
    preview = json.loads(invoke(cli, "garden", "maintain", "preview", str(plan), "--agent",
                                "ada", "--json").stdout)
    assert preview["conflict_free"] is True
    applied = on_terminal("garden", "maintain", "apply", str(plan), "--agent", "ada",
                          "--confirm", preview["digest_prefix"], answer="yes")
    assert applied.exit_code == 0, applied.stderr
    store = MemoryStore(open_memory_db())
    assert store.get(old).status == "removed"


def test_retire_one_record_goes_through_preview_confirmation_and_receipt(
    cli: CliRunner, owner: str
) -> None:
    rid = _save("Migrating the billing tables", owner)
    # No terminal: previewed, then refused with nothing changed.
    first = without_terminal("garden", "memory", "retire", rid[:8], "--agent", "ada",
                             "--reason", "done")
    assert first.exit_code == 3, first.stderr
    assert "retire" in first.stdout and "Digest sha256:" in first.stdout
    assert "controlling terminal" in first.stderr
    digest = next(w for w in first.stdout.split() if w.startswith("sha256:")
                  and len(w) == len("sha256:") + 12)
    store = MemoryStore(open_memory_db())
    assert store.get(rid).status == "active"
    wrong = invoke(cli, "garden", "memory", "retire", rid[:8], "--agent", "ada", "--reason",
                   "done", "--confirm", "sha256:000000000000")
    assert wrong.exit_code == 2
    done = on_terminal("garden", "memory", "retire", rid[:8], "--agent", "ada", "--reason",
                       "done", "--confirm", digest, "--json", answer="yes")
    assert done.exit_code == 0, done.stderr
    doc = json.loads(done.stdout)
    receipt = doc["applied"]["receipt"]
    assert receipt["operation_count"] == 1 and receipt["revised"][0]["memory_id"] == rid
    store = MemoryStore(open_memory_db())
    record = store.get(rid)
    assert record.status == "removed" and record.removed_reason == "done"
    assert store.history(rid)[-1].actor.startswith("plan:retire-")
    again = invoke(cli, "garden", "memory", "retire", rid[:8], "--agent", "ada", "--reason",
                   "done")
    assert again.exit_code == 2 and "already removed" in again.stderr


def test_revise_one_record_and_a_secret_is_refused(
    cli: CliRunner, owner: str, tmp_path: Path
) -> None:
    rid = _save("Migrating the billing tables", owner)
    probe = without_terminal("garden", "memory", "revise", rid, "--agent", "ada", "--kind",
                             "stable", "--text", "Billing tables use the new schema")
    digest = next(w for w in probe.stdout.split() if w.startswith("sha256:")
                  and len(w) == len("sha256:") + 12)
    done = on_terminal("garden", "memory", "revise", rid, "--agent", "ada", "--kind",
                       "stable", "--text", "Billing tables use the new schema", "--confirm",
                       digest, answer="yes")
    assert done.exit_code == 0, done.stderr
    assert "Applied: plan revise-" in done.stdout
    store = MemoryStore(open_memory_db())
    record = store.get(rid)
    assert (record.kind, record.text) == ("stable", "Billing tables use the new schema")
    token = "ghp" + "_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    leaked = invoke(cli, "garden", "memory", "revise", rid, "--agent", "ada", "--text",
                    f"Deploy with {token}")
    # Typed on the command line: refused before any plan exists (a plan file is previewed).
    assert leaked.exit_code == 2, leaked.output
    assert "GitHub Token in text" in leaked.stderr, leaked.stderr
    assert token not in leaked.stdout + leaked.stderr
    nothing = invoke(cli, "garden", "memory", "revise", rid, "--agent", "ada")
    assert nothing.exit_code == 2 and "nothing to revise" in nothing.stderr
    # --output only writes the plan for `garden maintain`.
    plan = tmp_path / "one.json"
    wrote = invoke(cli, "garden", "memory", "retire", rid, "--agent", "ada", "--reason", "x",
                   "--output", str(plan))
    assert wrote.exit_code == 0
    assert json.loads(plan.read_text(encoding="utf-8"))["operations"][0]["op"] == "retire"
