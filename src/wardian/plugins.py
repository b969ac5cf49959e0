"""The one plugin mechanism: the ``wardian.plugins`` entry-point group and its `Registry`.

A package adds blueprint actions, output schemas, provider adapters, doctor checks and
command groups with one entry point whose value names a function ``register(registry)``::

    # pyproject.toml of the plugin
    [project.entry-points."wardian.plugins"]
    mytool = "mytool.wardian_plugin:register"

    # mytool/wardian_plugin.py
    from wardian.plugins import lazy

    def register(registry):
        registry.add_action("mytool.echo", echo)
        registry.add_cli_group("mytool", "My tool's commands.", lazy(load_typer_app))

Wardian's own parts are one such plugin (`wardian.builtin_plugin`), called first by module
(so a checkout whose installed metadata predates the group has them too); then every other
distribution's entry, sorted by name. `loaded` does this once per process, under a lock.

A value may be given as ``lazy(loader)``: `resolve` calls the loader (once) when the value
is first needed, so loading the registry imports no heavy module. A name registered before
(by the built-in plugin or another plugin) is refused and the refusal, naming both owners,
is recorded in `Plugins.errors`, as is a plugin that fails to import or register (by entry
point, never with a traceback). This module imports nothing of Wardian: every consumer
reads its kind from `loaded()`. Decision: docs/decisions/plugins.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

__all__ = [
    "ENTRY_POINT_GROUP",
    "Action",
    "CliGroup",
    "DoctorCheck",
    "Lazy",
    "OutputSchemaEntry",
    "Plugins",
    "Registry",
    "lazy",
    "loaded",
    "resolve",
]

ENTRY_POINT_GROUP = "wardian.plugins"
"""The entry-point group whose members are ``register(registry)`` functions."""

BUILTIN_OWNER = "wardian (built-in)"
"""How errors name the owner of Wardian's own registrations."""

T = TypeVar("T")


class Lazy(Generic[T]):
    """A value loaded when first needed (`resolve`); `loader` takes no arguments."""

    def __init__(self, loader: Callable[[], T]) -> None:
        self._loader = loader
        self._lock = threading.Lock()
        self._done = False
        self._value: T | None = None

    def get(self) -> T:
        """The loaded value (the loader runs once; its exception propagates)."""
        with self._lock:
            if not self._done:
                self._value = self._loader()
                self._done = True
        return self._value  # type: ignore[return-value]


def lazy(loader: Callable[[], T]) -> Lazy[T]:
    """`loader`'s value, loaded when a consumer first needs it."""
    return Lazy(loader)


def resolve(value: T | Lazy[T]) -> T:
    """`value` itself, or the loaded value of a `Lazy`."""
    return value.get() if isinstance(value, Lazy) else value


class Action(NamedTuple):
    """A registered action (`wardian.engine.actions`: ``fn(ctx, **with_args)``).

    Attributes:
        fn: the function, or `Lazy` of it. storage: an ``OutputStorage``, a `Lazy` of
        one, or None. accepts_skipped / step_refs: as ``register_action`` takes them.
    """

    fn: Any
    storage: Any = None
    accepts_skipped: frozenset[str] = frozenset()
    step_refs: Mapping[str, str] = {}


class OutputSchemaEntry(NamedTuple):
    """A registered output schema: JSON Schema (or `Lazy`), description, answer check."""

    description: str
    schema: Any
    check: Any = None


class DoctorCheck(NamedTuple):
    """A doctor check: its heading and ``run(DoctorContext) -> Iterable[Finding]``."""

    title: str
    run: Any


class CliGroup(NamedTuple):
    """A command group: its one-line help and a Typer app, or a module with ``app`` or
    ``register(root)`` (or a `Lazy` of either)."""

    help: str
    load: Any


_KINDS = {"actions": "action", "output_schemas": "output schema", "providers": "provider",
          "doctor_checks": "doctor check", "cli_groups": "command group"}


class Plugins:
    """Everything every plugin registered, by kind and name, in registration order.

    Attributes:
        providers: name -> an adapter class or factory (zero arguments), or `Lazy` of one.
        errors: what was refused or failed, one sentence each, naming the entry point.
        owners: (kind, name) -> the owner that registered it.
    """

    def __init__(self) -> None:
        self.actions: dict[str, Action] = {}
        self.output_schemas: dict[str, OutputSchemaEntry] = {}
        self.providers: dict[str, Any] = {}
        self.doctor_checks: dict[str, DoctorCheck] = {}
        self.cli_groups: dict[str, CliGroup] = {}
        self.errors: list[str] = []
        self.owners: dict[tuple[str, str], str] = {}


class Registry:
    """What a plugin's ``register(registry)`` is given: one method per kind. A name
    already taken is refused (recorded in `Plugins.errors`, naming both owners)."""

    def __init__(self, plugins: Plugins, owner: str) -> None:
        self._plugins = plugins
        self._owner = owner

    def _add(self, kind: str, name: str, value: Any) -> None:
        table: dict[str, Any] = getattr(self._plugins, kind)
        owner = self._plugins.owners.get((kind, name))
        if owner is not None:
            self._plugins.errors.append(
                f"{_KINDS[kind]} {name!r} of {self._owner} is refused: {owner} registers it")
            return
        self._plugins.owners[(kind, name)] = self._owner
        table[name] = value

    def add_action(self, name: str, fn: Any, *, storage: Any = None,
                   accepts_skipped: Collection[str] = (),
                   step_refs: Mapping[str, str] | None = None) -> None:
        """Action `name`: ``fn(ctx, **with_args)`` (or `Lazy`); the keywords as
        ``wardian.engine.actions.register_action`` takes them."""
        self._add("actions", name, Action(fn, storage, frozenset(accepts_skipped),
                                          dict(step_refs or {})))

    def add_output_schema(self, name: str, *, description: str, schema: Any,
                          check: Any = None) -> None:
        """``output: {$ref: name}``: a JSON Schema (or `Lazy`), one line of description and
        an optional answer check (``check(value)`` raising ``ValidationError``)."""
        self._add("output_schemas", name, OutputSchemaEntry(description, schema, check))

    def add_provider(self, name: str, adapter: Any) -> None:
        """Provider `name`: a ``ProviderAdapter`` class or zero-argument factory (or
        `Lazy`); its instance's ``name`` must be `name`."""
        self._add("providers", name, adapter)

    def add_doctor_check(self, name: str, title: str, run: Any) -> None:
        """Doctor check `name` under heading `title`: ``run(ctx)`` yields ``Finding``s."""
        self._add("doctor_checks", name, DoctorCheck(title, run))

    def add_cli_group(self, name: str, help: str, load: Any) -> None:
        """Command ``wardian NAME`` with one line of `help` (listed by ``wardian --help``
        without loading it): a Typer app or a module with ``app`` or ``register(root)``."""
        self._add("cli_groups", name, CliGroup(help, load))


_lock = threading.RLock()
_loaded: Plugins | None = None


def loaded() -> Plugins:
    """The registry of the built-in plugin and every installed plugin (loaded once)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
    return _loaded


def _load() -> Plugins:
    from importlib.metadata import entry_points

    from wardian import builtin_plugin

    plugins = Plugins()
    builtin_plugin.register(Registry(plugins, BUILTIN_OWNER))
    entries: Iterable[Any] = sorted(entry_points(group=ENTRY_POINT_GROUP),
                                    key=lambda e: e.name)
    for entry in entries:
        if entry.module == builtin_plugin.__name__:
            continue
        dist = getattr(entry.dist, "name", None) or "a distribution"
        owner = f"{dist} ({entry.name} = {entry.value})"
        try:
            entry.load()(Registry(plugins, owner))
        except Exception as exc:  # one broken plugin must not hide the others
            plugins.errors.append(f"plugin {owner} failed to load: "
                                  f"{type(exc).__name__}: {exc}")
    return plugins
