"""The provider adapters: one instance per name, from every plugin's ``add_provider``
(`wardian.plugins`; the built-in adapters come through `wardian.builtin_plugin` like any
other). Adapter classes are loaded on the first lookup. Tests that register an adapter
unregister it.

Spec: DESIGN.md "Blueprints, runs, providers" (adapter interface).
"""

from __future__ import annotations

import threading
from typing import Any

from wardian.providers.base import ProviderAdapter
from wardian.providers.errors import UnknownProvider

__all__ = [
    "get_adapter",
    "known_providers",
    "register_adapter",
    "unregister_adapter",
]

_lock = threading.Lock()
_adapters: dict[str, ProviderAdapter] = {}
_builtins_loaded = False


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    for name in _plugin_providers():
        if name not in _adapters:
            _adapters[name] = _plugin_adapter(name)
    _builtins_loaded = True


def _plugin_providers() -> dict[str, Any]:
    from wardian.plugins import loaded

    return loaded().providers


def _plugin_adapter(name: str) -> ProviderAdapter:
    from wardian.plugins import resolve

    adapter: ProviderAdapter = resolve(_plugin_providers()[name])()
    return adapter


def register_adapter(adapter: ProviderAdapter, *, replace: bool = False) -> None:
    """Register `adapter` under `adapter.name`.

    Raises:
        ValueError: the name is taken and `replace` is false.
    """
    with _lock:
        _load_builtins()
        if adapter.name in _adapters and not replace:
            raise ValueError(f"provider {adapter.name!r} is already registered")
        _adapters[adapter.name] = adapter


def unregister_adapter(name: str) -> None:
    """Remove `name` (tests use this to undo `register_adapter`); unknown names are ignored.

    A plugin's adapter that is unregistered comes back (a fresh instance).
    """
    with _lock:
        _adapters.pop(name, None)
        if name in _plugin_providers():
            _adapters[name] = _plugin_adapter(name)


def known_providers() -> list[str]:
    """Every registered provider name, sorted. Read-only."""
    with _lock:
        _load_builtins()
        return sorted(_adapters)


def get_adapter(name: str) -> ProviderAdapter:
    """The adapter registered as `name`.

    Raises:
        UnknownProvider (exit 2): `name` is not registered; the message lists known ones.
    """
    with _lock:
        _load_builtins()
        adapter = _adapters.get(name)
        if adapter is None:
            raise UnknownProvider(name, sorted(_adapters))
        return adapter
