"""The action registry: named Python functions that action steps call.

Built-in actions register themselves with the same `register_action` decorator as anyone
else. `known_actions()` first imports the modules listed in `BUILTIN_ACTION_MODULES`
(missing ones are skipped, so packages can land independently), then lists the registry.

An action is called as ``fn(ctx, **with_args)`` where `ctx` is an `ActionContext`; its
return value must be JSON-serialisable and becomes ``steps.<id>.output``. An action that
may run long should poll ``ctx.should_stop()`` (set on timeout or cancel) and return early:
Python threads cannot be killed, so an action that ignores it keeps running in the
background after its step has been marked timed out (see executor.py).

Spec: issue 4 "Engine" (action steps through a registry that built-in actions also use).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wardian.blueprints.errors import nearest
from wardian.errors import NotFoundError, UsageError

__all__ = [
    "BUILTIN_ACTION_MODULES",
    "ActionContext",
    "get_action",
    "known_actions",
    "register_action",
    "unregister_action",
]

ActionFn = Callable[..., Any]

BUILTIN_ACTION_MODULES = (
    "wardian.engine.builtin_actions",
    "wardian.memory.actions",
    "wardian.runtime.actions",
    "wardian.invokers.builtin_actions",
    "wardian.transcripts.actions",
)
"""Modules imported (when present) before the registry is listed or looked up."""

_REGISTRY: dict[str, ActionFn] = {}
_loaded = False
_lock = threading.Lock()


@dataclass
class ActionContext:
    """What an action sees about its run.

    Attributes:
        run_id: the run's id.
        step_id: the step being executed.
        attempt: 1-based attempt number.
        agent_id: the run's principal (the agent the run acts for), or None.
        workspace: absolute workspace path, or None.
        invocation: ``{"trigger": ..., "payload": {...}}``.
        inputs: the run's inputs (secret values included, never store them).
        steps: step id -> ``{"output": ..., "status": ...}`` for steps so far.
        idempotency_key: the run's key, or None.
        emit: ``emit(kind, data_dict)`` appends a run event (``action.<kind>``).
        stop_event: set on timeout or cancel (see `should_stop`).
        agent_name: the principal's name, when known.
    """

    run_id: str
    step_id: str
    attempt: int
    agent_id: str | None
    workspace: str | None
    invocation: dict[str, Any]
    inputs: dict[str, Any]
    steps: dict[str, Any]
    idempotency_key: str | None
    emit: Callable[[str, dict[str, Any]], None] = lambda kind, data: None
    stop_event: threading.Event = field(default_factory=threading.Event)
    agent_name: str | None = None

    def should_stop(self) -> bool:
        """True once the step timed out or the run was cancelled; return early then."""
        return self.stop_event.is_set()


def register_action(name: str, *, replace: bool = False) -> Callable[[ActionFn], ActionFn]:
    """Decorator registering `fn(ctx, **with_args)` as action `name`.

    Raises:
        UsageError: `name` is taken and `replace` is false.
    """

    def decorate(fn: ActionFn) -> ActionFn:
        with _lock:
            if name in _REGISTRY and not replace and _REGISTRY[name] is not fn:
                raise UsageError(f"action {name!r} is already registered")
            _REGISTRY[name] = fn
        return fn

    return decorate


def unregister_action(name: str) -> None:
    """Remove action `name` (tests unregister what they register). No error if absent."""
    with _lock:
        _REGISTRY.pop(name, None)


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_ACTION_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the module exists but one of its imports is missing
                raise


def known_actions() -> list[str]:
    """Every registered action name, sorted (imports the built-in action modules first)."""
    _load_builtins()
    return sorted(_REGISTRY)


def get_action(name: str) -> ActionFn:
    """The function registered as `name`.

    Raises:
        NotFoundError: no such action (the message names the nearest one).
    """
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        guess = nearest(name, _REGISTRY)
        raise NotFoundError(
            f"unknown action {name!r}" + (f" (did you mean {guess!r}?)" if guess else ""),
            hint="registered actions: " + ", ".join(sorted(_REGISTRY)),
        ) from None
