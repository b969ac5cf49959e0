"""opencode adapter against a fake `opencode` on PATH (issue 5 acceptance)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.conftest import FakeCli, gone
from wardian.providers.base import ProviderRequest
from wardian.providers.errors import (
    EffortLowered,
    MissingCredentials,
    ModelMismatch,
    ModelUnavailable,
    ProviderError,
    QuotaExhausted,
)
from wardian.providers.registry import get_adapter

SCHEMA = {"type": "object", "required": ["operations"],
          "properties": {"operations": {"type": "array"}}}


def request(**kw: Any) -> ProviderRequest:
    base: dict[str, Any] = {"provider": "opencode", "model": "anthropic/claude-sonnet-5-5",
                               "effort": "high", "system": "You curate.",
                               "prompt": "Curate this.", "output_schema": SCHEMA,
                               "timeout_s": 30}
    return ProviderRequest(**(base | kw))


def test_passes_exact_flags_and_verifies_via_export(fake_cli: FakeCli) -> None:
    result = get_adapter("opencode").run(request())
    assert result.output == {"operations": []}
    assert (result.model, result.effort) == ("anthropic/claude-sonnet-5-5", "high")
    calls = fake_cli.calls()
    assert [c["argv"][:1] for c in calls] == [["run"], ["export"]]
    assert calls[0]["argv"] == ["run", "--format", "json", "-m", "anthropic/claude-sonnet-5-5",
                                "--variant", "high", "You curate.\n\nCurate this."]
    assert calls[1]["argv"][1].startswith("ses_")
    assert calls[0]["cwd"] == calls[1]["cwd"], "export runs where the session ran"


@pytest.mark.parametrize(("scenario", "error", "words", "ncalls"), [
    ("mismatch", ModelMismatch, "observed model anthropic/claude-haiku-5-5", 2),
    ("lowered_effort", EffortLowered, "effort medium", 2),
    ("unknown_model", ModelUnavailable, "Model not found", 1),
    ("quota", QuotaExhausted, "exceeded your current quota", 1),
    ("no_auth", MissingCredentials, "API key is missing", 1),
])
def test_each_failure_has_its_own_error(fake_cli: FakeCli, scenario: str,
                                        error: type[ProviderError], words: str,
                                        ncalls: int) -> None:
    fake_cli.scenario(scenario)
    with pytest.raises(error) as info:
        get_adapter("opencode").run(request())
    assert words in str(info.value)
    assert len(fake_cli.calls()) == ncalls


def test_timeout_kills_the_whole_tree(fake_cli: FakeCli) -> None:
    fake_cli.time_out(lambda timeout_s: get_adapter("opencode").run(
        request(timeout_s=timeout_s)))
    assert gone(fake_cli.grandchild_pid())


def test_one_megabyte_prompt_goes_through_stdin(fake_cli: FakeCli) -> None:
    prompt = "w" * (1024 * 1024)
    get_adapter("opencode").run(request(prompt=prompt, system=""))
    call = fake_cli.calls()[0]
    assert call["stdin"] == prompt
    assert call["argv"][-1] == "high"


def test_discovery_reads_models_verbose(fake_cli: FakeCli) -> None:
    models = get_adapter("opencode").discover_models()
    assert [(m.id, m.efforts) for m in models] == [
        ("anthropic/claude-sonnet-5-5", ["high", "max"]),
        ("openai/gpt-5.2", ["minimal", "low", "medium", "high"]),
    ]
    assert [c["argv"] for c in fake_cli.calls()] == [["models", "--verbose"]]
