"""Helpers for engine tests: write a blueprint, create a run for it, register test actions,
start an engine process on a run whose provider step hangs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

from wardian.blueprints.validate import load_blueprint
from wardian.config import open_state_db
from wardian.engine.actions import known_actions, register_action, unregister_action
from wardian.engine.executor import resolve_inputs
from wardian.engine.runs import Run, RunStore

if TYPE_CHECKING:
    from tests.providers.conftest import FakeCli


def write_blueprint(folder: Path, text: str, files: dict[str, str] | None = None) -> Path:
    """Write `text` as ``folder/blueprint.yaml`` (plus template `files`); returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "blueprint.yaml"
    path.write_text(text)
    for name, content in (files or {}).items():
        (folder / name).write_text(content)
    return path


def create_run(store: RunStore, path: Path, *, inputs: dict[str, Any] | None = None,
               assignments: dict[str, Any] | None = None, agent_id: str | None = None,
               workspace: str | None = None, idempotency_key: str | None = None) -> Run:
    """Create a queued manual run of the blueprint at `path`."""
    loaded = load_blueprint(path, known_actions=known_actions())
    values = resolve_inputs(loaded, inputs or {}, from_text=False)
    run, created = store.create_run(
        blueprint_id=loaded.id, agent_id=agent_id, assignments=assignments or {},
        inputs=values, invocation={"trigger": "manual", "payload": {"workspace": workspace}},
        blueprint_path=str(path), idempotency_key=idempotency_key)
    assert created
    return run


@contextmanager
def actions(**fns: Callable[..., Any]) -> Iterator[None]:
    """Register test actions (``name_with_underscores`` -> ``name.with.dots`` is not done:
    names are used as given) and unregister them afterwards."""
    for name, fn in fns.items():
        register_action(name, replace=True)(fn)
    try:
        yield
    finally:
        for name in fns:
            unregister_action(name)


def hung_provider_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_cli: FakeCli,
                      blueprint: str, assignments: dict[str, Any], *, ready_env: str,
                      scenario: str = "hang", workspace: Path | None = None
                      ) -> tuple[Run, Path]:
    """A queued run of `blueprint` (written under ``tmp_path/bp``; in `workspace`, default a
    new ``tmp_path/ws``) whose provider is the fake CLI in a hanging `scenario` (``hang``,
    ``hang_before_thread``), and the FIFO it announces itself on once it hangs: its path is
    put in the environment variable `ready_env` (``FAKE_PROVIDER_HANG_READY`` or
    ``FAKE_PROVIDER_READY``, tests/fakes/fake_provider.py). Open the FIFO after starting
    the engine (`start_engine`): the read waits for the step."""
    ready = tmp_path / "ready.fifo"
    os.mkfifo(ready)
    monkeypatch.setenv(ready_env, str(ready))
    fake_cli.scenario(scenario)
    if workspace is None:
        workspace = tmp_path / "ws"
        workspace.mkdir()
    path = write_blueprint(tmp_path / "bp", blueprint)
    store = RunStore(open_state_db())
    run = create_run(store, path, assignments=assignments, workspace=str(workspace))
    return run, ready


def start_engine(run_id: str, *, stderr: int | IO[bytes] | None = subprocess.DEVNULL
                 ) -> subprocess.Popen[bytes]:
    """An engine as its own interpreter, executing the run `run_id` (`execute_run`)."""
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from wardian.engine.executor import execute_run; "
         "execute_run(sys.argv[1])", run_id], stdout=subprocess.DEVNULL, stderr=stderr)
