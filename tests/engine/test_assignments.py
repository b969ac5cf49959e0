"""Assignment errors through the real CLI: each names `--assignments` and the role, says how
to fix it, exits 2 (1 for a missing agent), and stores nothing (DESIGN.md "Blueprints, runs,
providers"; the checks live in `wardian.providers.assignments`, roles in
`wardian.engine.assignments`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.engine.helpers import write_blueprint

from wardian.blueprints.validate import load_blueprint
from wardian.config import open_state_db
from wardian.engine.assignments import (
    check_assignments,
    parse_assignments_json,
    resolve_selection,
)
from wardian.errors import NotFoundError, ValidationError
from wardian.invokers.store import InvokerStore
from wardian.runtime.agents import AgentRegistry

KNOWN = "anthropic, builtin, claude, codex, gemini, openai, opencode"
EXAMPLE = '{"curator": {"target_type": "temporary_provider", "provider": "<provider>"}}'

CASES = [
    ('{"curator": {"target_type": "person"}}', 2,
     "--assignments: curator.target_type: expected 'temporary_provider' or 'agent', "
     "found 'person'"),
    ('{"curator": {"target_type": "temporary_provider", "provider": "codx"}}', 2,
     f"--assignments: curator: provider 'codx' is unknown (known: {KNOWN}; "
     "did you mean 'codex'?)"),
    ('{"curator": {"target_type": "temporary_provider", "provider": "codex"}}', 2,
     "--assignments: curator: the model catalog of codex was never refreshed "
     "(run `wardian agent models --provider codex --refresh`)"),
    ('{"curator": {"target_type": "agent", "agent": "alice"}}', 2,
     "--assignments: curator: agent 'alice': the model catalog of codex was never refreshed "
     "(run `wardian agent models --provider codex --refresh`)"),
    ('{"curator": {"target_type": "agent", "agent": "ghost"}}', 1,
     "--assignments: curator: no agent named or with id 'ghost' (see `wardian agent list`)"),
    ('{"curator": {"target_type": "temporary_provider", "provider": "builtin", "model": "x"}}',
     2, "--assignments: curator: model 'x' is not in the builtin catalog (known: "
        "curator-rules) (pick one listed by `wardian agent models --provider builtin "
        "--refresh`)"),
    ('{"curator": {"target_type": "temporary_provider", "provider": "builtin", '
     '"effort": "high"}}', 2,
     "--assignments: curator: builtin has no effort levels, but effort 'high' was assigned "
     "(drop `effort` from the assignment)"),
    ('{"curator": {"target_type": "temporary_provider", "provider": "builtin", "modle": "x"}}',
     2, "--assignments: curator.modle: unknown field; a temporary_provider assignment takes "
        "target_type, provider, model, effort (did you mean 'model'?)"),
    ('{"curator": {"target_type": "temporary_provider"}}', 2,
     "--assignments: curator.provider: missing; a temporary_provider assignment needs "
     f"provider (known providers: {KNOWN})"),
    ('{"curator": {}}', 2,
     "--assignments: curator.target_type: missing; expected 'temporary_provider' or 'agent' "
     f"(e.g. {EXAMPLE})"),
    ('{"curator": "builtin"}', 2,
     "--assignments: curator: expected an object with a target_type, found 'builtin' "
     f"(e.g. {EXAMPLE})"),
    ('{"curatr": {"target_type": "temporary_provider", "provider": "builtin"}}', 2,
     "--assignments: unknown role 'curatr'; blueprint 'memory-consolidation' declares "
     "curator (did you mean 'curator'?)"),
    ("{}", 2,
     "--assignments: role(s) curator used by blueprint 'memory-consolidation' have no "
     "assignment (pass --assignments '{\"curator\": {\"target_type\": "
     "\"temporary_provider\", \"provider\": \"builtin\"}}')"),
]
"""(--assignments, exit code, the exact error line after ``Error: ``)."""

DOCUMENT_CASES = [
    ('{"curator": ', 2,
     "--assignments: not valid JSON: Expecting value at line 1, column 13 (expected "
     '{"<role>": {"target_type": "temporary_provider", "provider": "<provider>"}})'),
    ("[1]", 2,
     "--assignments: expected a JSON object of role -> assignment, found [1] (e.g. "
     '{"<role>": {"target_type": "temporary_provider", "provider": "<provider>"}})'),
]
"""Whole-document errors: `run start` parses through the providers module. (`session-close
add` still decodes the JSON itself in invokers/session_close.py.)"""


@pytest.fixture
def agents(cli: Any, tmp_path: Path) -> None:
    for name, provider in (("bob", "builtin"), ("alice", "codex")):
        result = invoke(cli, "agent", "add", name, "--provider", provider,
                        "--workspace", str(tmp_path))
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("assignments", "code", "message"), CASES + DOCUMENT_CASES)
def test_run_start_refuses_bad_assignments(cli: Any, agents: None, assignments: str,
                                           code: int, message: str) -> None:
    result = invoke(cli, "automation", "run", "start", "memory-consolidation", "--agent", "bob",
                    "--assignments", assignments, "--wait")
    assert result.exit_code == code, result.output
    assert result.stderr == f"Error: {message}\n"
    assert json.loads(invoke(cli, "automation", "runs", "--json").stdout) == []


@pytest.mark.parametrize(("assignments", "code", "message"), CASES)
def test_session_close_add_refuses_bad_assignments(cli: Any, agents: None, assignments: str,
                                                   code: int, message: str) -> None:
    result = invoke(cli, "automation", "session-close", "add", "--blueprint",
                    "memory-consolidation", "--name", "x", "--agent", "bob",
                    "--assignments", assignments)
    assert result.exit_code == code, result.output
    assert result.stderr == f"Error: {message}\n"
    assert InvokerStore(open_state_db()).list() == []


def test_good_assignments_pass_both_commands(cli: Any, agents: None) -> None:
    good = '{"curator": {"target_type": "temporary_provider", "provider": "builtin"}}'
    added = invoke(cli, "automation", "session-close", "add", "--blueprint",
                   "memory-consolidation", "--name", "x", "--agent", "bob",
                   "--assignments", good)
    assert added.exit_code == 0, added.output
    assert len(InvokerStore(open_state_db()).list()) == 1


BP = """\
blueprint: {id: roles-demo, name: Roles demo, version: 1}
roles: {curator: Curates., judge: Judges.}
triggers: [manual]
steps:
  - id: ask
    role: curator
    prompt: "hi"
    output: {$ref: "wardian:curator-batch"}
"""


def test_declared_but_unused_role_may_stay_unassigned(tmp_path: Path) -> None:
    loaded = load_blueprint(write_blueprint(tmp_path / "bp", BP))
    snapshot = check_assignments(
        loaded, '{"curator": {"target_type": "temporary_provider", "provider": "builtin"}}')
    assert snapshot == {"curator": {"target_type": "temporary_provider",
                                    "provider": "builtin"}}
    both = check_assignments(loaded, {
        "curator": {"target_type": "temporary_provider", "provider": "builtin"},
        "judge": {"target_type": "temporary_provider", "provider": "builtin",
                  "model": "curator-rules"}})
    assert both["judge"]["model"] == "curator-rules"
    with pytest.raises(ValidationError) as unknown:
        check_assignments(loaded, {"critic": {"target_type": "agent", "agent": "x"}},
                          origin="invoker 1234abcd")
    assert str(unknown.value) == ("invoker 1234abcd: unknown role 'critic'; blueprint "
                                  "'roles-demo' declares curator, judge (remove it from "
                                  "invoker 1234abcd)")


def test_without_catalog_check_an_agent_target_must_still_exist(tmp_path: Path) -> None:
    loaded = load_blueprint(write_blueprint(tmp_path / "bp", BP))
    AgentRegistry(open_state_db()).add("alice", "codex")
    assert check_assignments(loaded, {"curator": {"target_type": "agent", "agent": "alice"}},
                             check_catalog=False) == {
        "curator": {"target_type": "agent", "agent": "alice"}}
    with pytest.raises(NotFoundError, match=r"^--assignments: curator: no agent named"):
        check_assignments(loaded, {"curator": {"target_type": "agent", "agent": "ghost"}},
                          check_catalog=False)


def test_parse_and_resolve_go_through_the_providers_module() -> None:
    assert parse_assignments_json(None) == {} and parse_assignments_json("") == {}
    assert parse_assignments_json('{"c": {"target_type": "temporary_provider", '
                                  '"provider": "codex", "model": null}}') == {
        "c": {"target_type": "temporary_provider", "provider": "codex"}}
    AgentRegistry(open_state_db()).add("alice", "codex", model="gpt-5.2-codex", effort="high")
    assert resolve_selection({"target_type": "agent", "agent": "alice"}) == (
        "codex", "gpt-5.2-codex", "high")
    with pytest.raises(ValidationError) as bad:
        resolve_selection({"target_type": "person"}, role="curator")
    assert str(bad.value) == ("curator.target_type: expected 'temporary_provider' or 'agent', "
                              "found 'person'")
