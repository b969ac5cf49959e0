"""Pin the public surface of the schedule modules, and keep the CLI import light."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

SURFACE = {
    "wardian.invokers.schedule": [
        "CATCH_UP_MODES", "DEFAULT_MAX_CATCH_UP", "DEFAULT_MISFIRE_GRACE_S", "MAX_CATCH_UP_LIMIT",
        "MIN_INTERVAL_S", "OVERLAP_MODES", "FireTimes", "ScheduleConfig", "SlotDecision",
        "format_duration", "parse_duration", "plan_due_slots", "slot_key"],
    "wardian.invokers.slots": ["OUTCOMES", "ScheduleState", "Slot", "SlotStore", "dispatch_slot",
                               "schedule_key"],
    "wardian.invokers.daemon": [
        "DaemonAlreadyRunning", "DaemonStatus", "ScheduleDaemon", "daemon_status",
        "dispatch_slot", "schedule_key"],
    "wardian.invokers.daemon_lock": [
        "DaemonAlreadyRunning", "DaemonStatus", "ServeInstance", "acquire_daemon_lock",
        "daemon_status", "serve_session_name"],
    "wardian.app.schedules": [
        "DEFAULT_CRON", "Invoker", "Slot", "add_schedule", "describe_schedule",
        "format_duration",
        "get_schedule", "list_schedules", "parse_duration", "remove_schedule", "run_now",
        "schedule_history", "set_schedule_enabled", "update_schedule"],
}


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_public_surface(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(SURFACE[module])
    for name in mod.__all__:
        assert getattr(mod, name).__doc__, f"{module}.{name} has no docstring"


def test_cli_modules_do_not_import_apscheduler_at_start() -> None:
    code = ("import sys, wardian.cli.automation_schedule, wardian.cli.serve; "
            "print(any(m.startswith(('apscheduler', 'wardian.invokers')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    assert out == "False"
