"""Model matching, reroute notices and error classification (the verification core)."""

from __future__ import annotations

import pytest

from wardian.providers._common import classify_error, model_matches, reroute_notice
from wardian.providers.claude import CLAUDE_ALIASES
from wardian.providers.errors import (
    EffortRejected,
    MissingCredentials,
    ModelUnavailable,
    ProviderError,
    QuotaExhausted,
    RateLimited,
)
from wardian.providers.openai import openai_efforts


@pytest.mark.parametrize(("assigned", "observed", "same"), [
    ("gpt-5", "gpt-5", True),
    ("gpt-5", "gpt-5-2025-08-07", True),
    ("gpt-5", "gpt-5-mini", False),
    ("gpt-5.2", "gpt-5.2-codex", False),
    ("claude-opus-4-5", "claude-opus-4-5-20251101", True),
    ("claude-fable-5[1m]", "claude-fable-5", True),
    ("claude-fable-5", "claude-opus-4-8", False),
    ("opus", "claude-opus-5", True),
    ("opus", "claude-sonnet-5", False),
    ("anthropic/claude-sonnet-5-5", "claude-sonnet-5-5", True),
    ("qwen3:8b", "qwen3:14b", False),
])
def test_model_matches(assigned: str, observed: str, same: bool) -> None:
    assert model_matches(assigned, observed, CLAUDE_ALIASES) is same


@pytest.mark.parametrize(("message", "target"), [
    ("model rerouted: gpt-5.3-codex -> gpt-5.2 (cyber_safety)", "gpt-5.2"),
    ("Fable 5's safety measures flagged this message. Switched to Opus 4.8.", "Opus"),
    ("Switched to fallback model gemini-2.5-flash", "gemini-2.5-flash"),
    ("Falling back to gemini-2.5-flash due to quota", "gemini-2.5-flash"),
    ("Reading files", None),
])
def test_reroute_notice(message: str, target: str | None) -> None:
    assert reroute_notice(message) == target


@pytest.mark.parametrize(("message", "cls"), [
    ("You exceeded your current quota, please check your plan", QuotaExhausted),
    ("Claude AI usage limit reached|1767225600", QuotaExhausted),
    ("Unsupported value: 'xhigh' for reasoning.effort", EffortRejected),
    ("The model `gpt-9` does not exist or you do not have access to it.", ModelUnavailable),
    ("Not logged in · Please run /login", MissingCredentials),
    ("Rate limit reached for requests", RateLimited),
    ("segmentation fault", ProviderError),
])
def test_classify_error(message: str, cls: type) -> None:
    error = classify_error(message, provider="p", selection="model m")
    assert type(error) is cls
    assert "model m" in str(error)


def test_openai_effort_table() -> None:
    assert openai_efforts("gpt-5") == ["minimal", "low", "medium", "high"]
    assert openai_efforts("gpt-5.1") == ["none", "low", "medium", "high"]
    assert "xhigh" in openai_efforts("gpt-5.1-codex-max")
    assert openai_efforts("o3-mini") == ["low", "medium", "high"]
    assert openai_efforts("gpt-oss:20b") == ["low", "medium", "high"]
    assert openai_efforts("gpt-4o") == [] and openai_efforts("llama3.1:8b") == []
