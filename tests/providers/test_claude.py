"""claude adapter against a fake `claude` on PATH (issue 5 acceptance)."""

from __future__ import annotations

import json
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
    ProviderError,
    QuotaExhausted,
)
from wardian.providers.registry import get_adapter

SCHEMA = {"type": "object", "required": ["operations"],
          "properties": {"operations": {"type": "array"}}}


def request(**kw: Any) -> ProviderRequest:
    base: dict[str, Any] = {"provider": "claude", "model": "claude-fable-5", "effort": "max",
                               "system": "You curate.", "prompt": "Curate this.",
                               "output_schema": SCHEMA, "timeout_s": 30}
    return ProviderRequest(**(base | kw))


def test_passes_exact_flags_never_a_fallback(fake_cli: FakeCli,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_EFFORT_LEVEL", "low")  # would override --effort
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")
    result = get_adapter("claude").run(request())
    assert result.output == {"operations": []}
    assert (result.model, result.effort) == ("claude-fable-5", "max")
    assert result.usage and result.usage["total_cost_usd"] == 0.0123
    calls = fake_cli.calls()
    assert len(calls) == 1
    argv = calls[0]["argv"]
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert argv == [
        "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence",
        "--settings", json.dumps(settings), "--model", "claude-fable-5",
        "--effort", "max", "--json-schema", json.dumps(SCHEMA, separators=(",", ":")),
        "--append-system-prompt", "You curate.", "Curate this.",
    ]
    assert settings["switchModelsOnFlag"] is False
    assert set(settings["hooks"]) == {"SessionStart", "Stop"}
    assert not any("fallback" in arg for arg in argv)
    assert calls[0]["env"] == {}, "effort/model overrides are removed from the child env"


def test_no_effort_report_fails_closed(fake_cli: FakeCli) -> None:
    fake_cli.scenario("no_effort_report")
    with pytest.raises(ModelUnverified, match="no effort level"):
        get_adapter("claude").run(request())
    result = get_adapter("claude").run(request(options={"require_effort_report": False}))
    assert result.model == "claude-fable-5"


def test_bare_mode_installs_no_hooks(fake_cli: FakeCli) -> None:
    get_adapter("claude").run(request(effort=None, options={"bare": True}))
    argv = fake_cli.calls()[0]["argv"]
    assert json.loads(argv[argv.index("--settings") + 1]) == {"switchModelsOnFlag": False}
    assert "--bare" in argv


def test_alias_matches_the_resolved_model_and_haiku_background_is_fine(fake_cli: FakeCli) -> None:
    result = get_adapter("claude").run(request(model="opus", effort="high"))
    assert result.model == "claude-opus-5"


@pytest.mark.parametrize("model", ["opus", None])
def test_a_silent_switch_within_the_family_is_caught(fake_cli: FakeCli, model: str | None) -> None:
    """``opus`` resolved to claude-opus-5 at init; an answer from claude-opus-4-8 is a switch,
    even though both match the alias, and even when no model was assigned."""
    fake_cli.scenario("silent_switch")
    with pytest.raises(ModelMismatch) as info:
        get_adapter("claude").run(request(model=model, effort="high"))
    assert "started as claude-" in str(info.value)
    assert "observed model claude-opus-4-8" in str(info.value)


@pytest.mark.parametrize(("scenario", "error", "words"), [
    ("reroute", ModelRerouted, "observed model claude-opus-4-8"),
    ("mismatch", ModelMismatch, "observed model claude-sonnet-4-6"),
    ("lowered_effort", EffortLowered, "effort high (from SessionStart hook effort.level)"),
    ("unknown_model", ModelUnavailable, "may not exist"),
    ("quota", QuotaExhausted, "usage limit"),
    ("no_auth", MissingCredentials, "Not logged in"),
])
def test_each_failure_has_its_own_error(fake_cli: FakeCli, scenario: str,
                                        error: type[ProviderError], words: str) -> None:
    fake_cli.scenario(scenario)
    with pytest.raises(error) as info:
        get_adapter("claude").run(request())
    assert words in str(info.value)
    if scenario in ("reroute", "mismatch", "lowered_effort"):
        assert "assigned model claude-fable-5 effort max" in str(info.value)
    assert len(fake_cli.calls()) == 1


def test_timeout_kills_the_whole_tree(fake_cli: FakeCli) -> None:
    fake_cli.time_out(lambda timeout_s: get_adapter("claude").run(
        request(timeout_s=timeout_s)))
    assert gone(fake_cli.grandchild_pid())


def test_one_megabyte_prompt_goes_through_stdin(fake_cli: FakeCli) -> None:
    prompt = "y" * (1024 * 1024)
    get_adapter("claude").run(request(prompt=prompt))
    call = fake_cli.calls()[0]
    assert call["stdin"] == prompt
    assert call["argv"][-2:] == ["--append-system-prompt", "You curate."]


def test_discovery_without_api_key_is_fixed_aliases(fake_cli: FakeCli) -> None:
    models = get_adapter("claude").discover_models()
    assert {m.id for m in models} >= {"opus", "sonnet", "haiku"}
    assert all(m.source == "fixed-alias" for m in models)
    assert fake_cli.calls() == []


def test_an_init_event_that_echoes_the_alias_is_resolved_by_the_answer() -> None:
    from wardian.providers.claude import ClaudeAdapter

    adapter = ClaudeAdapter()
    usage: dict[str, Any] = {"modelUsage": {"claude-opus-5-20260301": {}, "claude-haiku-4-5": {}}}
    ok = adapter._verify(request(model="opus", effort=None), "opus",
                         ["claude-opus-5", "claude-opus-5"], usage, [])
    assert ok == "claude-opus-5"
    with pytest.raises(ModelMismatch, match="observed model claude-opus-4-8"):
        adapter._verify(request(model="opus", effort=None), "opus",
                        ["claude-opus-5", "claude-opus-4-8"], usage, [])
