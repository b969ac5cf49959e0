"""Preview: read-only (memory.db byte-identical), canonical digest, Before/After, source
additions, absorbed vs retired, conflicts per operation, cache in state.db (spec "Import
and preview", "Handling revision conflicts")."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from typing import Any

import pytest
from tests.conftest import invoke

from wardian.config import open_state_db
from wardian.memory.maintenance.plan import load_plan_file
from wardian.memory.maintenance.preview import canonical_form, compute_digest
from wardian.memory.maintenance.previews import PreviewCache


def preview_json(cli: Any, path: Any, *extra: str) -> dict[str, Any]:
    result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice",
                    "--json", *extra)
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_preview_shows_counts_before_after_sources_and_absorbed(kit: Any, cli: Any) -> None:
    keep, old, dup, dup2 = (kit.record(t) for t in ("keep", "old", "dup", "dup2"))
    path = kit.write(kit.plan([
        {"op": "revise", "memory_id": keep.id, "expected_revision_id": keep.current_revision_id,
         "text": "kept, clarified", "kind": "current",
         "add_sources": [{"source_type": "artifact", "locator": "rust-toolchain.toml",
                          "primary": True},
                         {"source_type": "file", "locator": "keep-0.md"}]},
        {"op": "create", "client_key": "split", "text": "split out", "kind": "stable",
         "scope": {"kind": "agent"}, "evidence_excerpt": "said so", "sources": []},
        {"op": "retire", "memory_id": old.id, "expected_revision_id": old.current_revision_id,
         "reason": "superseded"},
        {"op": "retire_into", "memory_id": dup.id,
         "expected_revision_id": dup.current_revision_id, "target_memory_id": keep.id},
        {"op": "retire_into", "memory_id": dup2.id,
         "expected_revision_id": dup2.current_revision_id, "target_client_key": "split"},
    ]))
    doc = preview_json(cli, path)
    assert doc["owner_id"] == kit.owner.id
    assert doc["counts"] == {"revise": 1, "create": 1, "retire": 1, "retire_into": 2}
    assert doc["operation_count"] == 5 and doc["conflict_free"] and doc["conflicts"] == []
    assert doc["digest_prefix"] == doc["preview_digest"][:19]
    revise = doc["entries"][0]
    assert revise["before"]["text"] == "keep" and revise["before"]["kind"] == "stable"
    assert revise["after"]["text"] == "kept, clarified" and revise["after"]["kind"] == "current"
    # keep-0.md already exists: only the new locator is an addition on the revise entry.
    assert revise["source_additions"] == [
        {"source_type": "artifact", "locator": "rust-toolchain.toml", "primary": True}]
    # The final After of the recipient includes the absorbed record's locator, de-duplicated.
    assert [s["locator"] for s in revise["after"]["sources"]] == [
        "keep-0.md", "rust-toolchain.toml", "dup-0.md"]
    assert doc["entries"][1]["before"] is None and doc["entries"][1]["after"]["text"] == "split out"
    assert doc["entries"][2]["after"]["status"] == "removed"
    assert doc["retired"] == [old.id]
    assert doc["absorbed"] == [{"memory_id": dup.id, "into": keep.id},
                               {"memory_id": dup2.id, "into": "client_key:split"}]
    assert doc["entries"][3]["source_additions"] == [
        {"source_type": "file", "locator": "dup-0.md", "primary": False}]
    recipients = {r["memory_id"] or r["client_key"]: r for r in doc["recipients"]}
    assert recipients[keep.id]["absorbs"] == [dup.id]
    assert recipients["split"]["absorbs"] == [dup2.id]

    human = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice")
    assert human.exit_code == 0
    for words in ("Before:", "After:", "retire_into", "absorbed into", "plain retirement",
                  "+ source artifact=rust-toolchain.toml", doc["digest_prefix"],
                  "Conflicts: none", kit.owner.id):
        assert words in human.stdout, words


def test_preview_never_writes_memory_db(kit: Any, cli: Any) -> None:
    a, b = kit.record("a"), kit.record("b")
    kit.store.update(None, b.id, text="b2", actor="test")  # b's expected revision is stale
    path = kit.write(kit.plan([
        {"op": "revise", "memory_id": a.id, "expected_revision_id": a.current_revision_id,
         "text": "x"},
        {"op": "retire", "memory_id": b.id, "expected_revision_id": b.current_revision_id,
         "reason": "r"},
    ]))
    before = kit.fingerprint()
    for extra in ((), ("--json",)):
        result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice",
                        *extra)
        assert result.exit_code == 0
    assert kit.fingerprint() == before


def test_conflict_kinds(kit: Any, cli: Any) -> None:
    changed, retired, target_gone = kit.record("changed"), kit.record("retired"), kit.record("t")
    foreign = kit.record("foreign", agent=kit.other)
    kit.store.update(None, changed.id, text="edited meanwhile", actor="test")
    kit.store.remove(None, retired.id, actor="test", reason="done")
    kit.store.remove(None, target_gone.id, actor="test", reason="done")
    live = kit.record("live")
    missing = "00000000-0000-4000-8000-00000000dead"
    path = kit.write(kit.plan([
        {"op": "revise", "memory_id": changed.id,
         "expected_revision_id": changed.current_revision_id, "text": "x"},
        {"op": "retire", "memory_id": retired.id,
         "expected_revision_id": retired.current_revision_id, "reason": "r"},
        {"op": "retire", "memory_id": missing, "expected_revision_id": "r", "reason": "r"},
        {"op": "retire", "memory_id": foreign.id,
         "expected_revision_id": foreign.current_revision_id, "reason": "not yours"},
        {"op": "retire_into", "memory_id": live.id,
         "expected_revision_id": live.current_revision_id, "target_memory_id": target_gone.id},
    ]))
    doc = preview_json(cli, path)
    assert not doc["conflict_free"]
    got = [(c["operation"], c["kind"], c["path"]) for c in doc["conflicts"]]
    assert got == [
        (0, "revision_changed", "operations[0].memory_id"),
        (1, "already_retired", "operations[1].memory_id"),
        (2, "target_missing", "operations[2].memory_id"),
        (3, "target_missing", "operations[3].memory_id"),  # another agent's record
        (4, "already_retired", "operations[4].target_memory_id"),
    ]
    first = doc["conflicts"][0]
    assert first["expected_revision_id"] == changed.current_revision_id
    assert first["current_revision_id"] == kit.store.get(changed.id).current_revision_id
    human = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice")
    assert "CONFLICT revision_changed" in human.stdout and "apply is disabled" in human.stdout
    # The conflicted preview is cached, but apply refuses it as a conflict (exit 4), and
    # that failed apply clears it.
    before = kit.fingerprint()
    result = invoke(cli, "garden", "maintain", "apply", str(path), "--agent", "alice",
                    "--confirm", doc["digest_prefix"])
    assert result.exit_code == 4, result.stderr
    assert "5 conflict(s); apply is disabled" in result.stderr
    assert kit.fingerprint() == before
    again = invoke(cli, "garden", "maintain", "apply", str(path), "--agent", "alice",
                   "--confirm", doc["digest_prefix"])
    assert again.exit_code == 2 and "preview first" in again.stderr


def test_digest_is_canonical_and_documented(kit: Any) -> None:
    rec = kit.record("r")
    ops = [{"op": "revise", "memory_id": rec.id, "expected_revision_id": rec.current_revision_id,
            "text": "x", "add_sources": [{"source_type": " file ", "locator": "a"},
                                         {"source_type": "file", "locator": "a",
                                          "primary": True}]}]
    compact = load_plan_file(kit.write(kit.plan(ops), "a.json"))
    # Same plan, other key order and whitespace: same digest.
    reordered = {"operations": [dict(reversed(list(ops[0].items())))],
                 "idempotency_key": "key-1", "agent_id": kit.owner.id,
                 "plan_id": "plan-test", "schema_version": 1}
    spaced = load_plan_file(kit.write(json.dumps(reordered, indent=7), "b.json"))
    digest = compute_digest(compact, kit.owner.id)
    assert compute_digest(spaced, kit.owner.id) == digest
    # The documented canonical form reproduces it by hand.
    canonical = {
        "schema_version": 1, "plan_id": "plan-test", "owner_id": kit.owner.id,
        "idempotency_key": "key-1",
        "operations": [{"op": "revise", "memory_id": rec.id,
                        "expected_revision_id": rec.current_revision_id, "text": "x",
                        "add_sources": [{"source_type": "file", "locator": "a",
                                         "primary": True}]}],
        "expected_revisions": {rec.id: rec.current_revision_id},
    }
    assert canonical_form(compact, kit.owner.id) == canonical
    by_hand = hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":"),
                                        ensure_ascii=False).encode()).hexdigest()
    assert digest == "sha256:" + by_hand
    # Expected revision, owner and operations are bound.
    stale = load_plan_file(kit.write(kit.plan([{**ops[0], "expected_revision_id": "other"}]),
                                     "c.json"))
    assert compute_digest(stale, kit.owner.id) != digest
    assert compute_digest(compact, kit.other.id) != digest


def test_preview_is_cached_in_state_db_for_owner_and_digest(kit: Any, cli: Any) -> None:
    rec = kit.record("r")
    path = kit.write(kit.plan([{"op": "retire", "memory_id": rec.id,
                                "expected_revision_id": rec.current_revision_id,
                                "reason": "r"}]))
    doc = preview_json(cli, path)
    cache = PreviewCache(open_state_db())
    cached = cache.get(kit.owner.id, doc["preview_digest"])
    assert cached is not None and cached.conflict_count == 0
    assert cached.document["preview_digest"] == doc["preview_digest"]
    assert cache.get(kit.other.id, doc["preview_digest"]) is None
    # Nothing about previews lives in memory.db.
    conn = sqlite3.connect(kit.db)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "maintenance_previews" not in names


def test_sources_over_limit_after_absorbing_is_a_validation_error(kit: Any, cli: Any) -> None:
    big, donor = kit.record("big", sources=60), kit.record("donor", sources=5)
    path = kit.write(kit.plan([{"op": "retire_into", "memory_id": donor.id,
                                "expected_revision_id": donor.current_revision_id,
                                "target_memory_id": big.id}]))
    result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice")
    assert result.exit_code == 2
    assert "65 sources" in result.stderr and "limit is 64" in result.stderr
    assert "operations[0]" in result.stderr


GOLDEN_PLAN: dict[str, Any] = {
    "schema_version": 1, "plan_id": "plan-golden",
    "agent_id": "11111111-1111-4111-8111-111111111111", "idempotency_key": "golden-1",
    "operations": [
        {"op": "revise", "memory_id": "22222222-2222-4222-8222-222222222222",
         "expected_revision_id": "33333333-3333-4333-8333-333333333333",
         "text": "Production build requires Rust 1.80+ and Node 22.", "kind": "stable",
         "scope": {"kind": "workspace", "path": "/work/repo/./sub/.."},
         "evidence_excerpt": "Verified in manifest.",
         "add_sources": [{"source_type": " artifact ", "locator": "rust-toolchain.toml"},
                         {"source_type": "artifact", "locator": "rust-toolchain.toml",
                          "primary": True}]},
        {"op": "create", "client_key": "new-rule", "text": "Run E2E tests — «fast»",
         "kind": "current", "scope": {"kind": "agent"}, "evidence_excerpt": "Updated.",
         "sources": []},
        {"op": "retire", "memory_id": "44444444-4444-4444-8444-444444444444",
         "expected_revision_id": "55555555-5555-4555-8555-555555555555",
         "reason": "Superseded."},
        {"op": "retire_into", "memory_id": "66666666-6666-4666-8666-666666666666",
         "expected_revision_id": "77777777-7777-4777-8777-777777777777",
         "target_client_key": "new-rule"},
    ],
}


@pytest.mark.skipif(os.name == "nt", reason="the golden plan's workspace path is POSIX")
def test_digest_of_a_fixed_plan_never_changes() -> None:
    """The canonical form is a stored contract (receipts hold digests, operators compare
    prefixes): a change to normalisation or encoding must fail here, not pass silently."""
    from wardian.memory.maintenance.plan import load_plan_bytes

    plan = load_plan_bytes(json.dumps(GOLDEN_PLAN).encode("utf-8"))
    assert compute_digest(plan, GOLDEN_PLAN["agent_id"]) == (
        "sha256:fb3edfc5c30c3b9762db422ec1d5d0ae1227632d455227812b8d5ba1e129bb6d"
    )


def test_human_preview_shows_before_and_after_text_whole(kit: Any, cli: Any) -> None:
    """The operator approves what they read: no record text is cut (wrapped, not truncated)."""
    before = ("Lesson: Option 1 doesn't work since the commit hash can change, that's why we "
              "pin the tag and verify the signature before every release build runs.")
    after = before + " Also check the checksum file that ships next to the tarball, always."
    record = kit.record(before)
    path = kit.write(kit.plan([
        {"op": "revise", "memory_id": record.id,
         "expected_revision_id": record.current_revision_id, "text": after,
         "evidence_excerpt": "the release notes say so"},
    ]))
    result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice")
    assert result.exit_code == 0, result.stderr
    assert "…" not in result.stdout.replace("… --confirm", "")
    flat = " ".join(result.stdout.split())
    assert before in flat and after in flat
    assert not any(after in line for line in result.stdout.splitlines()), "wrapped"
