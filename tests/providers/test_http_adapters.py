"""openai and anthropic adapters against a real HTTP server on 127.0.0.1 (issue 5)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import invoke
from tests.providers.conftest import FakeHttp, HttpRecord
from wardian.config import SettingsStore, open_state_db
from wardian.providers.base import ProviderRequest
from wardian.providers.errors import (
    EffortLowered,
    EffortRejected,
    MissingCredentials,
    ModelMismatch,
    ModelUnavailable,
    ProviderError,
    ProviderTimeout,
    QuotaExhausted,
    RateLimited,
)
from wardian.providers.registry import get_adapter

ANSWER = '{"operations": []}'
SCHEMA = {"type": "object", "required": ["operations"],
          "properties": {"operations": {"type": "array"}}}
MODELS = {"object": "list", "data": [
    {"id": "gpt-5.2", "object": "model", "created": 1765000000, "owned_by": "openai"},
    {"id": "qwen3:8b", "object": "model", "created": 1765000000, "owned_by": "library"},
    {"id": "gpt-4o-mini", "object": "model", "created": 1765000000, "owned_by": "openai"},
]}


def chat_answer(model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1765000000,
            "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": ANSWER}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37}}


def responses_answer(model: str) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1765000000,
            "status": "completed", "model": model,
            "reasoning": {"effort": "high", "summary": None},
            "output": [{"type": "reasoning", "id": "rs_1", "summary": []},
                       {"type": "message", "id": "msg_1", "status": "completed",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": ANSWER,
                                     "annotations": []}]}],
            "usage": {"input_tokens": 30, "output_tokens": 7, "total_tokens": 37}}


@pytest.fixture
def openai_server(fake_http: FakeHttp, monkeypatch: pytest.MonkeyPatch) -> FakeHttp:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    SettingsStore(open_state_db()).set("providers.openai.base_url", fake_http.url + "/v1")
    fake_http.routes["GET /v1/models"] = (200, MODELS)
    return fake_http


def oreq(**kw: Any) -> ProviderRequest:
    base: dict[str, Any] = {"provider": "openai", "model": "qwen3:8b", "effort": "high",
                               "system": "You curate.", "prompt": "Curate this.",
                               "output_schema": SCHEMA, "timeout_s": 10}
    return ProviderRequest(**(base | kw))


def test_openai_chat_completions_on_a_local_server(openai_server: FakeHttp) -> None:
    openai_server.routes["POST /v1/chat/completions"] = (200, chat_answer("qwen3:8b"))
    result = get_adapter("openai").run(oreq())
    assert result.output == {"operations": []} and result.model == "qwen3:8b"
    listing, call = openai_server.requests
    assert (listing.method, listing.path) == ("GET", "/v1/models")
    assert call.body == {
        "model": "qwen3:8b",
        "messages": [{"role": "system", "content": "You curate."},
                     {"role": "user", "content": "Curate this."}],
        "reasoning_effort": "high",
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "output", "schema": SCHEMA, "strict": False}},
    }
    assert "authorization" not in call.headers, "local servers get no key unless one is set"


def test_openai_responses_api_with_key_and_dated_snapshot(openai_server: FakeHttp,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_server.routes["POST /v1/responses"] = (200, responses_answer("gpt-5.2-2025-12-11"))
    result = get_adapter("openai").run(oreq(model="gpt-5.2", options={"api": "responses"}))
    assert result.model == "gpt-5.2-2025-12-11" and result.output == {"operations": []}
    assert result.effort == "high", "as response.reasoning.effort reported it"
    call = openai_server.requests[-1]
    assert call.headers["authorization"] == "Bearer sk-test"
    assert call.body["reasoning"] == {"effort": "high"}
    assert call.body["instructions"] == "You curate."
    assert call.body["text"]["format"]["schema"] == SCHEMA


def test_openai_responses_effort_other_than_assigned_fails(openai_server: FakeHttp) -> None:
    answer = responses_answer("gpt-5.2") | {"reasoning": {"effort": "medium", "summary": None}}
    openai_server.routes["POST /v1/responses"] = (200, answer)
    with pytest.raises(EffortLowered) as info:
        get_adapter("openai").run(oreq(model="gpt-5.2", options={"api": "responses"}))
    assert "assigned model gpt-5.2 effort high" in str(info.value)
    assert "observed model gpt-5.2 effort medium" in str(info.value)


def test_openai_response_naming_another_model_fails(openai_server: FakeHttp) -> None:
    openai_server.routes["POST /v1/chat/completions"] = (200, chat_answer("gpt-4o-mini"))
    with pytest.raises(ModelMismatch) as info:
        get_adapter("openai").run(oreq())
    assert "assigned model qwen3:8b effort high, observed model gpt-4o-mini" in str(info.value)


def test_openai_unlisted_model_fails_before_the_call(openai_server: FakeHttp) -> None:
    with pytest.raises(ModelUnavailable, match="does not list 'llama3:70b'"):
        get_adapter("openai").run(oreq(model="llama3:70b"))
    assert [r.path for r in openai_server.requests] == ["/v1/models"]


@pytest.mark.parametrize(("status", "error", "exc"), [
    (429, {"message": "You exceeded your current quota, please check your plan and billing "
                      "details.", "type": "insufficient_quota", "code": "insufficient_quota"},
     QuotaExhausted),
    (429, {"message": "Rate limit reached for gpt-5.2", "type": "requests",
           "code": "rate_limit_exceeded"}, RateLimited),
    (401, {"message": "Incorrect API key provided", "type": "invalid_request_error",
           "code": "invalid_api_key"}, MissingCredentials),
    (404, {"message": "The model `qwen3:8b` does not exist", "type": "invalid_request_error",
           "code": "model_not_found"}, ModelUnavailable),
    (400, {"message": "Unsupported value: 'high' is not supported with this model.",
           "type": "invalid_request_error", "param": "reasoning.effort",
           "code": "unsupported_value"}, EffortRejected),
])
def test_openai_errors_map_to_their_own_class(openai_server: FakeHttp, status: int,
                                              error: dict[str, str],
                                              exc: type[ProviderError]) -> None:
    openai_server.routes["POST /v1/chat/completions"] = (status, {"error": error})
    with pytest.raises(exc):
        get_adapter("openai").run(oreq())
    assert len(openai_server.requests) == 2, "nothing is retried"


def test_openai_official_endpoint_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingCredentials, match="OPENAI_API_KEY"):
        get_adapter("openai").run(oreq(model="gpt-5.2"))


def test_openai_timeout(openai_server: FakeHttp) -> None:
    release = threading.Event()

    def slow(rec: HttpRecord) -> tuple[int, dict[str, Any]]:
        release.wait(10)
        return 200, chat_answer("qwen3:8b")

    openai_server.routes["POST /v1/chat/completions"] = slow
    try:
        with pytest.raises(ProviderTimeout):
            get_adapter("openai").run(oreq(timeout_s=0.5))
    finally:
        release.set()


def test_openai_discovery_lists_models_with_effort_table(openai_server: FakeHttp) -> None:
    models = {m.id: m for m in get_adapter("openai").discover_models(timeout_s=5)}
    assert set(models) == {"gpt-5.2", "qwen3:8b", "gpt-4o-mini"}
    assert models["gpt-5.2"].efforts == ["none", "low", "medium", "high", "xhigh"]
    assert models["qwen3:8b"].efforts == [] and models["gpt-4o-mini"].efforts == []


# --- anthropic ---------------------------------------------------------------------------


def message_answer(model: str) -> dict[str, Any]:
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 40, "output_tokens": 9}}


@pytest.fixture
def anthropic_server(fake_http: FakeHttp, monkeypatch: pytest.MonkeyPatch) -> FakeHttp:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    SettingsStore(open_state_db()).set("providers.anthropic.base_url", fake_http.url)
    return fake_http


def areq(**kw: Any) -> ProviderRequest:
    base: dict[str, Any] = {"provider": "anthropic", "model": "claude-opus-5",
                               "effort": "xhigh", "system": "You curate.",
                               "prompt": "Curate this.", "output_schema": SCHEMA,
                               "timeout_s": 10}
    return ProviderRequest(**(base | kw))


def test_anthropic_messages_with_effort(anthropic_server: FakeHttp) -> None:
    anthropic_server.routes["POST /v1/messages"] = (200, message_answer("claude-opus-5"))
    result = get_adapter("anthropic").run(areq())
    assert result.output == {"operations": []} and result.model == "claude-opus-5"
    call = anthropic_server.requests[0]
    assert call.headers["x-api-key"] == "sk-ant-test"
    assert call.headers["anthropic-version"] == "2023-06-01"
    assert call.body == {
        "model": "claude-opus-5", "max_tokens": 16000, "system": "You curate.",
        "messages": [{"role": "user", "content": "Curate this."}],
        "output_config": {"effort": "xhigh",
                          "format": {"type": "json_schema", "schema": SCHEMA}},
    }


def test_anthropic_response_naming_another_model_fails(anthropic_server: FakeHttp) -> None:
    anthropic_server.routes["POST /v1/messages"] = (200, message_answer("claude-sonnet-4-6"))
    with pytest.raises(ModelMismatch, match="observed model claude-sonnet-4-6"):
        get_adapter("anthropic").run(areq())


@pytest.mark.parametrize(("status", "error", "exc"), [
    (404, {"type": "not_found_error", "message": "model: claude-opus-9"}, ModelUnavailable),
    (401, {"type": "authentication_error", "message": "invalid x-api-key"}, MissingCredentials),
    (429, {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your "
                                                  "per-minute rate limit"}, RateLimited),
    (400, {"type": "invalid_request_error", "message": "Your credit balance is too low to "
                                                       "access the Anthropic API."},
     QuotaExhausted),
    (529, {"type": "overloaded_error", "message": "Overloaded"}, RateLimited),
])
def test_anthropic_errors_map_to_their_own_class(anthropic_server: FakeHttp, status: int,
                                                 error: dict[str, str],
                                                 exc: type[ProviderError]) -> None:
    anthropic_server.routes["POST /v1/messages"] = (status, {"type": "error", "error": error})
    with pytest.raises(exc):
        get_adapter("anthropic").run(areq())
    assert len(anthropic_server.requests) == 1


def test_anthropic_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingCredentials, match="ANTHROPIC_API_KEY"):
        get_adapter("anthropic").run(areq())


def test_anthropic_discovery_pages_and_effort_capabilities(anthropic_server: FakeHttp) -> None:
    def models(rec: HttpRecord) -> tuple[int, dict[str, Any]]:
        if "after_id" not in rec.path:
            return 200, {"data": [{"type": "model", "id": "claude-opus-5",
                                   "display_name": "Claude Opus 5",
                                   "capabilities": {"effort": {
                                       "low": {"supported": True}, "high": {"supported": True},
                                       "max": {"supported": True},
                                       "xhigh": {"supported": True},
                                       "medium": {"supported": True}}}}],
                         "has_more": True, "first_id": "claude-opus-5",
                         "last_id": "claude-opus-5"}
        return 200, {"data": [{"type": "model", "id": "claude-haiku-4-5",
                               "display_name": "Claude Haiku 4.5",
                               "capabilities": {"effort": {"low": {"supported": False}}}}],
                     "has_more": False, "first_id": "claude-haiku-4-5",
                     "last_id": "claude-haiku-4-5"}

    anthropic_server.routes["GET /v1/models"] = models
    found = get_adapter("anthropic").discover_models(timeout_s=5)
    assert [(m.id, m.efforts) for m in found] == [
        ("claude-opus-5", ["low", "medium", "high", "xhigh", "max"]),
        ("claude-haiku-4-5", []),
    ]


def test_a_wrong_base_url_is_not_reported_as_a_missing_model(cli: CliRunner,
                                                             fake_http: FakeHttp) -> None:
    # no /v1: every path 404s
    SettingsStore(open_state_db()).set("providers.openai.base_url", fake_http.url)
    result = invoke(cli, "agent", "models", "--provider", "openai", "--refresh")
    assert result.exit_code == 1
    assert "/models does not exist (HTTP 404)" in result.stderr
    assert "providers.openai.base_url" in result.stderr
    assert "model is not available" not in result.stderr


def test_openai_timeout_covers_listing_and_answer_together(openai_server: FakeHttp) -> None:
    """timeout_s is the limit for the whole call, not for each HTTP request in it."""
    latency = threading.Event()  # never set: each route answers after its wait

    def slow_models(rec: HttpRecord) -> tuple[int, dict[str, Any]]:
        latency.wait(0.5)
        return 200, MODELS

    def slow_answer(rec: HttpRecord) -> tuple[int, dict[str, Any]]:
        latency.wait(0.5)
        return 200, chat_answer("qwen3:8b")

    openai_server.routes["GET /v1/models"] = slow_models
    openai_server.routes["POST /v1/chat/completions"] = slow_answer
    with pytest.raises(ProviderTimeout):
        get_adapter("openai").run(oreq(timeout_s=0.8))
