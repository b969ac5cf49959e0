"""The action registry: named Python functions that action steps call.

An action is called as ``fn(ctx, **with_args)`` where `ctx` is an `ActionContext`; its
return value — a pydantic model (a typed output, stored as its ``model_dump(mode="json")``)
or a JSON-serialisable value — becomes ``steps.<id>.output``. An argument ``<name>_step``
in ``with:`` names an earlier step whose output the engine passes as ``<name>``
(`register_action`'s ``step_refs``; `wardian.engine.executor`). An action that
may run long should poll ``ctx.should_stop()`` (set on timeout or cancel) and return early:
Python threads cannot be killed, so an action that ignores it keeps running in the
background after its step has been marked timed out (see executor.py).

**Adding actions (plugins).** Everyone, built-in or third party, adds actions with
``registry.add_action`` in a ``wardian.plugins`` entry point (`wardian.plugins`); Wardian's
own (``noop``, ``log``, ``archive.load``, ``memory.*``) come through
`wardian.builtin_plugin`, so the engine never names a package above it (DESIGN.md:
dependencies point one way). `register_action` adds one in-process (tests).

**Outputs kept elsewhere.** An action whose output repeats data that lives in a store of its
own (``archive.load`` returns messages of the agent's archive) registers an `OutputStorage`
with it: the run store then holds the output's short form (`OutputStorage.shorten`: what
it takes to read the rest again, e.g. a seq range and a digest) and every reader (`run
show`, the web page, a resumed run) sees it expanded (`OutputStorage.expand`), so the
data is stored once, where it lives. The engine keeps the short form only when expanding
it reads back exactly the output as it would have been stored (step outputs
passed by reference, not re-rendered copies).

The plugins' actions are copied in on the first `get_action`/`known_actions`, once per
process, under a lock, so threads racing the first lookup all see the full registry.
Tests that register their own actions unregister them (`unregister_action`).

Spec: docs/blueprint-guide.md (action steps through a registry that built-in actions also use).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from wardian.blueprints.errors import nearest
from wardian.errors import NotFoundError, UsageError
from wardian.plugins import ENTRY_POINT_GROUP

__all__ = [
    "ActionContext",
    "OutputStorage",
    "action_step_refs",
    "actions_accepting_skipped",
    "get_action",
    "known_actions",
    "output_storage",
    "register_action",
    "unregister_action",
]

_REGISTRY: dict[str, ActionFn] = {}
_STORAGE: dict[str, OutputStorage] = {}
_ACCEPTS_SKIPPED: dict[str, frozenset[str]] = {}
_STEP_REFS: dict[str, dict[str, str]] = {}
_loaded = False
_lock = threading.Lock()  # guards _REGISTRY
_load_lock = threading.RLock()
# serialises plugin discovery; re-entrant, so a plugin that looks actions up while it is
# being imported does not deadlock (register_action takes only `_lock`)


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


ActionFn = Callable[..., Any]
"""An action: ``fn(ctx, **with_args)`` (`ActionContext`, then the step's ``with:``
arguments by keyword)."""


@dataclass(frozen=True)
class OutputStorage:
    """How the run store holds an action's output that repeats data stored elsewhere.

    Attributes:
        shorten: ``shorten(output) -> stored``: the output (JSON, secrets already
            redacted) as the run store keeps it, without what `expand` can read again.
        expand: ``expand(stored) -> output``: the output as the action returned it. It is
            given every stored form of the action's output: a short one, and a whole one
            (rows stored before the action had a short form, or kept whole because the
            short one did not read back the same), which it returns unchanged. Where the
            data it reads is gone it returns a note in its place (``<missing: …>``),
            never raises for that.
    """

    shorten: Callable[[Any], Any]
    expand: Callable[[Any], Any]


def register_action(name: str, *, replace: bool = False,
                    storage: OutputStorage | None = None,
                    accepts_skipped: Collection[str] = (),
                    step_refs: Mapping[str, str] | None = None,
                    ) -> Callable[[ActionFn], ActionFn]:
    """Decorator registering `fn(ctx, **with_args)` as action `name`.

    Args:
        name: the action's name (``with:`` steps name it in ``action:``).
        replace: replace an action registered under `name` before.
        storage: how its output is stored when it repeats data kept elsewhere (see
            `OutputStorage`); None = stored as returned.
        accepts_skipped: the arguments that accept null, the output of a step skipped by
            its `when` (``memory.commit``'s ``batch``: an empty batch). `blueprint validate`
            warns when a skippable output is passed to any other argument
            (`actions_accepting_skipped`, `wardian.blueprints.skip_checks`).
        step_refs: the step-reference arguments the action takes, each with the step it
            refers to when the blueprint names none (``{"archive_step": "archive"}``):
            the engine calls the action with ``archive`` = that step's output and
            ``archive_step`` = its id (`wardian.engine.executor`, "Step references").
            Any ``<name>_step`` argument of a blueprint is a reference; one not registered
            here reaches the action as ``<name>`` alone.

    Raises:
        UsageError: `name` is taken and `replace` is false.
    """

    def decorate(fn: ActionFn) -> ActionFn:
        with _lock:
            if name in _REGISTRY and not replace and _REGISTRY[name] is not fn:
                raise UsageError(f"action {name!r} is already registered")
            _REGISTRY[name] = fn
            if storage is not None:
                _STORAGE[name] = storage
            else:
                _STORAGE.pop(name, None)
            _ACCEPTS_SKIPPED[name] = frozenset(accepts_skipped)
            _STEP_REFS[name] = dict(step_refs or {})
        return fn

    return decorate


def unregister_action(name: str) -> None:
    """Remove action `name` (tests unregister what they register). No error if absent."""
    with _lock:
        _REGISTRY.pop(name, None)
        _STORAGE.pop(name, None)
        _ACCEPTS_SKIPPED.pop(name, None)
        _STEP_REFS.pop(name, None)


def output_storage(name: str) -> OutputStorage | None:
    """The `OutputStorage` action `name` registered, or None (stored as returned; also for
    an unknown action). Discovers the plugins first."""
    _load_plugins()
    with _lock:
        return _STORAGE.get(name)


def _load_plugins() -> None:
    """Copy every plugin's actions into the registry, once (`wardian.plugins.loaded`)."""
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        from wardian.plugins import loaded, resolve

        for name, action in loaded().actions.items():
            register_action(name, replace=True, storage=resolve(action.storage),
                            accepts_skipped=action.accepts_skipped,
                            step_refs=action.step_refs)(resolve(action.fn))
        _loaded = True


def _plugin_errors() -> list[str]:
    from wardian.plugins import loaded

    return loaded().errors


def known_actions() -> list[str]:
    """Every registered action name, sorted (discovers the plugins first)."""
    _load_plugins()
    with _lock:
        return sorted(_REGISTRY)


def actions_accepting_skipped() -> dict[str, frozenset[str]]:
    """Action name -> the arguments it registered as accepting a skipped step's null
    output (``accepts_skipped``), for every action that named any (discovers the plugins
    first)."""
    _load_plugins()
    with _lock:
        return {name: args for name, args in _ACCEPTS_SKIPPED.items() if args}


def action_step_refs(name: str) -> dict[str, str]:
    """The step-reference arguments action `name` registered (argument -> default step
    id; ``register_action(step_refs=...)``), empty for none or an unknown action."""
    _load_plugins()
    with _lock:
        return dict(_STEP_REFS.get(name, {}))


def get_action(name: str) -> ActionFn:
    """The function registered as `name` (discovers the plugins first).

    Raises:
        NotFoundError: no such action; the message names the nearest one, and the hint
            lists the registered actions and any plugin that failed to load.
    """
    _load_plugins()
    with _lock:
        fn = _REGISTRY.get(name)
        names = sorted(_REGISTRY)
    if fn is not None:
        return fn
    guess = nearest(name, names)
    hint = "registered actions: " + ", ".join(names)
    errors = _plugin_errors()
    if errors:
        hint += "; plugin errors: " + "; ".join(errors)
    else:
        hint += f"; packages add actions through the {ENTRY_POINT_GROUP!r} entry-point group"
    raise NotFoundError(
        f"unknown action {name!r}" + (f" (did you mean {guess!r}?)" if guess else ""),
        hint=hint,
    )
