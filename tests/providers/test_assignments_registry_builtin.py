"""Assignments parsing/resolution, the adapter registry, and the builtin adapter."""

from __future__ import annotations

import pytest

from tests.providers.conftest import FakeCli
from wardian.errors import NotFoundError, ValidationError
from wardian.providers.assignments import (
    AgentAssignment,
    TemporaryProviderAssignment,
    parse_assignments,
    resolve_assignment,
    validate_assignments,
)
from wardian.providers.base import (
    ProviderAdapter,
    ProviderOptions,
    ProviderRequest,
    ProviderResult,
)
from wardian.providers.errors import (
    CatalogNotRefreshed,
    ModelUnavailable,
    OutputInvalid,
    UnknownProvider,
    UnsupportedEffort,
)
from wardian.providers.registry import (
    get_adapter,
    known_providers,
    register_adapter,
    unregister_adapter,
)
from wardian.runtime.agents import AgentRegistry


def test_parse_both_target_types() -> None:
    parsed = parse_assignments(
        '{"curator": {"target_type": "temporary_provider", "provider": "codex",'
        ' "model": "gpt-5.2-codex", "effort": "high"},'
        ' "reviewer": {"target_type": "agent", "agent": "alice"}}'
    )
    assert parsed["curator"] == TemporaryProviderAssignment(
        target_type="temporary_provider", provider="codex", model="gpt-5.2-codex",
        effort="high")
    assert parsed["reviewer"] == AgentAssignment(target_type="agent", agent="alice")


@pytest.mark.parametrize(("text", "path", "words"), [
    ('{"curator": {"target_type": "temporary_provider"}}', "$.curator.provider", "Field required"),
    ('{"curator": {"target_type": "robot", "provider": "x"}}', "$.curator", "tag"),
    ('{"curator": {"target_type": "agent", "agent": "a", "model": "m"}}', "$.curator.model",
     "Extra inputs"),
    ('["x"]', "$", "JSON object"),
])
def test_parse_errors_name_the_json_path(text, path, words) -> None:
    with pytest.raises(ValidationError) as info:
        parse_assignments(text)
    assert info.value.path == path
    assert words in str(info.value)


def test_parse_bad_json() -> None:
    with pytest.raises(ValidationError, match="not valid JSON"):
        parse_assignments("{nope", origin="--assignments")


def test_resolve_agent_target_uses_the_agents_selection(fake_cli: FakeCli) -> None:
    AgentRegistry().add("alice", "codex", model="gpt-5.2-codex", effort="xhigh")
    assert resolve_assignment(AgentAssignment(target_type="agent", agent="alice")) == (
        "codex", "gpt-5.2-codex", "xhigh")
    with pytest.raises(NotFoundError):
        resolve_assignment(AgentAssignment(target_type="agent", agent="bob"))


def test_validate_assignments_against_catalog_and_roles(fake_cli: FakeCli) -> None:
    from wardian.providers.catalog import ModelCatalog

    parsed = parse_assignments({"curator": {"target_type": "temporary_provider",
                                            "provider": "codex", "model": "gpt-5.2-codex",
                                            "effort": "low"}})
    with pytest.raises(CatalogNotRefreshed):
        validate_assignments(parsed, roles=["curator"])
    ModelCatalog().refresh("codex", timeout_s=20)
    assert validate_assignments(parsed, roles=["curator"]) == {
        "curator": ("codex", "gpt-5.2-codex", "low")}
    with pytest.raises(ValidationError, match="no assignment for role"):
        validate_assignments(parsed, roles=["curator", "judge"])
    bad = parse_assignments({"curator": {"target_type": "temporary_provider",
                                         "provider": "codex", "model": "gpt-5.2-codex",
                                         "effort": "minimal"}})
    with pytest.raises(UnsupportedEffort) as info:
        validate_assignments(bad)
    assert info.value.path == "$.curator.effort"
    with pytest.raises(UnknownProvider):
        validate_assignments(parse_assignments(
            {"curator": {"target_type": "temporary_provider", "provider": "nope"}}))


class _Echo(ProviderAdapter):
    name = "echo-test"
    supports_effort = True

    class Options(ProviderOptions):
        loud: bool = False

    options_model = Options

    def run(self, request: ProviderRequest) -> ProviderResult:
        options = self.parse_options(request)
        text = request.prompt.upper() if getattr(options, "loud", False) else request.prompt
        return ProviderResult(text=text, model=request.model)


def test_registry_registers_and_unregisters() -> None:
    adapter = _Echo()
    register_adapter(adapter)
    try:
        assert "echo-test" in known_providers()
        assert get_adapter("echo-test") is adapter
        with pytest.raises(ValueError, match="already registered"):
            register_adapter(_Echo())
        req = ProviderRequest(provider="echo-test", prompt="hi", options={"loud": True})
        assert get_adapter("echo-test").run(req).text == "HI"
        with pytest.raises(ValidationError, match=r"options\.volume"):
            get_adapter("echo-test").run(req.model_copy(update={"options": {"volume": 3}}))
    finally:
        unregister_adapter("echo-test")
    assert "echo-test" not in known_providers()
    with pytest.raises(UnknownProvider):
        get_adapter("echo-test")


def test_builtins_are_registered_through_the_same_registry() -> None:
    assert known_providers() == ["anthropic", "builtin", "claude", "codex", "gemini",
                                 "openai", "opencode"]
    assert get_adapter("gemini").supports_effort is False
    assert get_adapter("codex").supports_output_schema is True


def test_builtin_answers_a_valid_curator_batch() -> None:
    from wardian.memory.batch import curator_output_schema

    request = ProviderRequest(provider="builtin", model="curator-rules", prompt="",
                              output_schema=curator_output_schema(),
                              payload={"messages": [], "records": [], "max_changes": 10,
                                       "include_tool_output": False, "workspace": "/tmp"})
    result = get_adapter("builtin").run(request)
    assert result.model == "curator-rules"
    assert isinstance(result.output, dict) and "operations" in result.output


def test_builtin_refuses_other_models_and_effort() -> None:
    with pytest.raises(ModelUnavailable):
        get_adapter("builtin").run(ProviderRequest(provider="builtin", model="gpt-5"))
    with pytest.raises(UnsupportedEffort):
        get_adapter("builtin").run(ProviderRequest(provider="builtin", effort="high"))


def test_builtin_output_is_validated() -> None:
    schema = {"type": "object", "required": ["verdict"]}
    with pytest.raises(OutputInvalid):
        get_adapter("builtin").run(ProviderRequest(provider="builtin", output_schema=schema))
