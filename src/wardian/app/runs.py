"""Runs as the operator handles them: start, execute, show, list, cancel and resume
(``wardian automation run …`` and ``automation runs``; CLI.md "automation").

A surface calls these and renders what they return; the engine (`wardian.engine.manual`,
`wardian.engine.executor`, `wardian.engine.runs`) stays behind them; `Run` and
`StepAttempt` are re-exported for the surfaces' rendering. A surface imports this module
inside its run commands only: its other commands never pay for the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wardian.engine.runs import Run, StepAttempt

if TYPE_CHECKING:
    from wardian._db import StateDB

__all__ = ["DetachedRun", "Run", "RunInterrupted", "StepAttempt", "cancel_run",
           "execute_queued_run", "get_run", "list_runs", "resume", "start_run"]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C while a run executed in this process (``--wait``).

    Still a `KeyboardInterrupt` (exit 130), but it says which run stopped and how to
    continue it: with ``--wait`` the run id is printed only at the end, so an operator who
    pressed Ctrl-C would otherwise have to find it in ``automation runs``. The engine has
    marked the run ``interrupted`` already. `run_id`: the full run id.
    """

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run {run_id[:8]} stopped and is marked interrupted; "
            f"`wardian automation run resume {run_id[:8]}` continues it from its last "
            f"finished step")
        self.run_id = run_id


def _interruptible(run_id: str, execute: Callable[[], Run]) -> Run:
    """`execute()` (a run in this process), its Ctrl-C raised as `RunInterrupted`."""
    try:
        return execute()
    except RunInterrupted:
        raise  # already names its run (a nested call)
    except KeyboardInterrupt as exc:
        raise RunInterrupted(run_id) from exc


@dataclass(frozen=True)
class DetachedRun:
    """A run handed to a detached ``wardian`` process: the queued run, the child's pid and
    the log file it writes (``<data dir>/logs/run-<id>.log``)."""

    run: Run
    pid: int
    log: str


def start_run(blueprint: str, *, agent: str, assignments: str, inputs: dict[str, str],
              archive: str | None = None, wait: bool = False) -> Run | DetachedRun:
    """Validate and record a manual run, then execute it here (`wait`) or detach it.

    Args:
        blueprint: blueprint id (user library first) or path.
        agent: the agent's name or id the run acts for.
        assignments: the ``--assignments`` JSON text.
        inputs: ``--input KEY=VALUE`` pairs as text (converted to the declared types).
        archive: a transcript file for the run to read.
        wait: execute in this process and return the finished run.

    Returns:
        The finished `Run` (`wait`), else a `DetachedRun`: the secrets went to the child
        on its stdin and are stored nowhere.

    Raises:
        BlueprintError, NotFoundError, ValidationError, UsageError: nothing is stored then.
        RunInterrupted: Ctrl-C during a `wait` run (it is marked interrupted).
    """
    from wardian.engine.manual import prepare_manual_run, run_log_path, spawn_detached

    prepared = prepare_manual_run(blueprint, agent=agent, assignments=assignments,
                                  inputs=inputs, archive=archive)
    if wait:
        from wardian.engine.executor import execute_run

        return _interruptible(prepared.run.id, lambda: execute_run(
            prepared.run.id, secret_inputs=prepared.secrets, blueprint=prepared.blueprint))
    pid = spawn_detached(prepared.run.id, prepared.secrets)
    return DetachedRun(prepared.run, pid, str(run_log_path(prepared.run.id)))


def execute_queued_run(run_id: str, secrets: dict[str, Any]) -> Run:
    """Execute queued run `run_id` in this process (the detached run process) and return it
    finished; `secrets` are the secret inputs its starter passed on stdin."""
    from wardian.engine.executor import execute_run

    return execute_run(run_id, secret_inputs=secrets)


def get_run(state: StateDB, run_id: str, *, recover: bool = True) -> Run:
    """The run `run_id` (id or unique prefix) in `state` with its attempts and events.

    Args:
        recover: first mark runs whose owning process died as ``interrupted`` (what every
            engine entry does); False reads only (Garden).

    Raises:
        NotFoundError: no such run; AmbiguousIdError (exit 2): the prefix names several.
    """
    from wardian.engine.runs import RunStore

    return RunStore(state, recover=recover).get(run_id, detail=True)


def list_runs(state: StateDB, *, blueprint: str | None = None, status: str | None = None,
              limit: int = 50, recover: bool = True) -> list[Run]:
    """The runs in `state`, newest first, filtered by blueprint id and status (None: any).

    Args:
        recover: as `get_run` (False reads only).

    Raises:
        UsageError: `status` is not a run status.
    """
    from wardian.engine.runs import RunStore

    return RunStore(state, recover=recover).list(blueprint_id=blueprint, status=status,
                                                 limit=limit)


def cancel_run(state: StateDB, run_id: str) -> Run:
    """Ask run `run_id` (in `state`) to stop at its next safe point (a queued run is
    cancelled at once); returns it as it now is.

    Raises:
        NotFoundError; ConflictError: the run already finished.
    """
    from wardian.engine.runs import RunStore

    return RunStore(state).request_cancel(run_id)


def resume(state: StateDB, run_id: str, *, secrets: dict[str, str], wait: bool = False
           ) -> Run | DetachedRun:
    """Continue an interrupted, failed or cancelled run in `state` from its last completed
    step: here
    (`wait`, the finished `Run`) or in a detached process (a `DetachedRun`).

    Args:
        secrets: the run's secret inputs again (never stored).

    Raises:
        UsageError: the run is not resumable (queued, running, succeeded, skipped).
        RunInterrupted: Ctrl-C during a `wait` resume (it is marked interrupted again).
    """
    from wardian.engine.runs import RunStore

    store = RunStore(state)
    if wait:
        from wardian.engine.executor import resume_run

        full_id = store.get(run_id).id
        return _interruptible(full_id, lambda: resume_run(run_id, store=store,
                                                          secret_inputs=secrets))
    from wardian.engine.manual import run_log_path, spawn_detached

    run = store.requeue(run_id)
    return DetachedRun(run, spawn_detached(run.id, secrets), str(run_log_path(run.id)))
