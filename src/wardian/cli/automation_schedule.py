"""`wardian automation schedule …`: schedule invokers (CLI.md).

Each command parses its flags, makes one call into `wardian.app.schedules`, and
prints. Heavy imports (APScheduler, pydantic, the engine) happen inside the commands.
"""

from __future__ import annotations

from typing import Any

import typer

from wardian.cli._common import JsonOption, emit_json, parse_kv, print_table, shown, stdout
from wardian.config import open_state_db

app = typer.Typer(
    help="Schedule invokers: fire a blueprint on a cron or interval clock. They run while "
    "`wardian serve` runs; each slot fires at most once and ends in one recorded outcome "
    "(ran, skipped with a reason, or coalesced).",
    no_args_is_help=True,
)


def _seconds(text: str | None, flag: str) -> float | None:
    if text is None:
        return None
    from wardian.app.schedules import parse_duration

    return parse_duration(text, flag=flag)


@app.command("add")
def add(
    blueprint: str = typer.Option(
        ..., "--blueprint", help="Blueprint id (see `wardian blueprint list`)."),
    name: str = typer.Option(..., "--name", help="A label for this invoker."),
    agent: str = typer.Option(..., "--agent", help="Agent name or id the runs act for."),
    cron: str | None = typer.Option(
        None, "--cron", help="Five-field cron expression read in --timezone, e.g. '30 2 * * *' "
        "(day-of-week 0 or 7 = Sunday). Without --cron and --every: weekly, '0 3 * * 0' "
        "(Sundays at 03:00)."),
    every: str | None = typer.Option(
        None, "--every", help="Fixed interval instead of --cron: 30s, 5m, 2h, 1d, 1h30m (elapsed "
        "time counted from when the invoker was added; DST does not move it)."),
    timezone: str = typer.Option(
        "UTC", "--timezone", help="IANA zone for the cron expression and shown times. DST: a local "
        "time that does not exist fires once at the first valid time after the gap; a repeated "
        "local time fires once (its first occurrence)."),
    misfire_grace: str = typer.Option(
        "5m", "--misfire-grace", help="How late a slot may start and still count as on time "
        "(default 5m). Later slots are 'missed' and follow --catch-up."),
    catch_up: str = typer.Option(
        "latest", "--catch-up", help="Missed slots: none = skip them all; latest (default) = run "
        "once for the newest, the rest coalesced into it; all = run each missed slot, keeping "
        "the newest --max-catch-up; older ones are skipped."),
    max_catch_up: int | None = typer.Option(
        None, "--max-catch-up", help="Hard cap on runs one catch-up starts with --catch-up all "
        "(default 10, at most 100); refused with the other modes (latest runs one)."),
    overlap: str = typer.Option(
        "skip", "--overlap", help="When the previous run is still running: skip (default; the slot "
        "is recorded skipped), queue (run after it), parallel (run now alongside)."),
    assignments: str = typer.Option(
        ..., "--assignments", help='Role assignments as JSON, e.g. \'{"curator": {"target_type": '
        '"temporary_provider", "provider": "builtin", "model": "curator-rules"}}\'.'),
    input_: list[str] = typer.Option(
        [], "--input", help="Blueprint input KEY=VALUE (repeatable)."),
    json_: bool = JsonOption,
) -> None:
    """Add a schedule invoker. It is created DISABLED: check it with `show`, then `enable` it."""
    from wardian.app.schedules import add_schedule, describe_schedule

    state = open_state_db()
    invoker = add_schedule(
        state, blueprint_id=blueprint, name=name, agent=agent, assignments=assignments, cron=cron,
        every_s=_seconds(every, "--every"), timezone=timezone,
        misfire_grace_s=_seconds(misfire_grace, "--misfire-grace"), catch_up=catch_up,
        max_catch_up=max_catch_up, overlap=overlap, inputs=parse_kv(input_, "--input"),
    )
    if json_:
        emit_json(describe_schedule(state, invoker))
        return
    stdout(f"Added schedule invoker {invoker.id[:8]} ({invoker.name}), disabled. "
           f"Enable it with `wardian automation schedule enable {invoker.id[:8]}`.")


def _row(doc: dict[str, Any]) -> list[Any]:
    last = doc.get("last_outcome")
    last_text = f"{last['outcome']} {last['scheduled_time']}" if last else ""
    return [
        doc["id"][:8], doc["name"],
        f"broken: {doc['broken_reason']}" if doc.get("status") == "broken"
        else "yes" if doc["enabled"] else "no",
        doc.get("schedule") or f"invalid: {doc.get('config_error')}",
        "\n".join(doc.get("next_fire_times_local") or []),
        doc.get("missed_slots_would_run_now", 0), last_text,
    ]


@app.command("list")
def list_(json_: bool = JsonOption) -> None:
    """List schedule invokers: next five fire times in each invoker's zone, and how many
    missed slots would run now."""
    from wardian.app.schedules import list_schedules

    docs = list_schedules(open_state_db())
    if json_:
        emit_json(docs)
        return
    if not docs:
        stdout("No schedule invokers. Add one with `wardian automation schedule add`.")
        return
    print_table(["id", "name", "enabled", "schedule", "next fire times (local)",
                 "missed would run", "last outcome"], [_row(d) for d in docs])


@app.command("show")
def show(ref: str = typer.Argument(..., help="Invoker id, id prefix or name."),
         json_: bool = JsonOption) -> None:
    """Show one schedule invoker with its policies and next fire times."""
    from wardian.app.schedules import describe_schedule, get_schedule

    state = open_state_db()
    doc = describe_schedule(state, get_schedule(state, ref))
    if json_:
        emit_json(doc)
        return
    config = doc.get("config") or {}
    from wardian.app.schedules import format_duration

    grace = config.get("misfire_grace_s")
    catch_up = config.get("catch_up")
    if catch_up == "all":
        catch_up = f"all (at most {config.get('max_catch_up')} runs)"
    lines = [
        ("id", doc["id"]), ("name", doc["name"]), ("enabled", doc["enabled"]),
        *([("status", f"broken: {doc['broken_reason']}"), ("fix", doc["fix"])]
          if doc.get("status") == "broken" else []),
        ("blueprint", doc["blueprint_id"]), ("agent", doc["agent_id"]),
        ("schedule", doc.get("schedule") or doc.get("config_error")),
        ("misfire grace", format_duration(grace) if isinstance(grace, int | float) else grace),
        ("catch-up", catch_up),
        ("overlap", config.get("overlap")),
        ("next fire times", ", ".join(doc.get("next_fire_times_local") or [])),
        ("missed slots that would run now", doc.get("missed_slots_would_run_now")),
        ("last outcome", (doc.get("last_outcome") or {}).get("outcome")),
    ]
    for key, value in lines:
        stdout(f"{key + ':':<34}{shown(value)}")


@app.command("set")
def set_(
    ref: str = typer.Argument(..., help="Invoker id, id prefix or name."),
    input_: list[str] = typer.Option(
        [], "--input", help="Blueprint input KEY=VALUE (repeatable); other inputs stay."),
    assignments: str | None = typer.Option(
        None, "--assignments", help="Role assignments as JSON (replaces the stored ones)."),
    name: str | None = typer.Option(None, "--name", help="A new label."),
    json_: bool = JsonOption,
) -> None:
    """Edit an invoker's inputs, assignments or name, validated exactly as `add`; its
    schedule, enabled state and slot history stay."""
    from wardian.app.schedules import update_schedule

    invoker = update_schedule(open_state_db(), ref,
                              inputs=parse_kv(input_, "--input") if input_ else None,
                              assignments=assignments, name=name)
    if json_:
        emit_json(invoker.to_json())
        return
    stdout(f"Updated {invoker.id[:8]} ({invoker.name})")


@app.command("enable")
def enable(ref: str = typer.Argument(..., help="Invoker id, id prefix or name.")) -> None:
    """Enable (after re-validating blueprint, agent and assignments). Slots count from now."""
    from wardian.app.schedules import set_schedule_enabled

    invoker = set_schedule_enabled(open_state_db(), ref, True)
    stdout(f"Enabled schedule invoker {invoker.id[:8]} ({invoker.name}).")


@app.command("disable")
def disable(ref: str = typer.Argument(..., help="Invoker id, id prefix or name.")) -> None:
    """Disable; slots that fell due but were not fired yet are recorded as skipped (disabled)."""
    from wardian.app.schedules import set_schedule_enabled

    invoker = set_schedule_enabled(open_state_db(), ref, False)
    stdout(f"Disabled schedule invoker {invoker.id[:8]} ({invoker.name}).")


@app.command("remove")
def remove(ref: str = typer.Argument(..., help="Invoker id, id prefix or name.")) -> None:
    """Remove a schedule invoker (its runs and slot history are kept)."""
    from wardian.app.schedules import remove_schedule

    invoker = remove_schedule(open_state_db(), ref)
    stdout(f"Removed schedule invoker {invoker.id[:8]} ({invoker.name}).")


@app.command("run-now")
def run_now(ref: str = typer.Argument(..., help="Invoker id, id prefix or name."),
            no_wait: bool = typer.Option(False, "--no-wait",
                                         help="Only queue the run; do not execute it here."),
            json_: bool = JsonOption) -> None:
    """Run the invoker's blueprint once now, outside its schedule (no slot is consumed)."""
    from wardian.app.schedules import run_now as do_run_now

    run = do_run_now(open_state_db(), ref, wait=not no_wait)
    if json_:
        emit_json(run.to_json())
        return
    stdout(f"Run {run.id[:8]}: {run.status}")


@app.command("history")
def history(ref: str = typer.Argument(..., help="Invoker id, id prefix or name."),
            limit: int = typer.Option(50, "--limit", help="Newest N slots."),
            json_: bool = JsonOption) -> None:
    """Recorded slots, newest first: ran (run id), skipped (reason) or coalesced (into what)."""
    from wardian.app.schedules import schedule_history

    invoker, slots = schedule_history(open_state_db(), ref, limit=limit)
    if json_:
        emit_json({"invoker_id": invoker.id, "slots": [s.to_json() for s in slots]})
        return
    if not slots:
        stdout(f"No recorded slots for {invoker.name} yet: `wardian serve` fires the "
               "slots (is it running?); runs started by `schedule run-now` are not slots, "
               "`wardian automation runs` lists them.")
        return
    print_table(["scheduled (UTC)", "outcome", "run", "reason / into", "late s"], [
        [s.scheduled_time, s.outcome, (s.run_id or "")[:8],
         s.reason if s.outcome != "coalesced" else f"into {s.into_slot}: {s.reason}", s.late_s]
        for s in slots
    ])
