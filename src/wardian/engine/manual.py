"""Manual runs: prepare a run from CLI arguments, and execute it in a detached process.

`prepare_manual_run` does every check before anything is stored (blueprint valid and
accepting the ``manual`` trigger, agent exists, assignments match the roles, inputs typed),
then records the queued run. `spawn_detached` starts ``python -m wardian automation run
execute RUN --secrets-stdin`` in its own session (process group on Windows), hands it the
secret inputs on stdin (never on the command line or in the environment), and returns at
once; its output goes to ``<data dir>/logs/run-<id>.log``.

Spec: CLI.md ``automation run`` (manual runs and history).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wardian._process import keep
from wardian.engine.runs import Run, RunStore
from wardian.errors import UsageError

if TYPE_CHECKING:  # pydantic models: imported when a blueprint is validated
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = ["PreparedRun", "prepare_manual_run", "run_log_path", "spawn_detached"]


@dataclass(frozen=True)
class PreparedRun:
    """A queued manual run, the secret values to hand to the executor (never stored), and
    the validated blueprint (`execute_run(..., blueprint=)` runs it without loading it
    again)."""

    run: Run
    secrets: dict[str, Any]
    blueprint: LoadedBlueprint


def prepare_manual_run(
    blueprint_ref: str,
    *,
    agent: str,
    assignments: str | dict[str, Any] | None,
    inputs: dict[str, str],
    archive: str | None = None,
    store: RunStore | None = None,
    check_catalog: bool = True,
    archive_seq_range: tuple[int, int] | None = None,
    workspace: str | None = None,
) -> PreparedRun:
    """Validate everything and record a queued manual run.

    Args:
        blueprint_ref: blueprint id or path to its YAML.
        agent: the principal's name or id.
        assignments: ``--assignments`` JSON text (or a dict).
        inputs: ``--input k=v`` pairs (text, converted to the declared types).
        archive: optional transcript file for the run (``invocation.archive``).
        archive_seq_range: ``(first, last)`` archive seqs of one archived session: the run's
            ``archive.load`` reads the slice after the cursor up to `last`, as a
            session-close run does (``wardian automation trial`` rewinds its scratch
            cursor to ``first - 1``).
        workspace: the run's workspace instead of the agent's (a session's own cwd).

    Returns:
        The run, the secret values to hand to the executor (not stored) and the blueprint.

    Raises:
        BlueprintError, NotFoundError, ValidationError, UsageError: nothing is stored then.
    """
    from wardian.blueprints.library import find_blueprint
    from wardian.config import open_state_db
    from wardian.engine.actions import known_actions
    from wardian.engine.assignments import check_assignments, parse_assignments_json
    from wardian.engine.executor import resolve_inputs
    from wardian.runtime.agents import AgentRegistry

    loaded = find_blueprint(blueprint_ref, known_actions=known_actions())
    if "manual" not in loaded.blueprint.triggers:
        raise UsageError(f"blueprint {loaded.id!r} does not accept manual runs "
                         f"(triggers: {', '.join(loaded.blueprint.triggers)})",
                         hint="add 'manual' to its triggers")
    state_db = open_state_db()
    principal = AgentRegistry(state_db).get(agent)
    snapshot = check_assignments(loaded, parse_assignments_json(assignments),
                                 check_catalog=check_catalog)
    values = resolve_inputs(loaded, inputs, from_text=True)
    secrets = {n: values[n] for n, spec in loaded.blueprint.inputs.items()
               if spec.secret and n in values}
    archive_path = _check_archive(archive) if archive is not None else None
    payload: dict[str, Any] = {
        "agent_id": principal.id,
        "agent_name": principal.name,
        "workspace": principal.workspace,
        "archive": archive_path,
        "archive_available": archive_path is not None or archive_seq_range is not None,
    }
    if archive_seq_range is not None:
        payload["archive_seq_range"] = list(archive_seq_range)
    if workspace:
        payload["workspace"] = workspace
    store = store or RunStore(state_db)
    run, _created = store.create_run(
        blueprint_id=loaded.id, agent_id=principal.id, assignments=snapshot, inputs=values,
        invocation={"trigger": "manual", "payload": payload},
        workspace=workspace or principal.workspace, blueprint=loaded,
    )
    return PreparedRun(run, secrets, loaded)


def _check_archive(archive: str) -> str:
    """`archive` as an absolute path once it names a readable transcript of a known format.

    Checked before the run is recorded: a missing file or a file that is no transcript
    left a failed run behind, its error only visible in the run's history.

    Raises:
        UsageError (exit 2): missing, not a regular file, unreadable, or no known
            transcript format (the message names the accepted formats and the first line).
    """
    from wardian.transcripts import detect_format
    from wardian.transcripts.errors import TranscriptFormatError, TranscriptNotFound

    path = Path(archive).expanduser()
    if not path.exists():
        raise UsageError(f"--archive {archive}: no such file",
                         hint="pass the transcript file of a session (e.g. a .jsonl)")
    if not path.is_file():
        raise UsageError(f"--archive {archive}: not a regular file",
                         hint="pass a transcript file, not a directory")
    try:
        detect_format(path)
    except TranscriptNotFound as exc:
        raise UsageError(f"--archive {archive}: {exc.message}",
                         hint="check the file's permissions") from None
    except TranscriptFormatError as exc:
        raise UsageError(f"--archive {exc.message}",
                         hint="pass the session's transcript file as its CLI wrote it"
                         ) from None
    return str(path.resolve())


def run_log_path(run_id: str) -> Path:
    """Where a detached run process writes its output."""
    from wardian._fs import private_dir
    from wardian.config import data_dir

    return private_dir(data_dir() / "logs") / f"run-{run_id}.log"


def spawn_detached(run_id: str, secrets: dict[str, Any]) -> int:
    """Start a detached ``wardian`` process that executes queued run `run_id`.

    Returns:
        The child's pid. The child claims the run itself (only one process can).
    """
    # -P: the current directory must not shadow the installed package (a project folder
    # holding a `wardian/` or `wardian.py` would otherwise be imported instead).
    argv = [os.path.abspath(sys.executable), "-P", "-m", "wardian", "automation", "run",
            "execute", run_id, "--secrets-stdin"]
    kwargs: dict[str, Any] = {}
    if os.name == "nt":  # pragma: no cover - Windows
        kwargs["creationflags"] = (subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
                                   | subprocess.DETACHED_PROCESS)  # type: ignore[attr-defined]
    else:
        kwargs["start_new_session"] = True
    from wardian._fs import open_private

    with open_private(run_log_path(run_id), "ab") as log:
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=log,
                                 close_fds=True, **kwargs)
    assert child.stdin is not None
    child.stdin.write(json.dumps(secrets).encode())
    child.stdin.close()
    return keep(child)
