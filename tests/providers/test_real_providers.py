"""Opt-in calls to the real provider CLIs and APIs (issue 5 acceptance, last bullet).

Run with ``WARDIAN_REAL_PROVIDERS=1`` and, per provider, the model to use, e.g.
``WARDIAN_REAL_CODEX_MODEL=gpt-5.2-codex WARDIAN_REAL_CODEX_EFFORT=low``. A provider is
skipped (with the reason, counted in pytest's summary) when the switch is off, its CLI
is not installed, its credentials are missing, or no model was named.
Variables are read at import: the autouse `wardian_home` fixture clears ``WARDIAN_*``.
"""

from __future__ import annotations

import os
import shutil

import pytest

from wardian.providers.base import ProviderRequest
from wardian.providers.registry import get_adapter

ENABLED = os.environ.get("WARDIAN_REAL_PROVIDERS") == "1"
SETTINGS = {k: v for k, v in os.environ.items() if k.startswith("WARDIAN_REAL_")}
CREDENTIALS = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
}
SCHEMA = {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}},
          "additionalProperties": False}

pytestmark = [
    pytest.mark.real_provider,
    pytest.mark.skipif(not ENABLED, reason="real provider tests need WARDIAN_REAL_PROVIDERS=1"),
]


@pytest.mark.parametrize("provider", ["codex", "claude", "gemini", "opencode", "openai",
                                      "anthropic"])
def test_real_provider_answers_with_the_assigned_model(provider: str) -> None:
    if provider in ("codex", "claude", "gemini", "opencode") and not shutil.which(provider):
        pytest.skip(f"`{provider}` is not installed")
    for key in CREDENTIALS.get(provider, ()):
        if not os.environ.get(key):
            pytest.skip(f"{key} is not set")
    model = SETTINGS.get(f"WARDIAN_REAL_{provider.upper()}_MODEL")
    if not model:
        pytest.skip(f"set WARDIAN_REAL_{provider.upper()}_MODEL to the model to test")
    effort = SETTINGS.get(f"WARDIAN_REAL_{provider.upper()}_EFFORT")
    request = ProviderRequest(
        provider=provider, model=model, effort=effort, timeout_s=300,
        prompt='Reply with exactly this JSON and nothing else: {"ok": true}',
        output_schema=SCHEMA,
    )
    result = get_adapter(provider).run(request)
    assert result.output == {"ok": True}
    assert result.model


@pytest.mark.parametrize("provider", ["codex", "opencode", "openai", "anthropic"])
def test_real_discovery(provider: str) -> None:
    if provider in ("codex", "opencode") and not shutil.which(provider):
        pytest.skip(f"`{provider}` is not installed")
    for key in CREDENTIALS.get(provider, ()):
        if not os.environ.get(key):
            pytest.skip(f"{key} is not set")
    models = get_adapter(provider).discover_models(timeout_s=60)
    assert models and all(m.id for m in models)
