"""An invoker's name is how the README addresses it (`session-close enable "Consolidate ada"`),
so two invokers of one kind may not share it (operator trial: running the README's `add`
twice made two "Consolidate ada" invokers, and `enable "Consolidate ada"` then failed with
"invoker id prefix 'Consolidate ada' is ambiguous"). Real CLI, real state.db."""

from __future__ import annotations

import json

from tests.conftest import invoke
from typer.testing import CliRunner

BUILTIN = '{"curator":{"target_type":"temporary_provider","provider":"builtin",' \
          '"model":"curator-rules"}}'


def _session_close(cli: CliRunner, name: str) -> tuple[int, str, str]:
    res = invoke(cli, "automation", "session-close", "add", "--blueprint",
                 "memory-consolidation", "--name", name, "--agent", "ada",
                 "--assignments", BUILTIN)
    return res.exit_code, res.stdout, res.stderr


def _schedule(cli: CliRunner, name: str) -> tuple[int, str, str]:
    res = invoke(cli, "automation", "schedule", "add", "--blueprint", "memory-consolidation",
                 "--name", name, "--agent", "ada", "--every", "1h",
                 "--assignments", BUILTIN)
    return res.exit_code, res.stdout, res.stderr


def _listed(cli: CliRunner, kind: str) -> list[dict[str, object]]:
    res = invoke(cli, "automation", kind, "list", "--json")
    assert res.exit_code == 0, res.stderr
    doc: list[dict[str, object]] = json.loads(res.stdout)
    return doc


def test_a_second_invoker_with_the_same_name_is_a_conflict(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    for add, kind in ((_session_close, "session-close"), (_schedule, "schedule")):
        code, _, err = add(cli, "Consolidate ada")
        assert code == 0, err
        code, _, err = add(cli, "  Consolidate ada ")  # names are stored stripped
        assert code == 4, err
        assert "Consolidate ada" in err and "already" in err and "--name" in err
        assert len(_listed(cli, kind)) == 1
        enabled = invoke(cli, "automation", kind, "enable", "Consolidate ada")
        assert enabled.exit_code == 0, enabled.stderr


def test_set_may_not_rename_onto_another_invoker(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    assert _session_close(cli, "first")[0] == 0
    assert _session_close(cli, "second")[0] == 0
    clash = invoke(cli, "automation", "session-close", "set", "second", "--name", "first")
    assert clash.exit_code == 4, clash.stderr
    assert sorted(str(d["name"]) for d in _listed(cli, "session-close")) == ["first", "second"]
    # Keeping its own name, or a name only the other kind uses, is fine.
    same = invoke(cli, "automation", "session-close", "set", "second", "--name", "second")
    assert same.exit_code == 0, same.stderr
    assert _schedule(cli, "first")[0] == 0
    assert _schedule(cli, "other")[0] == 0
    clash = invoke(cli, "automation", "schedule", "set", "other", "--name", "first")
    assert clash.exit_code == 4, clash.stderr
