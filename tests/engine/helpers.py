"""Helpers for engine tests: write a blueprint, create a run for it, register test actions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wardian.blueprints.validate import load_blueprint
from wardian.engine.actions import known_actions, register_action, unregister_action
from wardian.engine.executor import resolve_inputs
from wardian.engine.runs import Run, RunStore


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
