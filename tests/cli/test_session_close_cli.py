"""The spec's "Optional consolidation" commands, as written, against the shipped sample and a
refreshed model catalog (fake codex CLI on PATH); catalog and role refusals."""

from __future__ import annotations

import json

import pytest
from tests.conftest import invoke
from tests.providers.conftest import FakeCli, fake_cli  # noqa: F401  (fixture)
from typer.testing import CliRunner, Result

from wardian.config import open_state_db
from wardian.invokers.store import InvokerStore


@pytest.fixture
def refreshed(cli: CliRunner, fake_cli: FakeCli) -> FakeCli:  # noqa: F811
    assert invoke(cli, "agent", "add", "coder", "--provider", "codex").exit_code == 0
    res = invoke(cli, "agent", "models", "--provider", "codex", "--refresh")
    assert res.exit_code == 0, res.output
    return fake_cli


def _add(cli: CliRunner, assignments: str) -> Result:
    return invoke(
        cli, "automation", "session-close", "add",
        "--blueprint", "memory-consolidation",
        "--name", "Consolidate this agent",
        "--agent", "coder",
        "--boundary", "clear",
        "--require-archive",
        "--assignments", assignments,
    )


def test_spec_example_works_as_written(cli: CliRunner, refreshed: FakeCli) -> None:
    res = _add(cli, '{"curator":{"target_type":"temporary_provider","provider":"codex",'
                    '"model":"gpt-5.2-codex","effort":"low"}}')
    assert res.exit_code == 0, res.output
    invoker_id = res.stdout.strip()
    assert InvokerStore(open_state_db()).get(invoker_id).enabled is False
    res = invoke(cli, "automation", "session-close", "list")
    assert res.exit_code == 0 and invoker_id[:8] in res.stdout
    assert "disabled" in res.stdout
    res = invoke(cli, "automation", "session-close", "enable", invoker_id)
    assert res.exit_code == 0, res.output
    (doc,) = json.loads(invoke(cli, "automation", "session-close", "list", "--json").stdout)
    assert doc["status"] == "enabled" and doc["boundaries"] == ["clear"]
    assert doc["assignments"]["curator"]["model"] == "gpt-5.2-codex"
    assert doc["assignments"]["curator"]["effort"] == "low"


@pytest.mark.parametrize(("assignments", "needle"), [
    ('{"curator":{"target_type":"temporary_provider","provider":"codex","model":"gpt-9",'
     '"effort":"low"}}', "gpt-9"),
    ('{"curator":{"target_type":"temporary_provider","provider":"codex",'
     '"model":"gpt-5.1-codex-mini","effort":"low"}}', "low"),
    ('{"reviewer":{"target_type":"temporary_provider","provider":"builtin"}}', "reviewer"),
    ('{"curator":{"target_type":"temporary_provider","provider":"nope"}}', "nope"),
    ('{"curator":', "JSON"),
])
def test_refused_with_reason(cli: CliRunner, refreshed: FakeCli, assignments: str,
                             needle: str) -> None:
    res = _add(cli, assignments)
    assert res.exit_code == 2, res.output
    assert needle in res.stderr
    assert InvokerStore(open_state_db()).list() == []


def test_enable_revalidates(cli: CliRunner, refreshed: FakeCli) -> None:
    res = _add(cli, '{"curator":{"target_type":"agent","agent":"coder"}}')
    assert res.exit_code == 0, res.output
    invoker_id = res.stdout.strip()
    # the agent target's model is unset -> fine; now break it: remove the blueprint role
    store = InvokerStore(open_state_db())
    store.update(invoker_id, assignments={"other": {"target_type": "temporary_provider",
                                                    "provider": "builtin"}})
    res = invoke(cli, "automation", "session-close", "enable", invoker_id)
    assert res.exit_code == 2 and "other" in res.stderr
    # the stored assignments are this invoker's, not a --assignments flag the user passed
    assert f"invoker {invoker_id[:8]}: unknown role 'other'" in res.stderr, res.stderr
    assert "--assignments" not in res.stderr.split("\n")[0]
    assert store.get(invoker_id).enabled is False


def test_bad_assignments_json_says_line_and_column(cli: CliRunner, refreshed: FakeCli) -> None:
    # one parser (the providers'), which says where in a multi-line document it broke
    res = _add(cli, '{\n  "curator": {"target_type": "temporary_provider",\n  "provider": }\n}')
    assert res.exit_code == 2
    assert "--assignments" in res.stderr and "line 3, column 15" in res.stderr, res.stderr
