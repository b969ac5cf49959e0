"""The one adapter registry; built-in adapters register through it like any other.

Built-ins are registered lazily on first lookup (importing an adapter module must not
import httpx or spawn anything). Tests that register an adapter unregister it.

Issue 5 "Adapter interface".
"""

from __future__ import annotations

import importlib
import threading

from wardian.providers.base import ProviderAdapter
from wardian.providers.errors import UnknownProvider

__all__ = [
    "BUILTIN_ADAPTERS",
    "get_adapter",
    "known_providers",
    "register_adapter",
    "unregister_adapter",
]

BUILTIN_ADAPTERS: dict[str, str] = {
    "builtin": "wardian.providers.builtin.adapter:BuiltinAdapter",
    "codex": "wardian.providers.codex:CodexAdapter",
    "claude": "wardian.providers.claude:ClaudeAdapter",
    "gemini": "wardian.providers.gemini:GeminiAdapter",
    "opencode": "wardian.providers.opencode:OpencodeAdapter",
    "openai": "wardian.providers.openai:OpenAIAdapter",
    "anthropic": "wardian.providers.anthropic:AnthropicAdapter",
}
"""Name -> ``module:Class`` of every adapter shipped with Wardian."""

_lock = threading.Lock()
_adapters: dict[str, ProviderAdapter] = {}
_builtins_loaded = False


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    for name, target in BUILTIN_ADAPTERS.items():
        if name in _adapters:
            continue
        module_name, _, class_name = target.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        _adapters[name] = cls()
    _builtins_loaded = True


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

    A built-in that is unregistered comes back on the next lookup only if it was
    never loaded; tests should re-register a replaced built-in themselves.
    """
    with _lock:
        _adapters.pop(name, None)
        if name in BUILTIN_ADAPTERS:
            module_name, _, class_name = BUILTIN_ADAPTERS[name].partition(":")
            _adapters[name] = getattr(importlib.import_module(module_name), class_name)()


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
