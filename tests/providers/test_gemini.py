"""gemini adapter against a fake `gemini` on PATH (issue 5 acceptance)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.conftest import FakeCli, gone
from wardian.providers.base import ProviderRequest
from wardian.providers.errors import (
    MissingCredentials,
    ModelMismatch,
    ModelRerouted,
    ModelUnavailable,
    ProviderError,
    QuotaExhausted,
    UnsupportedEffort,
)
from wardian.providers.registry import get_adapter

SCHEMA = {"type": "object", "required": ["operations"],
          "properties": {"operations": {"type": "array"}}}


def request(**kw: Any) -> ProviderRequest:
    base: dict[str, Any] = {"provider": "gemini", "model": "gemini-2.5-pro",
                               "system": "You curate.", "prompt": "Curate this.",
                               "output_schema": SCHEMA, "timeout_s": 30}
    return ProviderRequest(**(base | kw))


def test_passes_exact_flags_and_joins_deltas(fake_cli: FakeCli) -> None:
    result = get_adapter("gemini").run(request())
    assert result.output == {"operations": []}
    assert result.model == "gemini-2.5-pro"
    calls = fake_cli.calls()
    assert len(calls) == 1
    assert calls[0]["argv"] == ["-o", "stream-json", "-m", "gemini-2.5-pro", "--skip-trust",
                                "-p", "You curate.\n\nCurate this."]


def test_effort_is_a_validation_error_before_anything_runs(fake_cli: FakeCli) -> None:
    with pytest.raises(UnsupportedEffort) as info:
        get_adapter("gemini").run(request(effort="high"))
    assert info.value.exit_code == 2
    assert "no effort levels" in str(info.value)
    assert fake_cli.calls() == []


@pytest.mark.parametrize(("scenario", "error", "words"), [
    ("reroute", ModelRerouted, "observed model gemini-2.5-flash"),
    ("mismatch", ModelMismatch, "observed model gemini-2.5-flash"),
    ("unknown_model", ModelUnavailable, "ModelNotFoundError"),
    ("quota", QuotaExhausted, "exhausted your daily quota"),
    ("no_auth", MissingCredentials, "GEMINI_API_KEY"),
])
def test_each_failure_has_its_own_error(fake_cli: FakeCli, scenario: str,
                                        error: type[ProviderError], words: str) -> None:
    fake_cli.scenario(scenario)
    with pytest.raises(error) as info:
        get_adapter("gemini").run(request())
    assert words in str(info.value)
    assert len(fake_cli.calls()) == 1


def test_a_start_up_note_on_stderr_is_no_fallback(fake_cli: FakeCli) -> None:
    """Gemini CLI prints "Falling back to GrepTool." when ripgrep is missing; a failed run
    is reported with the CLI's own error, not as a model fallback."""
    fake_cli.scenario("empty")
    with pytest.raises(ProviderError) as info:
        get_adapter("gemini").run(request())
    assert not isinstance(info.value, ModelRerouted), info.value
    assert "empty response" in str(info.value)


def test_every_substitute_model_is_named(fake_cli: FakeCli) -> None:
    """After a silent fallback the stats list the model asked first (no answer) and the
    one that answered; the error names both."""
    fake_cli.scenario("silent_fallback")
    with pytest.raises(ModelMismatch) as info:
        get_adapter("gemini").run(request(model="gemini-3.1-flash-lite"))
    assert "observed models gemini-3.5-flash-lite, gemini-3.8-flash" in str(info.value)


def test_timeout_kills_the_whole_tree(fake_cli: FakeCli) -> None:
    fake_cli.time_out(lambda timeout_s: get_adapter("gemini").run(
        request(timeout_s=timeout_s)))
    assert gone(fake_cli.grandchild_pid())


def test_one_megabyte_prompt_goes_through_stdin(fake_cli: FakeCli) -> None:
    prompt = "z" * (1024 * 1024)
    get_adapter("gemini").run(request(prompt=prompt, system=""))
    call = fake_cli.calls()[0]
    assert call["stdin"] == prompt
    assert "-p" not in call["argv"]


def test_discovery_without_key_is_fixed_concrete_ids(fake_cli: FakeCli) -> None:
    models = get_adapter("gemini").discover_models()
    ids = [m.id for m in models]
    assert "gemini-2.5-pro" in ids and "auto" not in ids
    assert all(m.source == "fixed-alias" and m.efforts == [] for m in models)


def test_with_no_model_assigned_a_switch_after_init_still_fails(fake_cli: FakeCli) -> None:
    """No assigned model is no licence to switch: the answer must come from init.model."""
    fake_cli.scenario("mismatch")
    with pytest.raises(ModelMismatch, match=r"observed model gemini-2\.5-flash"):
        get_adapter("gemini").run(request(model=None))
    assert "-m" not in fake_cli.calls()[0]["argv"], "no model is assumed either"
