"""codex adapter against a fake `codex` on PATH (issue 5 acceptance)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providers.conftest import FakeCli, gone
from wardian.providers.base import ProviderRequest
from wardian.providers.errors import (
    EffortLowered,
    MissingCredentials,
    ModelMismatch,
    ModelRerouted,
    ModelUnavailable,
    ModelUnverified,
    OutputInvalid,
    ProviderError,
    ProviderNotInstalled,
    QuotaExhausted,
    UnsupportedEffort,
)
from wardian.providers.registry import get_adapter

SCHEMA = {"type": "object", "required": ["operations"],
          "properties": {"operations": {"type": "array"}}}


def request(**kw: Any) -> ProviderRequest:
    base: dict[str, Any] = {"provider": "codex", "model": "gpt-5.2-codex", "effort": "high",
                               "system": "You curate.", "prompt": "Curate this.",
                               "output_schema": SCHEMA, "timeout_s": 30}
    return ProviderRequest(**(base | kw))


def test_passes_exact_flags_and_verifies_the_rollout(fake_cli: FakeCli, tmp_path: Path) -> None:
    result = get_adapter("codex").run(request(cwd=str(tmp_path)))
    assert result.output == {"operations": []}
    assert (result.model, result.effort) == ("gpt-5.2-codex", "high")
    assert result.usage == {"input_tokens": 2476, "cached_input_tokens": 2048,
                            "output_tokens": 122}
    calls = fake_cli.calls()
    assert len(calls) == 1, "the adapter must call codex exactly once and nothing else"
    argv = calls[0]["argv"]
    schema_file = argv[argv.index("--output-schema") + 1]
    assert argv == ["exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only",
                    "-m", "gpt-5.2-codex", "-c", "model_reasoning_effort=high",
                    "--output-schema", schema_file, "You curate.\n\nCurate this."]
    assert json.loads(calls[0]["output_schema"]) == SCHEMA
    assert calls[0]["cwd"] == str(tmp_path)
    assert "--fallback-model" not in argv


def test_ultra_is_refused_before_codex_runs(fake_cli: FakeCli) -> None:
    """Codex sends a lower reasoning effort for ``ultra`` and records ultra in the rollout,
    so the answer could not be verified as coming from the assigned effort."""
    with pytest.raises(UnsupportedEffort, match=r"cannot be passed to codex model "
                                                r"gpt-5\.2-codex for a step") as refused:
        get_adapter("codex").run(request(effort="ultra"))
    assert refused.value.exit_code == 2
    assert fake_cli.calls() == []


@pytest.mark.parametrize(("scenario", "error", "words"), [
    ("reroute", ModelRerouted, "observed model gpt-5.2"),
    ("mismatch", ModelMismatch, "observed model gpt-5.1-codex-mini"),
    ("lowered_effort", EffortLowered, "observed model gpt-5.2-codex effort medium"),
    ("unknown_model", ModelUnavailable, "not supported"),
    ("quota", QuotaExhausted, "usage limit"),
    ("no_auth", MissingCredentials, "401"),
    ("no_rollout", ModelUnverified, "rollout"),
    ("no_effort_report", ModelUnverified, "records no reasoning effort"),
])
def test_each_failure_has_its_own_error(fake_cli: FakeCli, scenario: str,
                                        error: type[ProviderError], words: str) -> None:
    fake_cli.scenario(scenario)
    with pytest.raises(error) as info:
        get_adapter("codex").run(request())
    message = str(info.value)
    assert words in message
    if issubclass(error, (ModelRerouted, ModelMismatch, EffortLowered)):
        assert "assigned model gpt-5.2-codex effort high" in message
    assert len(fake_cli.calls()) == 1, "nothing is retried with another model"


def test_invalid_answer_is_output_invalid_with_path(fake_cli: FakeCli) -> None:
    fake_cli.scenario("ok", answer='{"operations": "nope"}')
    with pytest.raises(OutputInvalid) as info:
        get_adapter("codex").run(request())
    assert info.value.path == "$.operations"
    fake_cli.scenario("ok", answer="I could not do it")
    with pytest.raises(OutputInvalid, match="not JSON"):
        get_adapter("codex").run(request())


def test_timeout_kills_the_whole_tree(fake_cli: FakeCli) -> None:
    error = fake_cli.time_out(lambda timeout_s: get_adapter("codex").run(
        request(timeout_s=timeout_s)))
    assert "whole process tree was killed" in str(error)
    assert gone(fake_cli.grandchild_pid())


def test_one_megabyte_prompt_goes_through_stdin(fake_cli: FakeCli) -> None:
    prompt = "x" * (1024 * 1024)
    get_adapter("codex").run(request(prompt=prompt, system=""))
    call = fake_cli.calls()[0]
    assert call["argv"][-1] == "-"
    assert call["stdin"] == prompt
    assert all(len(arg) < 10_000 for arg in call["argv"])


def test_a_prompt_starting_with_a_dash_goes_through_stdin(fake_cli: FakeCli) -> None:
    get_adapter("codex").run(request(prompt="- keep it short", system=""))
    call = fake_cli.calls()[0]
    assert call["argv"][-1] == "-" and call["stdin"] == "- keep it short"


def test_missing_cli(fake_cli: FakeCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ProviderNotInstalled, match="`codex` command was not found"):
        get_adapter("codex").run(request())


def test_unknown_option_is_a_validation_error(fake_cli: FakeCli) -> None:
    from wardian.errors import ValidationError

    with pytest.raises(ValidationError, match=r"options\.fallback"):
        get_adapter("codex").run(request(options={"fallback": "gpt-5"}))
    assert fake_cli.calls() == []


def test_discovery_through_app_server(fake_cli: FakeCli) -> None:
    models = get_adapter("codex").discover_models(timeout_s=20)
    assert [m.id for m in models] == ["gpt-5.2-codex", "gpt-5.1-codex-mini"]
    assert models[0].efforts == ["low", "medium", "high", "xhigh"]
    assert models[0].default_effort == "medium" and models[0].is_default
    assert [c["argv"] for c in fake_cli.calls()] == [["app-server"]]


def test_discovery_output_is_capped(fake_cli: FakeCli, monkeypatch: pytest.MonkeyPatch) -> None:
    import wardian.providers.codex as codex_module
    from wardian.providers.errors import DiscoveryFailed

    monkeypatch.setattr(codex_module, "MAX_OUTPUT_BYTES", 100_000)
    fake_cli.scenario("discovery_flood")
    with pytest.raises(DiscoveryFailed, match="more than 100,000 characters"):
        get_adapter("codex").discover_models(timeout_s=20)
