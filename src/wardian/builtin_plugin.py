"""Wardian's own plugin: its actions, output schemas, providers, doctor checks and command
groups, registered through the same `wardian.plugins.Registry` as a third party's.

Everything heavy is given as `lazy(...)`: registering imports no command module, adapter,
pydantic model or check module (`wardian.plugins.loaded` runs on every command that is not
a hot one). The entry point ``wardian = "wardian.builtin_plugin:register"`` in
pyproject.toml names this function; the loader also calls it by module, first.
"""

from __future__ import annotations

import importlib
from functools import partial
from typing import Any

from wardian.plugins import Registry, lazy

__all__ = ["register"]

_CONSOLIDATION_REFS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    # action -> (arguments that accept a skipped step's null, step references' defaults:
    # the step ids the shipped blueprints use). A curate step skipped by its `when` (no new
    # messages) is an empty batch; a skipped review step (an empty memory) an empty review.
    "archive.load": ((), {}),
    "memory.snapshot": ((), {"archive_step": "archive"}),
    "memory.commit": (("batch",), {"batch_step": "curate", "archive_step": "archive"}),
    "memory.draft_plan": (("batch",), {"batch_step": "curate", "archive_step": "archive"}),
    "memory.draft_review": (("review",), {"review_step": "review",
                                          "snapshot_step": "snapshot"}),
}


def _consolidation(name: str) -> Any:
    from wardian.app.consolidation_actions import ACTIONS

    return ACTIONS[name]


def _archive_storage() -> Any:
    from wardian.app.action_outputs import ArchiveLoadOutput

    # The messages stay in the agent's archive: a run stores their seq range and digest.
    return ArchiveLoadOutput.STORAGE


def _engine_action(name: str) -> Any:
    from wardian.engine import builtin_actions

    return getattr(builtin_actions, name)


def _schemas() -> dict[str, tuple[Any, Any]]:
    from wardian.memory.batch import check_curator_answer, curator_output_schema
    from wardian.memory.review import check_review_answer, review_output_schema

    return {"wardian:curator-batch": (curator_output_schema(), check_curator_answer),
            "wardian:memory-review": (review_output_schema(), check_review_answer)}


def _adapters() -> dict[str, Any]:
    from wardian.providers.anthropic import AnthropicAdapter
    from wardian.providers.builtin.adapter import BuiltinAdapter
    from wardian.providers.claude import ClaudeAdapter
    from wardian.providers.codex import CodexAdapter
    from wardian.providers.gemini import GeminiAdapter
    from wardian.providers.openai import OpenAIAdapter
    from wardian.providers.opencode import OpencodeAdapter

    return {a.name: a for a in (BuiltinAdapter, CodexAdapter, ClaudeAdapter, GeminiAdapter,
                                OpencodeAdapter, OpenAIAdapter, AnthropicAdapter)}


def _adapter(name: str) -> Any:
    return _adapters()[name]


_CHECKS: dict[str, str] = {
    "data-dir": "Data directory", "settings": "Settings", "invokers": "Invokers",
    "runs": "Runs", "memory-hygiene": "Memory hygiene", "model-catalogs": "Model catalogs",
    "database": "Database", "hooks": "Installed hooks", "provider-clis": "Provider CLIs",
    "host-settings": "Host settings", "launches": "Recorded launches",
    "memory-history": "Memory records and their history",
    "recall": "Recall (semantic score)", "plugins": "Plugins",
}
"""Every built-in doctor check, in the order the doctor runs them, with its heading."""


def _check(name: str) -> Any:
    from wardian.app.doctor import builtin_check

    return builtin_check(name)


def _cli_group(name: str) -> Any:
    import wardian.cli

    return importlib.import_module(f"{wardian.cli.__name__}.{name}")


def register(registry: Registry) -> None:
    """Register every built-in part with `registry` (imports none of them)."""
    from wardian.cli._root_help import GROUP_HELP

    for action in ("noop", "log"):
        registry.add_action(action, lazy(partial(_engine_action, action)))
    for action, (skipped, refs) in _CONSOLIDATION_REFS.items():
        registry.add_action(action, lazy(partial(_consolidation, action)),
                            storage=lazy(_archive_storage) if action == "archive.load" else None,
                            accepts_skipped=skipped, step_refs=refs)
    schemas = lazy(_schemas)
    registry.add_output_schema(
        "wardian:curator-batch", schema=lazy(lambda: schemas.get()["wardian:curator-batch"][0]),
        check=lazy(lambda: schemas.get()["wardian:curator-batch"][1]),
        description='the curator batch: {"operations": [save|update|remove]}')
    registry.add_output_schema(
        "wardian:memory-review", schema=lazy(lambda: schemas.get()["wardian:memory-review"][0]),
        check=lazy(lambda: schemas.get()["wardian:memory-review"][1]),
        description='the memory review: {"findings": [duplicate|contradiction|'
                    'stale_checkpoint|missing_evidence|flagged]}')
    for provider in ("builtin", "codex", "claude", "gemini", "opencode", "openai",
                     "anthropic"):
        registry.add_provider(provider, lazy(partial(_adapter, provider)))
    for check, title in _CHECKS.items():
        registry.add_doctor_check(check, title, lazy(partial(_check, check)))
    for group, help in GROUP_HELP.items():
        registry.add_cli_group(group, help, lazy(partial(_cli_group, group)))
