"""The one adapter registry; built-in adapters register through it like any other.

Built-ins are registered lazily on first lookup (importing an adapter module must not
import httpx or spawn anything). Tests that register an adapter unregister it.

Spec: DESIGN.md "Blueprints, runs, providers" (adapter interface).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from wardian.providers.base import ProviderAdapter
from wardian.providers.errors import UnknownProvider

__all__ = [
    "BUILTIN_ADAPTERS",
    "get_adapter",
    "known_providers",
    "register_adapter",
    "unregister_adapter",
]

def _builtin() -> type[ProviderAdapter]:
    from wardian.providers.builtin.adapter import BuiltinAdapter

    return BuiltinAdapter


def _codex() -> type[ProviderAdapter]:
    from wardian.providers.codex import CodexAdapter

    return CodexAdapter


def _claude() -> type[ProviderAdapter]:
    from wardian.providers.claude import ClaudeAdapter

    return ClaudeAdapter


def _gemini() -> type[ProviderAdapter]:
    from wardian.providers.gemini import GeminiAdapter

    return GeminiAdapter


def _opencode() -> type[ProviderAdapter]:
    from wardian.providers.opencode import OpencodeAdapter

    return OpencodeAdapter


def _openai() -> type[ProviderAdapter]:
    from wardian.providers.openai import OpenAIAdapter

    return OpenAIAdapter


def _anthropic() -> type[ProviderAdapter]:
    from wardian.providers.anthropic import AnthropicAdapter

    return AnthropicAdapter


BUILTIN_ADAPTERS: dict[str, Callable[[], type[ProviderAdapter]]] = {
    "builtin": _builtin, "codex": _codex, "claude": _claude, "gemini": _gemini,
    "opencode": _opencode, "openai": _openai, "anthropic": _anthropic,
}
"""Name -> loader of every adapter class shipped with Wardian (each imports its module
when called, so importing the registry imports no adapter)."""

_lock = threading.Lock()
_adapters: dict[str, ProviderAdapter] = {}
_builtins_loaded = False


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    for name, load in BUILTIN_ADAPTERS.items():
        if name in _adapters:
            continue
        _adapters[name] = load()()
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
            _adapters[name] = BUILTIN_ADAPTERS[name]()()


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
