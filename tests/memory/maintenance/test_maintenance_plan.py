"""Plan schema v1: every "Key constraints" rule at its limit and one past it, duplicate keys,
unknown fields, cross-operation rules and owner binding (spec "Plan structure and
constraints"; issue 3 point 1-2)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from tests.conftest import invoke

from wardian.memory.maintenance.plan import (
    MAX_PLAN_BYTES,
    PlanError,
    check_owner,
    is_host_absolute,
    load_plan_bytes,
    load_plan_file,
)

MID = "0b6f3c59-9d6a-4c8e-9a35-3f5b1e0e7a11"
REV = "7c1d0f9e-2f34-4b7a-8a0a-5d3a2c1b0e99"


def plan(ops: list[dict[str, Any]] | None = None, /, **top: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 1, "plan_id": "p", "agent_id": "agent-1", "idempotency_key": "k",
        "operations": ops if ops is not None else [retire(MID)],
    }
    doc.update(top)
    return doc


def retire(mid: str, rev: str = REV) -> dict[str, Any]:
    return {"op": "retire", "memory_id": mid, "expected_revision_id": rev, "reason": "old"}


def create(key: str = "c", **fields: Any) -> dict[str, Any]:
    op = {"op": "create", "client_key": key, "text": "t", "kind": "stable",
          "scope": {"kind": "agent"}, "evidence_excerpt": "e", "sources": []}
    op.update(fields)
    return op


def load(doc: dict[str, Any] | str) -> Any:
    raw = doc if isinstance(doc, str) else json.dumps(doc)
    return load_plan_bytes(raw.encode("utf-8"), source="plan.json")


def fails(doc: dict[str, Any] | str, path: str, *words: str) -> PlanError:
    with pytest.raises(PlanError) as info:
        load(doc)
    assert info.value.path == path, info.value.problems
    assert info.value.exit_code == 2
    for word in words:
        assert word in str(info.value), str(info.value)
    return info.value


def mids(n: int) -> list[str]:
    return [f"{i:08x}-0000-4000-8000-000000000000" for i in range(n)]


# --- Key constraints: required strings ----------------------------------------------------


@pytest.mark.parametrize("field", ["plan_id", "agent_id", "idempotency_key"])
def test_required_strings_missing_empty_blank_or_not_string(field: str) -> None:
    doc = plan()
    del doc[field]
    fails(doc, field, "required field is missing")
    fails(plan(**{field: ""}), field, "non-empty string")
    fails(plan(**{field: "   "}), field, "non-empty string")
    fails(plan(**{field: 7}), field, "expected a string")
    assert getattr(load(plan(**{field: "x"})), field) == "x"


def test_schema_version_must_be_integer_one() -> None:
    assert load(plan()).schema_version == 1
    fails(plan(schema_version=2), "schema_version", "must be 1")
    fails(plan(schema_version="1"), "schema_version", "expected an integer")
    fails(plan(schema_version=True), "schema_version", "expected an integer")


# --- operation count and file size ---------------------------------------------------------


def test_one_to_one_hundred_operations() -> None:
    assert len(load(plan([retire(m) for m in mids(1)])).operations) == 1
    assert len(load(plan([retire(m) for m in mids(100)])).operations) == 100
    fails(plan([retire(m) for m in mids(101)]), "operations", "101 items", "limit is 100")
    fails(plan([]), "operations", "at least 1")


def _padded(size: int) -> bytes:
    body = json.dumps(plan()).encode()
    return body + b" " * (size - len(body))


def test_file_of_exactly_one_mib_is_accepted_and_one_byte_more_is_not(tmp_path: Any) -> None:
    at_limit = tmp_path / "at.json"
    at_limit.write_bytes(_padded(MAX_PLAN_BYTES))
    assert at_limit.stat().st_size == 1024 * 1024
    assert load_plan_file(at_limit).plan_id == "p"
    over = tmp_path / "over.json"
    over.write_bytes(_padded(MAX_PLAN_BYTES + 1))
    with pytest.raises(PlanError, match=r"1048577 bytes; the limit is 1048576"):
        load_plan_file(over)
    # A 2 MiB file is refused by its size on disk (reported exactly), not read in full.
    huge = tmp_path / "huge.json"
    huge.write_bytes(_padded(2 * MAX_PLAN_BYTES))
    with pytest.raises(PlanError, match=r"is 2097152 bytes; the limit is 1048576 \(1 MiB\)"):
        load_plan_file(huge)


def test_size_is_checked_before_parsing() -> None:
    # Invalid JSON past the limit reports the size, proving the bytes were not parsed.
    with pytest.raises(PlanError, match="the limit is 1048576"):
        load_plan_bytes(b"{" * (MAX_PLAN_BYTES + 1))


# --- text, evidence, sources, locators ------------------------------------------------------


@pytest.mark.parametrize("field", ["text", "evidence_excerpt"])
def test_text_and_evidence_at_8192_chars_and_one_past(field: str) -> None:
    assert load(plan([create(**{field: "é" * 8192})])).operations[0]
    fails(plan([create(**{field: "é" * 8193})]), f"operations[0].{field}",
          "8193 characters", "limit is 8192")
    revise = {"op": "revise", "memory_id": MID, "expected_revision_id": REV,
              field: "x" * 8192}
    assert load(plan([revise]))
    fails(plan([{**revise, field: "x" * 8193}]), f"operations[0].{field}", "limit is 8192")


def _sources(n: int, locator_len: int = 10) -> list[dict[str, Any]]:
    return [{"source_type": "file", "locator": f"{i:04d}".ljust(locator_len, "x"),
             "primary": False} for i in range(n)]


def test_sixty_four_sources_per_operation_and_one_past() -> None:
    assert len(load(plan([create(sources=_sources(64))])).operations[0].sources) == 64
    fails(plan([create(sources=_sources(65))]), "operations[0].sources", "65 items",
          "limit is 64")
    revise = {"op": "revise", "memory_id": MID, "expected_revision_id": REV}
    assert load(plan([{**revise, "add_sources": _sources(64)}]))
    fails(plan([{**revise, "add_sources": _sources(65)}]), "operations[0].add_sources",
          "limit is 64")


def test_locator_at_4096_chars_and_one_past() -> None:
    assert load(plan([create(sources=_sources(1, 4096))]))
    fails(plan([create(sources=_sources(2, 4097))]), "operations[0].sources[0].locator",
          "4097 characters", "limit is 4096")


def test_source_fields_are_strict() -> None:
    fails(plan([create(sources=[{"source_type": "file", "locator": "a", "primary": 1}])]),
          "operations[0].sources[0].primary", "true or false")
    fails(plan([create(sources=[{"source_type": "file", "locator": " "}])]),
          "operations[0].sources[0].locator", "non-empty")
    fails(plan([create(sources=[{"source_type": "file", "locator": "a", "url": "x"}])]),
          "operations[0].sources[0].url", "unknown field")


# --- scopes ----------------------------------------------------------------------------------


ABSOLUTE = "C:\\work\\repo" if os.name == "nt" else "/work/repo"


def test_scopes_are_tagged_objects_with_host_absolute_paths() -> None:
    assert load(plan([create(scope={"kind": "agent"})]))
    ws = load(plan([create(scope={"kind": "workspace", "path": ABSOLUTE})]))
    assert ws.operations[0].scope.path == ABSOLUTE
    fails(plan([create(scope={"kind": "workspace", "path": "repo/sub"})]),
          "operations[0].scope.path", "must be absolute on this host")
    fails(plan([create(scope={"kind": "workspace", "path": "./repo"})]),
          "operations[0].scope.path", "absolute")
    fails(plan([create(scope={"kind": "workspace"})]), "operations[0].scope.path", "missing")
    fails(plan([create(scope="agent")]), "operations[0].scope")
    fails(plan([create(scope={"kind": "global"})]), "operations[0].scope.kind", "'global'")
    fails(plan([create(scope={"path": ABSOLUTE})]), "operations[0].scope.kind", "missing")
    fails(plan([create(scope={"kind": "agent", "path": ABSOLUTE})]),
          "operations[0].scope.path", "unknown field")


@pytest.mark.skipif(os.name == "nt", reason="POSIX host rules")
def test_windows_drive_paths_are_not_absolute_on_posix() -> None:
    fails(plan([create(scope={"kind": "workspace", "path": "C:\\repo"})]),
          "operations[0].scope.path", "absolute")
    fails(plan([create(scope={"kind": "workspace", "path": "\\\\server\\share"})]),
          "operations[0].scope.path", "absolute")


@pytest.mark.parametrize(("path", "posix", "nt"), [
    ("/work/repo", True, False),          # rooted but no drive: drive-relative on Windows
    ("work/repo", False, False),
    ("./repo", False, False),
    ("", False, False),
    ("C:\\work\\repo", False, True),
    ("C:/work/repo", False, True),
    ("C:work\\repo", False, False),     # relative to drive C:'s current directory
    ("\\work\\repo", False, False),
    ("\\\\server\\share\\repo", False, True),
    ("/work/\0repo", False, False),
])
def test_absolute_paths_follow_each_platforms_rules(path: str, posix: bool, nt: bool) -> None:
    assert is_host_absolute(path, "posix") is posix
    assert is_host_absolute(path, "nt") is nt


# --- duplicate keys and unknown fields -------------------------------------------------------


def test_duplicate_top_level_key_is_malformed() -> None:
    text = json.dumps(plan())[:-1] + ', "plan_id": "other"}'
    fails(text, "plan_id", "duplicate key 'plan_id'")


@pytest.mark.parametrize("inner", [
    '{"kind": "agent", "kind": "agent"}',
    '{"kind": "workspace", "path": "/a", "path": "/b"}',
    '{"kind": "workspace", "kind": "agent"}',
])
def test_duplicate_key_inside_a_scope_is_malformed(inner: str) -> None:
    op = json.dumps(create(scope="SCOPE")).replace('"SCOPE"', inner)
    text = json.dumps(plan([retire(MID)])).replace(
        json.dumps(retire(MID)), json.dumps(retire(MID)) + ", " + op
    )
    key = "kind" if inner.count('"kind"') == 2 else "path"
    fails(text, f"operations[1].scope.{key}", f"duplicate key '{key}'")


def test_duplicate_key_inside_an_operation_and_a_source() -> None:
    op = '{"op": "retire", "memory_id": "a", "memory_id": "b", "expected_revision_id": "r",' \
         ' "reason": "x"}'
    fails(json.dumps(plan()).replace(json.dumps(retire(MID)), op),
          "operations[0].memory_id", "duplicate")
    src = '{"source_type": "a", "locator": "b", "locator": "c"}'
    text = json.dumps(plan([create(sources=["S"])])).replace('"S"', src)
    fails(text, "operations[0].sources[0].locator", "duplicate")


def test_unknown_fields_are_rejected_everywhere() -> None:
    fails(plan(comment="x"), "comment", "unknown field", "allowed fields")
    fails(plan([{**retire(MID), "force": True}]), "operations[0].force", "unknown field",
          "reason")
    fails(plan([{"op": "merge", "memory_id": MID}]), "operations[0].op", "'merge'",
          "'retire_into'")
    fails(plan([{"memory_id": MID}]), "operations[0].op", "missing", "'revise'")


def test_not_json_and_non_finite_numbers_are_malformed() -> None:
    fails("{not json", "$", "not valid JSON", "line 1")
    fails(" \n", "$", "plan file is empty")
    fails('{"plan_id": ' + "[" * 100_000 + "]" * 100_000 + "}", "$", "nested too deeply")
    deep = "[" * 40 + "]" * 40
    fails(json.dumps(plan()).replace('"p"', deep, 1), "plan_id" + "[0]" * 32, "too deeply")
    fails('{"schema_version": NaN}', "$", "NaN")
    fails("[]", "$", "JSON object")


def test_utf8_bom_is_accepted() -> None:
    # PowerShell 5 `Set-Content -Encoding utf8` writes a BOM.
    assert load_plan_bytes(b"\xef\xbb\xbf" + json.dumps(plan()).encode()).plan_id == "p"


# --- cross-operation rules -------------------------------------------------------------------


def test_memory_id_subject_of_at_most_one_operation() -> None:
    fails(plan([retire(MID), {"op": "revise", "memory_id": MID, "expected_revision_id": REV,
                              "text": "x"}]),
          "operations[1].memory_id", "already the subject of operations[0]")


def test_revise_target_may_also_receive_retire_into() -> None:
    a, b, c = mids(3)
    doc = plan([
        {"op": "revise", "memory_id": a, "expected_revision_id": REV, "text": "x"},
        {"op": "retire_into", "memory_id": b, "expected_revision_id": REV,
         "target_memory_id": a},
        {"op": "retire_into", "memory_id": c, "expected_revision_id": REV,
         "target_memory_id": a},
    ])
    assert len(load(doc).operations) == 3


def test_retire_into_never_targets_a_record_retired_by_the_same_plan() -> None:
    a, b = mids(2)
    fails(plan([retire(a), {"op": "retire_into", "memory_id": b, "expected_revision_id": REV,
                            "target_memory_id": a}]),
          "operations[1].target_memory_id", "retired by this plan")
    fails(plan([{"op": "retire_into", "memory_id": a, "expected_revision_id": REV,
                 "target_memory_id": a}]),
          "operations[0].target_memory_id", "retired by this plan")


def test_retire_into_target_client_key_must_exist_and_exactly_one_target() -> None:
    a = mids(1)[0]
    into = {"op": "retire_into", "memory_id": a, "expected_revision_id": REV}
    assert load(plan([create("new"), {**into, "target_client_key": "new"}]))
    fails(plan([create("new"), {**into, "target_client_key": "nope"}]),
          "operations[1].target_client_key", "no create operation")
    fails(plan([{**into}]), "operations[0]", "exactly one")
    fails(plan([create("new"), {**into, "target_client_key": "new", "target_memory_id": MID}]),
          "operations[1]", "exactly one")


def test_client_keys_are_unique() -> None:
    fails(plan([create("a"), create("a")]), "operations[1].client_key", "already used")


def test_revise_must_change_something_and_retire_needs_a_reason() -> None:
    fails(plan([{"op": "revise", "memory_id": MID, "expected_revision_id": REV}]),
          "operations[0]", "changes nothing")
    fails(plan([{"op": "retire", "memory_id": MID, "expected_revision_id": REV}]),
          "operations[0].reason", "missing")
    fails(plan([{**retire(MID), "reason": ""}]), "operations[0].reason", "non-empty")
    fails(plan([{"op": "revise", "memory_id": MID, "expected_revision_id": REV,
                 "kind": "forever"}]), "operations[0].kind", "'stable'")


def test_all_problems_are_reported_with_paths() -> None:
    error = fails(plan([create(text="x" * 9000, scope={"kind": "workspace", "path": "rel"})]),
                  "operations[0].text")
    assert [p for p, _ in error.problems] == ["operations[0].text", "operations[0].scope.path"]


# --- owner binding ---------------------------------------------------------------------------


def test_owner_mismatch_names_both_ids() -> None:
    parsed = load(plan())
    check_owner(parsed, "agent-1")
    with pytest.raises(PlanError) as info:
        check_owner(parsed, "agent-2")
    assert "agent-1" in str(info.value) and "agent-2" in str(info.value)
    assert info.value.path == "agent_id"


def test_cli_rejects_a_plan_for_another_agent_on_import(kit: Any, cli: Any) -> None:
    path = kit.write(kit.plan([retire(MID)], agent_id=kit.other.id))
    for command in ("preview", "apply", "check-receipt"):
        result = invoke(cli, "garden", "maintain", command, str(path), "--agent", "alice")
        assert result.exit_code == 2, result.output
        assert kit.other.id in result.stderr and kit.owner.id in result.stderr
        assert "agent_id" in result.stderr


def test_cli_reports_json_path_and_exit_2(kit: Any, cli: Any) -> None:
    path = kit.write(kit.plan([create(scope={"kind": "workspace", "path": "rel"})]))
    result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice")
    assert result.exit_code == 2
    assert "operations[0].scope.path" in result.stderr
    assert "absolute" in result.stderr
