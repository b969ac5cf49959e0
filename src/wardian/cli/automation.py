"""`wardian automation …`: manual runs, run history, and the invoker sub-groups (CLI.md)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import typer

from wardian.cli import automation_schedule, automation_session_close
from wardian.cli._common import (
    JsonOption,
    emit_json,
    out_width,
    parse_kv,
    print_block,
    print_table,
    stderr,
    stdout,
)

if TYPE_CHECKING:
    from wardian.app.runs import Run

app = typer.Typer(help="Runs, session-close invokers and schedule invokers.", no_args_is_help=True)


@app.callback()
def _operator_only() -> None:
    """Runs, session-close invokers and schedule invokers."""
    # Every automation command is the operator's (CLI.md): a managed agent could otherwise
    # start a consolidation run that writes another agent's memory.
    from wardian.cli._common import require_operator

    require_operator()


app.add_typer(automation_session_close.app, name="session-close")
app.add_typer(automation_schedule.app, name="schedule")

run_app = typer.Typer(help="Start, inspect, cancel and resume runs.", no_args_is_help=True)
app.add_typer(run_app, name="run")


def _summary(run: Run) -> None:
    stdout(f"run {run.id}  {run.blueprint_id}  {run.status}")
    if run.error:
        stdout(f"error: {run.error}")
    for attempt in run.attempts:
        line = f"  {attempt.step_id:20} #{attempt.attempt} {attempt.status}"
        if attempt.duration_ms is not None:
            line += f"  {attempt.duration_ms:.1f} ms"
        if attempt.error:
            line += f"  {attempt.error}"
        stdout(line)
        _step_notes(attempt.output)


def _step_notes(output: Any) -> None:
    """Print a step output's own `summary` and `next` (the command to run) in full: review
    mode's plan path and preview command must not hide in a truncated table cell."""
    if not isinstance(output, dict):
        return
    import textwrap

    if isinstance(output.get("summary"), str) and output["summary"]:
        stdout("\n".join(textwrap.wrap(output["summary"], width=out_width(),
                                       initial_indent="      summary: ",
                                       subsequent_indent=" " * 15, break_on_hyphens=False)))
    if isinstance(output.get("next"), str) and output["next"]:
        # A command stays on one line, however long: wrapped, it could not be pasted.
        stdout(f"      next: {output['next']}")


def _exit_for(run: Run) -> None:
    if run.status in ("failed", "cancelled", "interrupted"):
        raise typer.Exit(1)


def _report_final(final: Run, as_json: bool) -> None:
    """Print a run executed in this process (--wait) and exit 1 unless it succeeded."""
    if as_json:
        emit_json(final.to_json(detail=True))
    else:
        _summary(final)
    _exit_for(final)


def _local(stamp: str | None) -> str:
    """A stored UTC timestamp in local time for human output (DESIGN.md "Conventions")."""
    if not stamp:
        return "-"
    from wardian._util import parse_utc

    return parse_utc(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")


@run_app.command("start")
def start(
    blueprint: str = typer.Argument(..., help="Blueprint id (user library first) or path."),
    agent: str = typer.Option(..., "--agent", help="The agent the run acts for (name or id)."),
    assignments: str = typer.Option("{}", "--assignments",
                                    help='Role assignments as JSON, e.g. \'{"curator": '
                                         '{"target_type": "temporary_provider", '
                                         '"provider": "builtin"}}\'.'),
    inputs: list[str] = typer.Option([], "--input", help="An input as KEY=VALUE (repeatable)."),
    archive: str | None = typer.Option(None, "--archive",
                                       help="A transcript file for the run to read "
                                            "(checked first: exit 2 if missing or no "
                                            "transcript)."),
    wait: bool = typer.Option(False, "--wait",
                              help="Execute here and print the summary (default: detach)."),
    as_json: bool = JsonOption,
) -> None:
    """Start a manual run; prints its id (detached) or its outcome (--wait)."""
    from wardian.app.runs import DetachedRun, start_run

    started = start_run(blueprint, agent=agent, assignments=assignments,
                        inputs=parse_kv(inputs, "--input"), archive=archive, wait=wait)
    if not isinstance(started, DetachedRun):
        _report_final(started, as_json)
        return
    run = started.run
    if as_json:
        emit_json({"id": run.id, "status": run.status, "pid": started.pid,
                   "log": started.log})
        return
    stdout(run.id)
    stderr(f"started in the background (pid {started.pid}); follow it with "
           f"`wardian automation run show {run.id[:8]}`")


@run_app.command("execute", hidden=True)
def execute(
    run_id: str = typer.Argument(..., help="The queued run to execute."),
    secrets_stdin: bool = typer.Option(False, "--secrets-stdin",
                                       help="Read secret inputs as JSON from stdin."),
) -> None:
    """Execute a queued run in this process (used by the detached run process)."""
    from wardian.app.runs import execute_queued_run

    secrets: dict[str, Any] = {}
    if secrets_stdin:
        try:
            secrets = json.loads(sys.stdin.read() or "{}")
        except ValueError as exc:
            from wardian.errors import UsageError

            raise UsageError(f"--secrets-stdin expects a JSON object on stdin: {exc}") from exc
    final = execute_queued_run(run_id, secrets)
    _summary(final)
    _exit_for(final)


@run_app.command("show")
def show(run_id: str = typer.Argument(..., help="Run id or unique prefix."),
         as_json: bool = JsonOption) -> None:
    """Show a run: status, inputs, steps and attempts, events and outputs."""
    from wardian.app.runs import get_run
    from wardian.config import open_state_db

    run = get_run(open_state_db(), run_id)
    if as_json:
        emit_json(run.to_json(detail=True))
        return
    _field("run:", run.id)
    _field("blueprint:", f"{run.blueprint_id} ({run.blueprint_hash or 'hash unknown'})")
    _field("status:", run.status + (f" ({run.skip_reason})" if run.skip_reason else ""))
    _field("trigger:", f"{run.trigger}   agent: {run.agent_id or '-'}")
    _field("created:", f"{_local(run.created_at)}   finished: {_local(run.finished_at)}")
    if run.error:
        _field("error:", run.error)
    _field("inputs:", json.dumps(run.inputs, sort_keys=True, ensure_ascii=False))
    # Within 100 columns and nothing cut short: the tables hold the short facts, every
    # output follows in full as an indented JSON block (`--json` for the document).
    print_table(["STEP", "ATTEMPT", "STATUS", "MS", "ERROR"],
                [(a.step_id, a.attempt, a.status,
                  "" if a.duration_ms is None else f"{a.duration_ms:.1f}", a.error or "")
                 for a in run.attempts], title="Attempts")
    print_table(["AT", "EVENT", "STEP", "DATA"],
                [(_local(e["at"]), e["kind"], e["step_id"] or "", _compact(e["data"]))
                 for e in run.events], title="Events")
    for attempt in run.attempts:
        if attempt.output is None:
            continue
        stdout(f"\nOutput of {attempt.step_id} (attempt {attempt.attempt}):")
        if isinstance(attempt.output, dict) and ("summary" in attempt.output
                                                 or "next" in attempt.output):
            _step_notes(attempt.output)
        print_block(json.dumps(attempt.output, indent=2, ensure_ascii=False, sort_keys=True,
                               default=str), indent="    ")


def _field(label: str, value: str) -> None:
    """One ``label: value`` line of `run show`, wrapped under the value's column."""
    import textwrap

    stdout("\n".join(textwrap.wrap(value, width=out_width(), initial_indent=f"{label:12}",
                                   subsequent_indent=" " * 12, break_on_hyphens=False))
           or label)


def _compact(value: Any) -> str:
    """`value` as one-line JSON, in full (the table wraps it within its cell)."""
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@run_app.command("cancel")
def cancel(run_id: str = typer.Argument(..., help="Run id or unique prefix.")) -> None:
    """Ask a run to stop at its next safe point (a queued run is cancelled at once)."""
    from wardian.app.runs import cancel_run
    from wardian.config import open_state_db

    run = cancel_run(open_state_db(), run_id)
    if run.status == "cancelled":
        stdout(f"run {run.id[:8]} cancelled")
    else:
        stdout(f"run {run.id[:8]} will stop at its next safe point (now {run.status})")


@run_app.command("resume")
def resume(
    run_id: str = typer.Argument(..., help="Run id or unique prefix."),
    inputs: list[str] = typer.Option([], "--input",
                                     help="Secret inputs again as KEY=VALUE (never stored)."),
    wait: bool = typer.Option(False, "--wait", help="Execute here (default: detach)."),
    as_json: bool = JsonOption,
) -> None:
    """Continue an interrupted, failed or cancelled run from its last completed step."""
    from wardian.app.runs import DetachedRun, resume
    from wardian.config import open_state_db

    resumed = resume(open_state_db(), run_id, secrets=parse_kv(inputs, "--input"), wait=wait)
    if not isinstance(resumed, DetachedRun):
        _report_final(resumed, as_json)
        return
    run = resumed.run
    if as_json:
        emit_json({"id": run.id, "status": run.status, "pid": resumed.pid})
        return
    stdout(run.id)
    stderr(f"resumed in the background (pid {resumed.pid})")


@app.command("trial")
def trial(
    blueprint: str = typer.Option(..., "--blueprint",
                                  help="Blueprint id or path, e.g. memory-consolidation."),
    agent: str = typer.Option(..., "--agent", help="Whose archived sessions (name or id)."),
    assignments: str = typer.Option(..., "--assignments",
                                    help="Role assignments as JSON (as `run start`)."),
    last: int = typer.Option(5, "--last", min=1,
                             help="Replay this many of the newest archived sessions."),
    compare: str | None = typer.Option(None, "--compare",
                                       help="A second assignments JSON to compare with."),
    as_json: bool = JsonOption,
) -> None:
    """Try a curator on the agent's last archived sessions in a scratch copy of its memory.

    Writes nothing to the data directory: prints what each session's run would save,
    update and remove (text, kind, scope, evidence). With --compare, runs both assignments
    and shows only-in-A, only-in-B and both side by side. Exit 1 when a run failed.
    """
    from wardian.app.trial import compare_trials, run_trials
    from wardian.cli.automation_trial import render_compare, render_trial

    docs = run_trials(blueprint=blueprint, agent=agent, last=last,
                      assignments=[assignments] if compare is None else [assignments, compare])
    failed = sum(d["totals"]["failed"] for d in docs)
    if compare is None:
        if as_json:
            emit_json(docs[0])
        else:
            render_trial(docs[0])
    else:
        doc = compare_trials(docs[0], docs[1])
        if as_json:
            emit_json(doc)
        else:
            render_compare(doc)
    if failed:
        raise typer.Exit(1)


@app.command("runs")
def runs(
    blueprint: str | None = typer.Option(None, "--blueprint", help="Only this blueprint id."),
    status: str | None = typer.Option(None, "--status", help="Only runs in this status."),
    limit: int = typer.Option(50, "--limit", min=1, help="At most this many (newest first)."),
    as_json: bool = JsonOption,
) -> None:
    """List runs, newest first."""
    from wardian.app.runs import list_runs
    from wardian.config import open_state_db

    items = list_runs(open_state_db(), blueprint=blueprint, status=status, limit=limit)
    if as_json:
        emit_json([r.to_json() for r in items])
        return
    print_table(["RUN", "BLUEPRINT", "TRIGGER", "STATUS", "CREATED", "REASON"],
                [(r.id[:8], r.blueprint_id, r.trigger, r.status, _local(r.created_at),
                  r.error or r.skip_reason or "") for r in items])
