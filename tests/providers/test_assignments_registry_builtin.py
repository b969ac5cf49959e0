"""Assignments parsing/resolution, the adapter registry, and the builtin adapter."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.providers.conftest import FakeCli
from wardian.config import open_state_db
from wardian.engine.assignments import agent_selection
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
    UnknownModel,
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


KNOWN = "anthropic, builtin, claude, codex, gemini, openai, opencode"


@pytest.mark.parametrize(("text", "message"), [
    ('{"curator": {"target_type": "person"}}',
     "--assignments: curator.target_type: expected 'temporary_provider' or 'agent', "
     "found 'person'"),
    ('{"curator": {"target_type": 5, "provider": "x"}}',
     "--assignments: curator.target_type: expected 'temporary_provider' or 'agent', found 5"),
    ('{"curator": {"provider": "builtin"}}',
     "--assignments: curator.target_type: missing; expected 'temporary_provider' or 'agent' "
     '(e.g. {"curator": {"target_type": "temporary_provider", "provider": "<provider>"}})'),
    ('{"curator": {"target_type": "temporary_provider"}}',
     "--assignments: curator.provider: missing; a temporary_provider assignment needs "
     f"provider (known providers: {KNOWN})"),
    ('{"curator": {"target_type": "agent"}}',
     "--assignments: curator.agent: missing; an agent assignment needs agent "
     "(an agent name or id; see `wardian agent list`)"),
    ('{"curator": {"target_type": "temporary_provider", "provider": "x", "modle": "m"}}',
     "--assignments: curator.modle: unknown field; a temporary_provider assignment takes "
     "target_type, provider, model, effort (did you mean 'model'?)"),
    ('{"curator": {"target_type": "agent", "agent": "a", "model": "m"}}',
     "--assignments: curator.model: unknown field; an agent assignment takes target_type, "
     "agent"),
    ('{"curator": {"target_type": "temporary_provider", "provider": 7}}',
     "--assignments: curator.provider: expected a string, found 7"),
    ('{"curator": {"target_type": "temporary_provider", "provider": ""}}',
     "--assignments: curator.provider: must not be empty"),
    ('{"curator": "builtin"}',
     "--assignments: curator: expected an object with a target_type, found 'builtin' "
     '(e.g. {"curator": {"target_type": "temporary_provider", "provider": "<provider>"}})'),
    ('["x"]',
     '--assignments: expected a JSON object of role -> assignment, found ["x"] '
     '(e.g. {"<role>": {"target_type": "temporary_provider", "provider": "<provider>"}})'),
    ('{\n  "curator": }',
     "--assignments: not valid JSON: Expecting value at line 2, column 14 "
     '(expected {"<role>": {"target_type": "temporary_provider", "provider": "<provider>"}})'),
])
def test_parse_errors_start_with_the_role_and_use_our_words(text: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_assignments(text, origin="--assignments")
    assert str(info.value) == message
    assert info.value.exit_code == 2
    assert "Input" not in message and "pydantic" not in str(info.value)


def test_parse_errors_carry_the_field_path() -> None:
    with pytest.raises(ValidationError) as info:
        parse_assignments({"curator": {"target_type": "temporary_provider"}})
    assert info.value.path == "curator.provider" and info.value.source is None
    assert str(info.value).startswith("curator.provider: missing")


def test_resolve_agent_target_uses_the_agents_selection(fake_cli: FakeCli) -> None:
    AgentRegistry(open_state_db()).add("alice", "codex", model="gpt-5.2-codex", effort="xhigh")
    assert resolve_assignment(AgentAssignment(target_type="agent", agent="alice"),
                              agents=agent_selection) == (
        "codex", "gpt-5.2-codex", "xhigh")
    with pytest.raises(NotFoundError):
        resolve_assignment(AgentAssignment(target_type="agent", agent="bob"),
                           agents=agent_selection)
    with pytest.raises(ValueError, match="agents="):  # providers never reach the runtime
        resolve_assignment(AgentAssignment(target_type="agent", agent="alice"))


def _one(provider: str, **fields: str) -> dict[str, Any]:
    return parse_assignments({"curator": {"target_type": "temporary_provider",
                                          "provider": provider, **fields}})


def test_validate_assignments_against_catalog_and_roles(fake_cli: FakeCli) -> None:
    from wardian.providers.catalog import ModelCatalog

    parsed = _one("codex", model="gpt-5.2-codex", effort="low")
    with pytest.raises(ValidationError) as never:
        validate_assignments(parsed, roles=["curator"], origin="--assignments")
    assert str(never.value) == (
        "--assignments: curator: the model catalog of codex was never refreshed "
        "(run `wardian agent models --provider codex --refresh`)")
    assert isinstance(never.value.__cause__, CatalogNotRefreshed)
    ModelCatalog(open_state_db()).refresh("codex", timeout_s=20)
    assert validate_assignments(parsed, roles=["curator"]) == {
        "curator": ("codex", "gpt-5.2-codex", "low")}
    with pytest.raises(ValidationError, match="no assignment for role"):
        validate_assignments(parsed, roles=["curator", "judge"])
    with pytest.raises(ValidationError) as effort:
        validate_assignments(_one("codex", model="gpt-5.2-codex", effort="minimal"))
    assert effort.value.path == "curator" and isinstance(effort.value.__cause__,
                                                         UnsupportedEffort)
    assert str(effort.value).startswith(
        "curator: effort 'minimal' is not supported by codex model gpt-5.2-codex (supported: ")
    with pytest.raises(ValidationError) as model:
        validate_assignments(_one("codex", model="gpt-9"), origin="--assignments")
    assert str(model.value) == (
        "--assignments: curator: model 'gpt-9' is not in the codex catalog (known: "
        "gpt-5.2-codex, gpt-5.1-codex-mini) (pick one listed by "
        "`wardian agent models --provider codex --refresh`)")
    assert isinstance(model.value.__cause__, UnknownModel)


def test_unknown_provider_names_the_role_and_the_known_ones() -> None:
    with pytest.raises(ValidationError) as info:
        validate_assignments(_one("codx"), origin="--assignments")
    assert str(info.value) == ("--assignments: curator: provider 'codx' is unknown "
                               f"(known: {KNOWN}; did you mean 'codex'?)")
    assert info.value.exit_code == 2 and isinstance(info.value.__cause__, UnknownProvider)


def test_agent_target_errors_name_the_role_and_the_agent() -> None:
    AgentRegistry(open_state_db()).add("alice", "codex", model="gpt-5.2-codex")
    with pytest.raises(ValidationError) as never:
        validate_assignments(parse_assignments(
            {"judge": {"target_type": "agent", "agent": "alice"}}), origin="--assignments",
            agents=agent_selection)
    assert str(never.value).startswith(
        "--assignments: judge: agent 'alice': the model catalog of codex was never refreshed")
    ghost = parse_assignments({"judge": {"target_type": "agent", "agent": "ghost"}})
    with pytest.raises(NotFoundError) as missing:
        validate_assignments(ghost, origin="--assignments", check_catalog=False,
                             agents=agent_selection)
    assert str(missing.value) == ("--assignments: judge: no agent named or with id 'ghost' "
                                  "(see `wardian agent list`)")
    assert missing.value.exit_code == 1


class _Echo(ProviderAdapter):
    name = "echo-test"
    supports_effort = True

    class Options(ProviderOptions):
        loud: bool = False

    options_model = Options

    def run(
        self, request: ProviderRequest, *, cancel: threading.Event | None = None
    ) -> ProviderResult:
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
                              output_ref="wardian:curator-batch",
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
        get_adapter("builtin").run(ProviderRequest(provider="builtin", output_schema=schema,
                                                   output_ref="wardian:curator-batch"))


def test_builtin_refuses_an_output_it_does_not_implement() -> None:
    from wardian.providers.errors import OutputUnsupported

    schema = {"type": "object", "required": ["verdict"]}
    for ref in (None, "team:verdict"):
        with pytest.raises(OutputUnsupported) as caught:
            get_adapter("builtin").run(ProviderRequest(provider="builtin",
                                                       output_schema=schema, output_ref=ref))
        assert "wardian:curator-batch" in str(caught.value)
        assert caught.value.exit_code == 2


def test_a_step_refuses_an_effort_the_provider_does_not_send_as_it_is(
        fake_cli: FakeCli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex lists ``ultra`` but sends a lower reasoning effort for it: an agent may keep it
    for its own sessions, a role step (temporary provider or agent target) refuses it."""
    from wardian.providers.base import ModelInfo
    from wardian.providers.catalog import ModelCatalog
    from wardian.providers.codex import CodexAdapter

    efforts = ["low", "medium", "high", "xhigh", "max", "ultra"]
    monkeypatch.setattr(CodexAdapter, "discover_models",
                        lambda self, timeout_s=30.0: [ModelInfo(id="gpt-6.2-sol",
                                                                efforts=efforts)])
    catalog = ModelCatalog(open_state_db())
    catalog.refresh("codex")
    assert catalog.validate_selection("codex", "gpt-6.2-sol", "ultra") is not None
    AgentRegistry(open_state_db()).add("alice", "codex", model="gpt-6.2-sol", effort="ultra")
    agent_target = parse_assignments({"curator": {"target_type": "agent", "agent": "alice"}})
    for parsed, who in ((_one("codex", model="gpt-6.2-sol", effort="ultra"), ""),
                        (agent_target, "agent 'alice': ")):
        with pytest.raises(ValidationError) as refused:
            validate_assignments(parsed, agents=agent_selection)
        assert isinstance(refused.value.__cause__, UnsupportedEffort)
        assert str(refused.value).startswith(
            f"curator: {who}effort 'ultra' cannot be passed to codex model gpt-6.2-sol for a "
            "step: Codex sends a lower reasoning effort for ultra"), str(refused.value)
        assert refused.value.hint and refused.value.hint.endswith(
            ": low, medium, high, xhigh, max")
    assert validate_assignments(_one("codex", model="gpt-6.2-sol", effort="max")) == {
        "curator": ("codex", "gpt-6.2-sol", "max")}
