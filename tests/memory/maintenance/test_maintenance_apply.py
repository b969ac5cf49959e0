"""Apply through the real CLI: preview first, confirmation, atomic writes with plan-named
revisions, receipts, replay, key reuse, check-receipt, concurrency and managed-process
refusal (spec "Native confirmation and atomic apply", "Idempotency and failure recovery")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.terminal import on_terminal, without_terminal

from wardian.config import open_state_db
from wardian.memory.db import open_memory_db
from wardian.memory.maintenance.previews import PreviewCache
from wardian.memory.store import MemoryStore


def maintain(cli: Any, command: str, *args: str) -> Any:
    return invoke(cli, "garden", "maintain", command, *args, "--agent", "alice")


def preview(cli: Any, path: Path) -> dict[str, Any]:
    result = maintain(cli, "preview", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def apply(cli: Any, path: Path, confirm: str | None, *extra: str, answer: str = "yes") -> Any:
    """`garden maintain apply` in a child whose controlling terminal answers `answer` to
    the question (the operator at the terminal); `confirm` is passed as ``--confirm``."""
    args = ["--confirm", confirm] if confirm else []
    return on_terminal("garden", "maintain", "apply", str(path), *args, *extra,
                       "--agent", "alice", answer=answer)


def full_plan(kit: Any) -> tuple[Path, dict[str, Any]]:
    keep, old, dup = kit.record("keep"), kit.record("old"), kit.record("dup", sources=2)
    path = kit.write(kit.plan([
        {"op": "revise", "memory_id": keep.id, "expected_revision_id": keep.current_revision_id,
         "text": "keep v2", "scope": {"kind": "agent"},
         "add_sources": [{"source_type": "artifact", "locator": "a.toml", "primary": True},
                         {"source_type": "file", "locator": "keep-0.md"}]},
        {"op": "create", "client_key": "new", "text": "fresh", "kind": "current",
         "scope": {"kind": "workspace", "path": str(kit.home)}, "evidence_excerpt": "seen",
         "sources": [{"source_type": "file", "locator": "n.md"}]},
        {"op": "retire", "memory_id": old.id, "expected_revision_id": old.current_revision_id,
         "reason": "superseded by nightly validation"},
        {"op": "retire_into", "memory_id": dup.id,
         "expected_revision_id": dup.current_revision_id, "target_memory_id": keep.id},
    ]))
    return path, {"keep": keep, "old": old, "dup": dup}


def test_apply_requires_a_cached_preview(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    before = kit.fingerprint()
    result = apply(cli, path, "sha256:000000000000")
    assert result.exit_code == 2 and "preview first" in result.stderr
    assert kit.fingerprint() == before


def test_apply_with_confirm_writes_everything_and_a_receipt(kit: Any, cli: Any) -> None:
    path, recs = full_plan(kit)
    doc = preview(cli, path)
    result = apply(cli, path, doc["digest_prefix"], "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    receipt = out["receipt"]
    assert out["replayed"] is False
    assert receipt["plan_id"] == "plan-test" and receipt["owner_id"] == kit.owner.id
    assert receipt["idempotency_key"] == "key-1"
    assert receipt["preview_digest"] == doc["preview_digest"] and receipt["applied_at"]
    store = kit.store
    keep = store.get(recs["keep"].id)
    assert keep.text == "keep v2" and keep.scope.kind == "agent"
    # Existing sources kept, new ones added once, absorbed locators moved in, de-duplicated.
    assert [(s.locator, s.primary) for s in keep.sources] == [
        ("keep-0.md", False), ("a.toml", True), ("dup-0.md", False), ("dup-1.md", False)]
    old, dup = store.get(recs["old"].id), store.get(recs["dup"].id)
    assert old.status == "removed" and old.removed_reason == "superseded by nightly validation"
    assert dup.status == "removed" and dup.removed_reason.startswith("retired into")
    # The retired donor keeps its own sources (its evidence stays auditable in place).
    assert [s.locator for s in dup.sources] == ["dup-0.md", "dup-1.md"]
    created = receipt["created"]
    assert [c["client_key"] for c in created] == ["new"]
    new = store.get(created[0]["memory_id"])
    assert new.text == "fresh" and new.kind == "current" and new.scope.path == str(kit.home)
    assert new.current_revision_id == created[0]["revision_id"]
    revised = {r["memory_id"]: r for r in receipt["revised"]}
    assert set(revised) == {recs["keep"].id, recs["old"].id, recs["dup"].id}
    assert revised[keep.id]["revision_id"] == keep.current_revision_id
    for record_id in (keep.id, old.id, dup.id, new.id):
        assert store.history(record_id)[-1].actor == "plan:plan-test"
    # Preserved history: the old revision is still there.
    assert len(store.history(old.id)) == 2
    # The stored receipt is the one printed.
    check = maintain(cli, "check-receipt", str(path), "--json")
    report = json.loads(check.stdout)
    assert report["committed"] and report["matches_plan"] and report["receipt"] == receipt
    # A successful apply consumes the cached preview.
    cache = PreviewCache(open_state_db())
    assert cache.get(kit.owner.id, doc["preview_digest"]) is None


def test_replay_returns_the_receipt_without_writes_or_prompt(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    first = json.loads(apply(cli, path, doc["digest_prefix"], "--json").stdout)
    before = kit.fingerprint()
    # No terminal at all: a prompt would be refused, replay asks nothing.
    again = without_terminal("garden", "maintain", "apply", str(path), "--agent", "alice",
                             "--json")
    assert again.exit_code == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["replayed"] is True and out["receipt"] == first["receipt"]
    assert kit.fingerprint() == before
    human = apply(cli, path, None)
    assert "Already applied" in human.stdout
    assert "Already applied at" in maintain(cli, "preview", str(path)).stdout


def test_preview_of_an_applied_plan_does_not_call_apply_disabled(kit: Any, cli: Any) -> None:
    # Operator trial: the preview of an applied plan said both "apply prints the stored
    # receipt" and, for the plan's own changes seen as conflicts, "apply is disabled".
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    assert apply(cli, path, doc["digest_prefix"]).exit_code == 0
    shown = maintain(cli, "preview", str(path)).stdout
    assert "Already applied at" in shown and "apply is disabled" not in shown
    assert "nothing is left to apply" in shown
    assert apply(cli, path, None).exit_code == 0  # and apply does replay


def test_same_key_different_contents_is_refused_naming_both_digests(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    assert apply(cli, path, doc["digest_prefix"]).exit_code == 0
    other = kit.record("other")
    changed = kit.write(kit.plan([{"op": "retire", "memory_id": other.id,
                                   "expected_revision_id": other.current_revision_id,
                                   "reason": "x"}]), "changed.json")
    new_doc = preview(cli, changed)
    before = kit.fingerprint()
    result = apply(cli, changed, new_doc["digest_prefix"])
    assert result.exit_code == 4
    assert doc["preview_digest"] in result.stderr and new_doc["preview_digest"] in result.stderr
    assert kit.fingerprint() == before
    report = json.loads(maintain(cli, "check-receipt", str(changed), "--json").stdout)
    assert report["committed"] and report["matches_plan"] is False
    cache = PreviewCache(open_state_db())  # a failed apply clears the cached preview
    assert cache.get(kit.owner.id, new_doc["preview_digest"]) is None
    # The preview warns before anyone tries.
    assert preview(cli, changed)["existing_receipt"]["preview_digest"] == doc["preview_digest"]
    human = maintain(cli, "preview", str(changed))
    assert "already committed another plan" in human.stdout
    # ...and does not then offer the apply it just said will be refused (docs walk-through:
    # "apply will refuse" was followed by "Conflicts: none. To apply: … --confirm …").
    assert "To apply" not in human.stdout and "--confirm" not in human.stdout, human.stdout


def test_wrong_confirm_prefix_aborts_and_clears_the_preview(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    preview(cli, path)
    before = kit.fingerprint()
    result = apply(cli, path, "sha256:0123456789ab")
    assert result.exit_code == 2 and "does not match" in result.stderr
    assert "Type yes" not in result.screen  # refused before the question
    assert kit.fingerprint() == before
    assert "preview first" in apply(cli, path, "sha256:0123456789ab").stderr


@pytest.mark.parametrize("spelling", ["bare", "full", "upper"])
def test_confirm_takes_the_digest_as_the_preview_prints_it(
        kit: Any, cli: Any, spelling: str) -> None:
    # Operator trial: the preview prints `sha256:d83f5d39d441  (sha256:<64 hex>)`; the
    # 12 hex without `sha256:`, or the full digest, were refused as "does not match
    # sha256:d83f5d39d441" and the preview was thrown away.
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    given = {"bare": doc["digest_prefix"].removeprefix("sha256:"),
             "full": doc["preview_digest"],
             "upper": doc["digest_prefix"].upper()}[spelling]
    result = apply(cli, path, given, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["replayed"] is False


def test_a_confirm_that_is_no_digest_is_a_usage_error_and_keeps_the_preview(
        kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    cache = PreviewCache(open_state_db())
    for given in ["123", "sha256:", "yes", "sha256:xyz0123456789", " "]:
        result = apply(cli, path, given)
        assert result.exit_code == 2, (given, result.stderr)
        assert "--confirm" in result.stderr and doc["digest_prefix"] not in result.stderr
        assert kit.fingerprint() == before, given
        assert cache.get(kit.owner.id, doc["preview_digest"]) is not None, given
    # Nothing was attempted: the reviewed preview still stands.
    again = apply(cli, path, doc["digest_prefix"])
    assert again.exit_code == 0, again.stderr


def test_concurrent_revision_between_preview_and_apply(kit: Any, cli: Any) -> None:
    path, recs = full_plan(kit)
    doc = preview(cli, path)
    writer = MemoryStore(open_memory_db())  # another connection: a concurrent writer
    writer.update(None, recs["old"].id, text="edited by someone else", actor="agent:x")
    before = kit.fingerprint()
    result = apply(cli, path, doc["digest_prefix"])
    assert result.exit_code == 4
    assert "revision_changed" in result.stderr and recs["old"].id in result.stderr
    assert "rolled back" in result.stderr
    assert kit.fingerprint() == before  # nothing of the plan was written
    cache = PreviewCache(open_state_db())
    assert cache.get(kit.owner.id, doc["preview_digest"]) is None  # preview cleared
    again = apply(cli, path, doc["digest_prefix"])
    assert again.exit_code == 2 and "preview first" in again.stderr
    check = json.loads(maintain(cli, "check-receipt", "--idempotency-key", "key-1",
                                "--json").stdout)
    assert check["committed"] is False and check["receipt"] is None


def test_check_receipt_needs_exactly_one_of_plan_or_key(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    assert maintain(cli, "check-receipt").exit_code == 2
    both = maintain(cli, "check-receipt", str(path), "--idempotency-key", "k")
    assert both.exit_code == 2
    human = maintain(cli, "check-receipt", "--idempotency-key", "key-1")
    assert human.exit_code == 0 and "Not committed" in human.stdout


@pytest.mark.parametrize("variable", ["WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY"])
def test_every_command_refuses_inside_a_managed_process(
    kit: Any, cli: Any, variable: str
) -> None:
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    env = {variable: "x"}
    for args in (("preview", str(path)), ("apply", str(path), "--confirm", doc["digest_prefix"]),
                 ("check-receipt", str(path))):
        result = invoke(cli, "garden", "maintain", *args, "--agent", "alice", env=env)
        assert result.exit_code == 3, (args, result.output)
        assert "managed process" in result.stderr
    assert kit.fingerprint() == before


def _child_env(kit: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDIAN_") or k == "WARDIAN_DATABASE_URL"}
    env["WARDIAN_HOME"] = str(kit.home)
    return env


def test_apply_without_a_terminal_is_refused_with_zero_changes(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    # A new session has no controlling terminal; stdin says "yes" but must not be trusted.
    proc = without_terminal("garden", "maintain", "apply", str(path), "--agent", "alice",
                            stdin="yes\n", env=_child_env(kit))
    assert proc.returncode == 3, proc.stderr
    assert "controlling terminal" in proc.stderr and "nothing was changed" in proc.stderr
    assert kit.fingerprint() == before
    # A refused apply is a failed apply: the cached preview is cleared (spec "Any failed
    # apply clears the cached preview").
    cache = PreviewCache(open_state_db())
    assert cache.get(kit.owner.id, doc["preview_digest"]) is None
    assert "preview first" in apply(cli, path, doc["digest_prefix"]).stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminal")
def test_terminal_confirmation_shows_owner_count_and_digest(kit: Any, cli: Any) -> None:
    path, recs = full_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    run = apply(cli, path, None, answer="no")
    assert run.exit_code == 1 and "the operator declined" in run.stderr
    assert kit.owner.id in run.screen and "4 operation(s)" in run.screen
    assert doc["digest_prefix"] in run.screen
    assert kit.fingerprint() == before
    # Declining is a failed apply: it cleared the preview, so the operator reviews again.
    run = apply(cli, path, None)
    assert run.exit_code == 2 and "preview first" in run.stderr, run.stderr
    assert kit.fingerprint() == before
    preview(cli, path)
    run = apply(cli, path, None)
    assert run.exit_code == 0, run.stderr
    assert "Applied: plan plan-test" in run.stdout
    assert kit.store.get(recs["old"].id).status == "removed"


def test_a_plan_edited_after_its_preview_needs_a_new_preview(kit: Any, cli: Any) -> None:
    path, _ = full_plan(kit)
    doc = preview(cli, path)
    edited = json.loads(path.read_text())
    edited["operations"][2]["reason"] = "a different reason"
    path.write_text(json.dumps(edited))
    before = kit.fingerprint()
    result = apply(cli, path, doc["digest_prefix"])
    assert result.exit_code == 2 and "preview first" in result.stderr
    assert kit.fingerprint() == before


def test_missing_plan_file_and_unknown_agent(kit: Any, cli: Any) -> None:
    result = maintain(cli, "preview", str(kit.home / "nope.json"))
    assert result.exit_code == 2 and "cannot read the plan file" in result.stderr
    path, _ = full_plan(kit)
    unknown = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "zed")
    assert unknown.exit_code == 1


def test_agent_process_revising_between_preview_and_apply(kit: Any, cli: Any) -> None:
    """The concurrent writer is a real agent process (`wardian memory update` with its
    capability); apply then fails with revision_changed, rolls back and clears the preview."""
    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore

    path, recs = full_plan(kit)
    doc = preview(cli, path)
    me = current()
    token = CapabilityStore(kit.store.conn).mint(
        kit.owner.id, pid=me.pid, started_at=me.started_at, workspace=None
    )
    env = _child_env(kit) | {"WARDIAN_AGENT_ID": kit.owner.id, "WARDIAN_CAPABILITY": token}
    proc = subprocess.run(
        [sys.executable, "-m", "wardian", "memory", "update", recs["keep"].id[:8],
         "--text", "changed by the agent"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    # The agent's launch ends (its capability, bound to this test process, is revoked), so
    # the operator's apply below, a child of this process, is not inside a launch.
    assert CapabilityStore(kit.store.conn).revoke(token, reason="the launch ended")
    before = kit.fingerprint()
    result = apply(cli, path, doc["digest_prefix"])
    assert result.exit_code == 4
    assert "revision_changed" in result.stderr and recs["keep"].id in result.stderr
    assert kit.fingerprint() == before
    assert "preview first" in apply(cli, path, doc["digest_prefix"]).stderr
    fresh = preview(cli, path)
    assert [c["kind"] for c in fresh["conflicts"]] == ["revision_changed"]


def test_a_plan_cannot_reach_another_agents_records(kit: Any, cli: Any) -> None:
    """Owner binding holds below the plan's agent_id too: a record of another agent, as a
    subject or as a retire_into recipient, is target_missing, and apply changes nothing."""
    mine = kit.record("mine", sources=2)
    theirs = kit.record("theirs", agent=kit.other)
    path = kit.write(kit.plan([
        {"op": "retire_into", "memory_id": mine.id,
         "expected_revision_id": mine.current_revision_id, "target_memory_id": theirs.id},
        {"op": "revise", "memory_id": theirs.id,
         "expected_revision_id": theirs.current_revision_id, "text": "hijacked"},
    ]))
    doc = preview(cli, path)
    assert [(c["kind"], c["path"]) for c in doc["conflicts"]] == [
        ("target_missing", "operations[0].target_memory_id"),
        ("target_missing", "operations[1].memory_id"),
    ]
    before = kit.fingerprint()
    result = apply(cli, path, doc["digest_prefix"])
    assert result.exit_code == 4 and "apply is disabled" in result.stderr
    assert kit.fingerprint() == before
