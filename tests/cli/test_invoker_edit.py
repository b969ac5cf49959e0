"""Invokers can be edited (`set`), validated exactly as `add`; broken ones say why in list/show."""

from __future__ import annotations

import json

from tests.app.test_doctor import TICK, write_tick
from tests.conftest import invoke
from typer.testing import CliRunner

SC = ("automation", "session-close")
SCHED = ("automation", "schedule")


def _setup(cli: CliRunner) -> str:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick()
    res = invoke(cli, *SC, "add", "--blueprint", "tick", "--name", "t", "--agent", "ada",
                 "--assignments", "{}", "--boundary", "clear")
    assert res.exit_code == 0, res.output
    return res.stdout.strip()


def test_set_changes_inputs_and_boundaries_and_keeps_the_rest(cli: CliRunner) -> None:
    invoker = _setup(cli)
    assert invoke(cli, *SC, "enable", invoker).exit_code == 0
    res = invoke(cli, *SC, "set", invoker[:8], "--input", "label=y", "--boundary", "shutdown")
    assert res.exit_code == 0, res.output
    doc = json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)
    assert doc["inputs"] == {"label": "y"} and doc["boundaries"] == ["shutdown"]
    assert doc["status"] == "enabled"
    res = invoke(cli, *SC, "set", invoker[:8], "--any-boundary")
    assert json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)["boundaries"] == ["any"]


def test_set_refuses_what_add_refuses_and_changes_nothing(cli: CliRunner) -> None:
    invoker = _setup(cli)
    before = json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)
    for args, needle in [
        (("--input", "nosuch=1"), "unknown input 'nosuch'"),
        (("--boundary", "lunch"), "unknown boundary 'lunch'"),
        (("--assignments", '{"curator": {"target_type": "temporary_provider", '
                           '"provider": "builtin"}}'), "curator"),
        (("--assignments", "{"), "JSON"),
        ((), "nothing to change"),
    ]:
        res = invoke(cli, *SC, "set", invoker[:8], *args)
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.stderr, (args, res.stderr)
    after = json.loads(invoke(cli, *SC, "show", invoker, "--json").stdout)
    assert after == before


def test_add_refuses_a_missing_required_input(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick(TICK.replace("    default: x\n", ""))
    res = invoke(cli, *SC, "add", "--blueprint", "tick", "--name", "t", "--agent", "ada",
                 "--assignments", "{}")
    assert res.exit_code == 2 and "--input label=VALUE" in res.stderr
    res = invoke(cli, *SCHED, "add", "--blueprint", "tick", "--name", "s", "--agent", "ada",
                 "--assignments", "{}", "--every", "1h")
    assert res.exit_code == 2 and "--input label=VALUE" in res.stderr


def test_broken_invoker_shows_broken_with_reason(cli: CliRunner) -> None:
    invoker = _setup(cli)
    assert invoke(cli, *SC, "enable", invoker).exit_code == 0
    from wardian.config import user_library_dir

    (user_library_dir() / "tick.yaml").unlink()
    (doc,) = json.loads(invoke(cli, *SC, "list", "--json").stdout)
    assert doc["status"] == "broken" and "no blueprint with id 'tick'" in doc["broken_reason"]
    assert doc["enabled"] is True  # nothing is deleted or switched off
    shown = invoke(cli, *SC, "show", invoker).stdout
    assert "broken: no blueprint with id 'tick'" in shown and "fix" in shown


def test_schedule_set_and_broken(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    path = write_tick()
    res = invoke(cli, *SCHED, "add", "--blueprint", "tick", "--name", "s", "--agent", "ada",
                 "--assignments", "{}", "--every", "1h", "--json")
    assert res.exit_code == 0, res.output
    invoker = json.loads(res.stdout)["id"]
    res = invoke(cli, *SCHED, "set", invoker[:8], "--input", "label=z")
    assert res.exit_code == 0, res.output
    res = invoke(cli, *SCHED, "set", invoker[:8], "--input", "bad=z")
    assert res.exit_code == 2 and "unknown input 'bad'" in res.stderr
    doc = json.loads(invoke(cli, *SCHED, "show", invoker, "--json").stdout)
    assert doc["inputs"] == {"label": "z"} and doc["status"] == "disabled"
    path.unlink()
    doc = json.loads(invoke(cli, *SCHED, "show", invoker, "--json").stdout)
    assert doc["status"] == "broken" and "tick" in doc["broken_reason"]
    assert "broken" in invoke(cli, *SCHED, "list").stdout
