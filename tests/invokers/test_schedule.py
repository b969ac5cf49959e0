"""Schedule config, durations, cron parsing and the slot policy (pure functions) plus the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db, user_library_dir
from wardian.errors import UsageError
from wardian.invokers.schedule import (
    ScheduleConfig,
    SlotDecision,
    format_duration,
    parse_duration,
    plan_due_slots,
)
from wardian.runtime.agents import AgentRegistry

T0 = datetime(2030, 1, 1, tzinfo=UTC)

BLUEPRINT = """\
blueprint:
  id: sched-test
  name: Schedule test
  description: Does nothing; used to test schedule invokers.
  version: 1
triggers: [schedule, manual]
steps:
  - id: nothing
    action: noop
"""


@pytest.mark.parametrize(("text", "seconds"), [
    ("250ms", 0.25), ("30s", 30), ("5m", 300), ("2h", 7200), ("1d", 86400), ("1h30m", 5400),
    ("45", 45),
])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5x", "m5", "0s", "-1m", "1h 5"])
def test_parse_duration_refuses(text: str) -> None:
    with pytest.raises(UsageError):
        parse_duration(text)


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0.25, 300, 5400, 90)] == ["250ms", "5m", "1h30m",
                                                                   "1m30s"]


def test_cron_day_of_week_uses_crontab_numbering() -> None:
    # 2030-01-04 is a Friday; "1-5" is Monday..Friday in crontab (APScheduler 3 would read
    # it as Tuesday..Saturday).
    config = ScheduleConfig(cron="0 9 * * 1-5")
    nxt = config.fire_times.upcoming(datetime(2030, 1, 4, 12, tzinfo=UTC), 2)
    assert [n.strftime("%a %d") for n in nxt] == ["Mon 07", "Tue 08"]
    sundays = ScheduleConfig(cron="0 9 * * 0").fire_times.upcoming(T0, 2)
    assert {n.strftime("%a") for n in sundays} == {"Sun"}
    assert ScheduleConfig(cron="0 9 * * 7").fire_times.upcoming(T0, 1) == sundays[:1]
    steps = ScheduleConfig(cron="0 9 * * */2").fire_times.upcoming(datetime(2030, 1, 5, 12,
                                                                            tzinfo=UTC), 4)
    assert [n.strftime("%a") for n in steps] == ["Sun", "Tue", "Thu", "Sat"]


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"cron": "* * *"}, "five"),
    ({"cron": "61 * * * *"}, "not a valid cron"),
    ({"cron": "0 0 1 * 1"}, "both day-of-month and day-of-week"),
    ({"cron": "0 0 30 2 *"}, "never fires"),
    ({}, "exactly one"),
    ({"cron": "* * * * *", "every_s": 5}, "exactly one"),
    ({"every_s": 0.001}, "at least"),
    ({"cron": "* * * * *", "timezone": "Mars/Base"}, "IANA"),
    ({"cron": "* * * * *", "catch_up": "some"}, "--catch-up"),
    ({"cron": "* * * * *", "overlap": "kill"}, "--overlap"),
    ({"cron": "* * * * *", "max_catch_up": 101}, "--max-catch-up"),
])
def test_config_errors_name_the_flag(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment):
        ScheduleConfig(**kwargs)


def test_a_rare_cron_is_accepted() -> None:
    leap = ScheduleConfig(cron="0 0 29 2 *", anchor="2030-01-01T00:00:00Z")
    assert [t.year for t in leap.fire_times.upcoming(T0, 2)] == [2032, 2036]


def test_config_round_trips_and_defaults() -> None:
    config = ScheduleConfig(cron="*/5 * * * *", timezone="Europe/Berlin")
    assert config.misfire_grace_s == 300
    assert (config.catch_up, config.overlap, config.max_catch_up) == ("latest", "skip", 10)
    again = ScheduleConfig.from_config(json.loads(json.dumps(config.to_config())))
    assert again.to_config() == config.to_config()
    with pytest.raises(UsageError, match="unknown keys"):
        ScheduleConfig.from_config({**config.to_config(), "coalesce": True})


def test_interval_slots_are_stable_whole_milliseconds() -> None:
    config = ScheduleConfig(every_s=0.05, anchor="2030-01-01T00:00:00Z")
    slots = config.fire_times.between(T0, T0 + timedelta(seconds=10))
    assert len(slots) == 200
    assert all(s.microsecond % 1000 == 0 for s in slots)
    # Recomputing from any slot gives the same later slots (keys are stable across restarts).
    assert config.fire_times.between(slots[99], T0 + timedelta(seconds=10)) == slots[100:]


# --- the slot policy -------------------------------------------------------------------


def _slots(n: int, step_s: float = 300) -> list[datetime]:
    return [T0 + timedelta(seconds=step_s * (i + 1)) for i in range(n)]


def _outcomes(decisions: list[SlotDecision]) -> list[str]:
    return [d.outcome for d in decisions]


def test_on_time_slot_runs_and_grace_is_inclusive() -> None:
    config = ScheduleConfig(cron="*/5 * * * *", misfire_grace_s=60)
    due = _slots(1)
    assert _outcomes(plan_due_slots(config, due, due[0] + timedelta(seconds=60))) == ["run"]
    late = plan_due_slots(config, due, due[0] + timedelta(seconds=61), )
    assert _outcomes(late) == ["run"]  # catch-up latest still runs the newest missed slot
    none = ScheduleConfig(cron="*/5 * * * *", misfire_grace_s=60, catch_up="none")
    skipped = plan_due_slots(none, due, due[0] + timedelta(seconds=61))
    assert _outcomes(skipped) == ["skipped"]
    assert skipped[0].reason == "misfired by 61 s"


def test_catch_up_none_runs_only_on_time_slots() -> None:
    config = ScheduleConfig(cron="*/5 * * * *", catch_up="none")
    due = _slots(12)
    decisions = plan_due_slots(config, due, due[-1] + timedelta(seconds=1))
    assert _outcomes(decisions) == ["skipped"] * 11 + ["run"]
    assert decisions[0].reason == "misfired by 3301 s"


def test_catch_up_latest_coalesces_into_one_run() -> None:
    config = ScheduleConfig(cron="*/5 * * * *", misfire_grace_s=60)
    due = _slots(12)
    decisions = plan_due_slots(config, due, due[-1] + timedelta(minutes=2))
    assert _outcomes(decisions) == ["coalesced"] * 11 + ["run"]
    assert {d.into for d in decisions[:-1]} == {due[-1]}
    # With an on-time slot due as well, the missed ones coalesce into it.
    decisions = plan_due_slots(config, due, due[-1] + timedelta(seconds=30))
    assert _outcomes(decisions) == ["coalesced"] * 11 + ["run"]


def test_catch_up_all_is_capped() -> None:
    config = ScheduleConfig(cron="*/5 * * * *", misfire_grace_s=60, catch_up="all",
                            max_catch_up=3)
    due = _slots(12)
    decisions = plan_due_slots(config, due, due[-1] + timedelta(minutes=2))
    assert _outcomes(decisions) == ["skipped"] * 9 + ["run"] * 3
    assert "over the catch-up cap of 3" in (decisions[0].reason or "")


def test_overlap_skip_records_the_busy_run() -> None:
    config = ScheduleConfig(cron="*/5 * * * *")
    due = _slots(1)
    decisions = plan_due_slots(config, due, due[0], busy_run_id="abcdef0123456789")
    assert _outcomes(decisions) == ["skipped"]
    assert decisions[0].reason == "overlap: run abcdef01 still running"
    for mode in ("queue", "parallel"):
        other = ScheduleConfig(cron="*/5 * * * *", overlap=mode)
        assert _outcomes(plan_due_slots(other, due, due[0], busy_run_id="x" * 36)) == ["run"]


def test_one_batch_never_overlap_skips_itself_and_disabled() -> None:
    config = ScheduleConfig(cron="*/5 * * * *", catch_up="all")
    due = _slots(2)
    assert _outcomes(plan_due_slots(config, due, due[-1])) == ["run", "run"]
    busy = plan_due_slots(config, due, due[-1], busy_run_id="r" * 36)
    assert _outcomes(busy) == ["skipped", "skipped"]
    off = plan_due_slots(config, due, due[-1], disabled=True)
    assert [(d.outcome, d.reason) for d in off] == [("skipped", "disabled")] * 2


# --- CLI ---------------------------------------------------------------------------------


@pytest.fixture
def ready() -> str:
    folder = user_library_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sched-test.yaml").write_text(BLUEPRINT, encoding="utf-8")
    return AgentRegistry(open_state_db()).add("coder", "builtin", model="curator-rules").id


def test_cli_add_is_disabled_and_list_shows_local_times(cli: CliRunner, ready: str) -> None:
    res = invoke(cli, "automation", "schedule", "add", "--blueprint", "sched-test", "--name",
                 "nightly", "--agent", "coder", "--cron", "30 2 * * *", "--timezone",
                 "Europe/Berlin", "--assignments", "{}", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["enabled"] is False
    assert doc["config"]["misfire_grace_s"] == 300
    assert all(t.endswith(("CET", "CEST")) and " 02:30:00 " in t
               for t in doc["next_fire_times_local"])
    assert len(doc["next_fire_times"]) == 5
    res = invoke(cli, "automation", "schedule", "list", "--json")
    [listed] = json.loads(res.stdout)
    assert listed["id"] == doc["id"] and listed["missed_slots_would_run_now"] == 0
    assert invoke(cli, "automation", "schedule", "enable", "nightly").exit_code == 0
    shown = json.loads(invoke(cli, "automation", "schedule", "show", "nightly", "--json").stdout)
    assert shown["enabled"] is True
    res = invoke(cli, "automation", "schedule", "history", "nightly", "--json")
    assert json.loads(res.stdout)["slots"] == []
    assert invoke(cli, "automation", "schedule", "disable", "nightly").exit_code == 0
    assert invoke(cli, "automation", "schedule", "remove", "nightly").exit_code == 0
    assert json.loads(invoke(cli, "automation", "schedule", "list", "--json").stdout) == []


def test_cli_add_refuses_bad_input(cli: CliRunner, ready: str) -> None:
    base = ["automation", "schedule", "add", "--blueprint", "sched-test", "--name", "x",
            "--agent", "coder", "--assignments", "{}"]
    res = invoke(cli, *base, "--cron", "1 2 3")
    assert res.exit_code == 2 and "five" in res.stderr
    res = invoke(cli, *base, "--every", "5 minutes")
    assert res.exit_code == 2 and "--every" in res.stderr
    res = invoke(cli, *base, "--cron", "* * * * *", "--timezone", "Nowhere/City")
    assert res.exit_code == 2 and "IANA" in res.stderr
    res = invoke(cli, *base, "--every", "5m", "--max-catch-up", "3")
    assert res.exit_code == 2 and "--max-catch-up caps --catch-up all" in res.stderr
    res = invoke(cli, *base, "--cron", "* * * * *", "--assignments", '{"ghost": {}}')
    assert res.exit_code == 2
    # The engine's rule: every role a step uses needs an assignment (a declared role no
    # step uses does not), and the message is the engine's, the same as `run start`'s.
    (roled := user_library_dir() / "roled.yaml").write_text(
        BLUEPRINT.replace("sched-test", "roled").replace("triggers:",
                                                         "roles:\n  helper: Helps.\ntriggers:"))
    roled_args = [a if a != "sched-test" else "roled" for a in base]
    res = invoke(cli, *roled_args[:6], "unused-role", *roled_args[7:], "--every", "5m")
    assert res.exit_code == 0, res.output
    roled.write_text(roled.read_text() + "  - id: ask\n    role: helper\n    prompt: hi\n"
                     "    output: {$ref: \"wardian:curator-batch\"}\n")
    res = invoke(cli, *roled_args, "--every", "5m")
    assert res.exit_code == 2
    assert ("--assignments: role(s) helper used by blueprint 'roled' have no assignment"
            in res.stderr), res.stderr
    res = invoke(cli, *roled_args[:-1], '{\n  "helper": \n}', "--every", "5m")
    assert res.exit_code == 2 and "line 3, column 1" in res.stderr, res.stderr
    roled.unlink()
    res = invoke(cli, "automation", "schedule", "add", "--blueprint", "nope", "--name", "x",
                 "--agent", "coder", "--assignments", "{}", "--every", "5m")
    assert res.exit_code == 1 and "no blueprint" in res.stderr


def test_cli_run_now_runs_outside_the_slots(cli: CliRunner, ready: str) -> None:
    res = invoke(cli, "automation", "schedule", "add", "--blueprint", "sched-test", "--name",
                 "adhoc", "--agent", "coder", "--every", "1h", "--assignments", "{}")
    assert res.exit_code == 0, res.output
    res = invoke(cli, "automation", "schedule", "run-now", "adhoc", "--json")
    assert res.exit_code == 0, res.output
    run = json.loads(res.stdout)
    assert run["status"] == "succeeded"
    history = json.loads(invoke(cli, "automation", "schedule", "history", "adhoc",
                                "--json").stdout)
    assert history["slots"] == []
    # The table form says where the run just started is, not only "is serve running?"
    # (docs walk-through: run-now, then history, said "No recorded slots … yet").
    text = " ".join(invoke(cli, "automation", "schedule", "history", "adhoc").stdout.split())
    assert "run-now" in text and "wardian automation runs" in text, text


def test_help_states_the_defaults(cli: CliRunner) -> None:
    res = invoke(cli, "automation", "schedule", "add", "--help")
    text = " ".join(res.stdout.replace("│", " ").split())
    for fragment in ("default 5m", "latest (default)", "skip (default", "default 10",
                     "does not exist fires once", "created DISABLED"):
        assert fragment in text


@pytest.mark.parametrize(("catch_up", "extra", "would_run"), [
    ("latest", {}, 1), ("all", {"max_catch_up": 3}, 3), ("none", {}, 0)])
def test_list_says_how_many_missed_slots_would_run_now(
        ready: str, catch_up: str, extra: dict[str, Any], would_run: int) -> None:
    """No daemon for an hour: twelve five-minute slots are owed; the policy decides how many
    would run if a daemon started now (and no slot is recorded by asking)."""
    from wardian.app.schedules import add_schedule, list_schedules, set_schedule_enabled
    from wardian.invokers.slots import SlotStore

    invoker = add_schedule(open_state_db(), blueprint_id="sched-test", name="n", agent="coder",
                           assignments="{}",
                           cron="*/5 * * * *", misfire_grace_s=60, catch_up=catch_up, **extra)
    set_schedule_enabled(open_state_db(), invoker.id, True, now=T0)
    [doc] = list_schedules(open_state_db(), now=T0 + timedelta(hours=1, minutes=2))
    assert (doc["slots_owed_now"], doc["missed_slots_would_run_now"]) == (12, would_run)
    assert SlotStore(open_state_db()).all_slots(invoker.id) == []
