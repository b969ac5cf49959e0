"""Fuzz (hypothesis) the two documents users hand Wardian: maintenance plan JSON and blueprint
YAML (issue 15 acceptance). Whatever the bytes, the real CLI answers with a documented exit
code and at most one ``Error:`` line — no traceback, no internal error — and writes nothing:
`memory.db` keeps its logical contents and the preview cache gains no row for a refused plan.

Bounded so it stays in the fast suite: a few dozen examples each, no shrinking deadline.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.conftest import invoke
from tests.memory.maintenance.conftest import logical_state
from wardian.config import open_state_db
from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry

DOCUMENTED = {0, 1, 2, 3, 4}
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
strings = st.text(max_size=300) | st.sampled_from(
    ["", " ", "\0", "a\0b", "x" * 5000, "/" + "p" * 5000, "../rel", "C:\\w", "\ud800x"[1:],
     "-----BEGIN PRIVATE KEY-----"])
PLAN_FIELDS = ["schema_version", "plan_id", "agent_id", "idempotency_key", "operations"]
OP_FIELDS = ["op", "memory_id", "expected_revision_id", "text", "kind", "scope",
             "evidence_excerpt", "sources", "add_sources", "reason", "client_key",
             "target_memory_id", "target_client_key"]


def base_plan(agent_id: str, record: Any) -> dict[str, Any]:
    return {"schema_version": 1, "plan_id": "p1", "agent_id": agent_id,
            "idempotency_key": "k1", "operations": [
                {"op": "revise", "memory_id": record.id,
                 "expected_revision_id": record.current_revision_id, "text": "new text",
                 "add_sources": [{"source_type": "file", "locator": "a.md",
                                  "primary": True}]},
                {"op": "create", "client_key": "c1", "text": "t", "kind": "stable",
                 "scope": {"kind": "workspace", "path": "/w"}, "evidence_excerpt": "e",
                 "sources": []}]}


@st.composite
def mutated_plans(draw: st.DrawFn, base: dict[str, Any]) -> bytes:
    doc = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["top", "op", "source", "scope"]))
        value = draw(json_values | strings)
        if where == "top":
            doc[draw(st.sampled_from([*PLAN_FIELDS, "extra"]))] = value
            continue
        ops = doc.get("operations")
        if not isinstance(ops, list) or not ops or not isinstance(ops[0], dict):
            continue
        op = ops[draw(st.integers(0, len(ops) - 1))]
        if not isinstance(op, dict):
            continue
        if where == "op":
            op[draw(st.sampled_from(OP_FIELDS))] = value
        elif where == "source" and isinstance(op.get("add_sources"), list) and op["add_sources"]:
            op["add_sources"][0][draw(st.sampled_from(["source_type", "locator", "primary"]))] \
                = value
        elif where == "scope":
            op["scope"] = {"kind": draw(st.sampled_from(["agent", "workspace", "x"])),
                           "path": value}
    raw = json.dumps(doc, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    cut = draw(st.sampled_from(["none", "none", "truncate", "garble", "nest"]))
    if cut == "truncate":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif cut == "garble":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    elif cut == "nest":
        depth = draw(st.sampled_from([10, 1_000, 100_000]))
        raw = b'{"operations": ' + b"[" * depth + b"]" * depth + b"}"
    return raw


def previews(home: Path) -> int:
    conn = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM maintenance_previews").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def well_behaved(result: Any, *, error_line: bool = True) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code in DOCUMENTED, result.exit_code
    if result.exit_code:
        if error_line:  # (`blueprint validate` lists its problems and a summary instead)
            assert result.stderr.startswith("Error: "), result.stderr
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_fuzzed_plans_never_crash_and_never_write(
    cli: CliRunner, wardian_home: Path, tmp_path: Path
) -> None:
    agent = AgentRegistry(open_state_db()).add("ada", "claude")
    store = MemoryStore(open_memory_db())
    record = store.save(agent.id, "old text", evidence="e", scope=Scope.agent(),
                        actor="test")
    base = base_plan(agent.id, record)
    db = wardian_home / "memory.db"
    before = logical_state(db)

    @FUZZ
    @given(mutated_plans(base))
    def check(raw: bytes) -> None:
        path = tmp_path / "plan.json"
        path.write_bytes(raw)
        cached = previews(wardian_home)
        result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "ada")
        well_behaved(result)
        assert logical_state(db) == before  # preview never writes memory.db
        if result.exit_code:
            assert previews(wardian_home) == cached  # a refused plan caches nothing

    check()


yaml_scalars = st.text(max_size=40) | st.sampled_from(
    ["{{ inputs.x }}", "{{ 'a' * 10**9 }}", "{% for i in range(99999) %}{% endfor %}",
     "*a", "&a x", "!!python/object:os.system", "<<: *a", "~", "0x1F", "1e999", "\t"])


@st.composite
def blueprint_yaml(draw: st.DrawFn) -> bytes:
    lines = ["blueprint: {id: fz, name: Fuzz, version: 1}", "steps:", "  - id: a",
             "    action: noop", "    with: {x: 1}"]
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        indent = " " * draw(st.sampled_from([0, 2, 4, 6]))
        key = draw(st.sampled_from(["with", "prompt", "when", "role", "inputs", "x", "- id",
                                    "triggers", "retry", "<<"]))
        lines.insert(at, f"{indent}{key}: {draw(yaml_scalars)}")
    text = "\n".join(lines) + "\n"
    shape = draw(st.sampled_from(["plain", "plain", "laughs", "deep", "bytes"]))
    if shape == "laughs":
        text += "l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))
    elif shape == "deep":
        depth = draw(st.sampled_from([50, 70, 100_000]))
        text += "d: " + "[" * depth + "]" * depth + "\n"
    raw = text.encode("utf-8", "surrogatepass")
    if shape == "bytes":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    return raw


def test_fuzzed_blueprints_never_crash_and_never_write(
    cli: CliRunner, wardian_home: Path, tmp_path: Path
) -> None:
    @FUZZ
    @given(blueprint_yaml())
    def check(raw: bytes) -> None:
        path = tmp_path / "bp.yaml"
        path.write_bytes(raw)
        result = invoke(cli, "blueprint", "validate", str(path))
        well_behaved(result, error_line=False)
        assert result.exit_code in (0, 2)
        assert not (wardian_home / "memory.db").exists()

    check()
