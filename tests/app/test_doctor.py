"""`wardian doctor`: real data dirs, the real CLI; each problem names the command that fixes it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import user_library_dir

TICK = """\
blueprint:
  id: tick
  name: Tick
  version: 1
inputs:
  label:
    type: string
    default: x
triggers: [session-close, schedule, manual]
steps:
  - id: snap
    action: memory.snapshot
"""


def _doctor(cli: CliRunner) -> tuple[int, dict[str, Any]]:
    res = invoke(cli, "doctor", "--json")
    return res.exit_code, json.loads(res.stdout)


def _findings(doc: dict[str, Any], check: str) -> list[dict[str, Any]]:
    (entry,) = [c for c in doc["checks"] if c["name"] == check]
    return list(entry["findings"])


def write_tick(text: str = TICK) -> Path:
    """The user-library blueprint ``tick`` (shadowing nothing)."""
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tick.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_fresh_install_is_healthy_and_nothing_is_created(
        cli: CliRunner, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = wardian_home / "not-yet"
    monkeypatch.setenv("WARDIAN_HOME", str(missing))
    code, doc = _doctor(cli)
    assert code == 0 and doc["ok"] is True
    (finding,) = _findings(doc, "data-dir")
    assert finding["status"] == "warning" and "agent add" in finding["fix"]
    assert not missing.exists()  # the doctor writes nothing


def test_healthy_setup_exits_0_with_a_readable_report(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    res = invoke(cli, "doctor")
    assert res.exit_code == 0, res.output
    assert "No problems found." in res.stdout and "[ok]" in res.stdout


def test_damaged_database_is_a_problem_with_a_fix(cli: CliRunner, wardian_home: Path) -> None:
    (wardian_home / "memory.db").write_bytes(b"this is not a database" * 100)
    code, doc = _doctor(cli)
    assert code == 1 and doc["problems"] >= 1
    bad = [f for f in _findings(doc, "data-dir") if f["status"] == "problem"]
    assert bad and "memory.db" in bad[0]["message"] and "backup" in bad[0]["fix"]


def test_invalid_stored_setting_names_the_set_command(cli: CliRunner, wardian_home: Path) -> None:
    assert invoke(cli, "settings", "set", "memory.startup_budget_chars", "5000").exit_code == 0
    with sqlite3.connect(wardian_home / "state.db") as conn:  # an older or hand-edited value
        conn.execute("UPDATE settings SET value_json = '12' WHERE key = ?",
                     ("memory.startup_budget_chars",))
    code, doc = _doctor(cli)
    assert code == 1
    (bad,) = [f for f in _findings(doc, "settings") if f["status"] == "problem"]
    assert bad["fix"].startswith("`wardian settings set memory.startup_budget_chars VALUE`")


def test_invoker_with_deleted_blueprint_is_broken(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    path = write_tick()
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "tick", "--name", "t",
                 "--agent", "ada", "--assignments", "{}")
    assert res.exit_code == 0, res.output
    assert _doctor(cli)[0] == 0
    path.unlink()
    code, doc = _doctor(cli)
    assert code == 1
    (bad,) = [f for f in _findings(doc, "invokers") if f["status"] == "problem"]
    assert "no blueprint with id 'tick'" in bad["message"] and "remove" in bad["fix"]
    text = invoke(cli, "doctor").stdout
    assert "fix:" in text and "1 problem(s) found." in text


def test_invoker_missing_a_new_required_input_points_at_set(cli: CliRunner) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "builtin").exit_code == 0
    write_tick()
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "tick", "--name", "t",
                 "--agent", "ada", "--assignments", "{}")
    invoker = res.stdout.strip()
    write_tick(TICK.replace("    default: x\n", "    default: x\n  reviewer_email:\n"
                            "    type: string\n"))
    code, doc = _doctor(cli)
    assert code == 1
    (bad,) = [f for f in _findings(doc, "invokers") if f["status"] == "problem"]
    fix = f"`wardian automation session-close set {invoker[:8]} --input reviewer_email=VALUE`"
    assert bad["fix"] == fix
    res = invoke(cli, "automation", "session-close", "set", invoker[:8],
                 "--input", "reviewer_email=r@example.org")
    assert res.exit_code == 0, res.output
    assert _doctor(cli)[0] == 0


def test_run_left_running_by_a_dead_process_is_reported_not_marked(
        cli: CliRunner, wardian_home: Path) -> None:
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore

    write_tick()
    store = RunStore(open_state_db())
    run, _ = store.create_run(blueprint_id="tick", agent_id="a", assignments={}, inputs={},
                              invocation={"trigger": "manual"})
    with sqlite3.connect(wardian_home / "state.db") as conn:  # as a killed executor leaves it
        conn.execute("UPDATE runs SET status = 'running', owner_pid = 999999999,"
                     " owner_started = 1.0 WHERE id = ?", (run.id,))
    code, doc = _doctor(cli)
    assert code == 1
    (bad,) = [f for f in _findings(doc, "runs") if f["status"] == "problem"]
    assert bad["subject"] == run.id and f"run resume {run.id[:8]}" in bad["fix"]
    with sqlite3.connect(wardian_home / "state.db") as conn:
        assert conn.execute("SELECT status FROM runs WHERE id = ?",
                            (run.id,)).fetchone()[0] == "running"


def test_a_registered_check_runs_and_a_crashing_one_is_reported(cli: CliRunner) -> None:
    from wardian.app import doctor
    from wardian.plugins import DoctorCheck, loaded

    def crash(ctx: doctor.DoctorContext) -> list[doctor.Finding]:
        raise RuntimeError("boom")

    loaded().doctor_checks["test-crash"] = DoctorCheck("Crashing check", crash)
    try:
        code, doc = _doctor(cli)
        assert code == 1
        (bad,) = _findings(doc, "test-crash")
        assert "boom" in bad["message"] and bad["fix"]
        assert _findings(doc, "runs")  # the other checks still ran
    finally:
        del loaded().doctor_checks["test-crash"]


def test_unknown_check_is_a_usage_error(cli: CliRunner) -> None:
    res = invoke(cli, "doctor", "--check", "nosuch")
    assert res.exit_code == 2 and "data-dir" in res.stderr


def test_the_plugin_registers_exactly_the_doctors_own_checks_in_its_order() -> None:
    from wardian import builtin_plugin
    from wardian.app.doctor import builtin_checks

    assert list(builtin_plugin._CHECKS) == list(builtin_checks())
