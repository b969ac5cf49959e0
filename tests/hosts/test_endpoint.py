"""The scripted endpoint on its own, over real HTTP (httpx): each protocol's stream shape,
script order, side requests, tool matching and failures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hosts.endpoint import (
    Failure,
    Reply,
    ScriptedEndpoint,
    Shell,
    Structured,
    ToolCall,
    iter_sse,
    minimal_for_schema,
)


@pytest.fixture
def ep() -> Iterator[ScriptedEndpoint]:
    with ScriptedEndpoint() as e:
        yield e


def post(ep: ScriptedEndpoint, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(ep.url + path, json=body, timeout=30)


def test_anthropic_stream_replays_text_then_tool_call(ep: ScriptedEndpoint) -> None:
    ep.script(Reply("thinking it over", ToolCall("mcp__w__memory_recall", {"query": "ruff"},
                                                 suffix=False)),
              Reply("done"))
    body = {"model": "claude-x", "stream": True, "system": [{"type": "text", "text": "SYS"}],
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": "mcp__w__memory_recall", "input_schema": {}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]}
    r = post(ep, "/v1/messages", body)
    assert r.headers["content-type"] == "text/event-stream"
    events = list(iter_sse(r.content))
    assert events[0][0] == "message_start"
    assert events[-1][0] == "message_stop"
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert deltas[0] == {"type": "text_delta", "text": "thinking it over"}
    assert deltas[1]["type"] == "input_json_delta"
    assert '"ruff"' in deltas[1]["partial_json"]
    stop = next(d for n, d in events if n == "message_delta")
    assert stop["delta"]["stop_reason"] == "tool_use"
    rec = ep.requests[0]
    assert (rec.protocol, rec.model, rec.system_text, rec.user_texts) == (
        "anthropic", "claude-x", "SYS", ["hello"])
    assert rec.reasoning == {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert rec.tool_names == ["mcp__w__memory_recall"]
    assert ep.remaining == 1


def test_side_model_requests_leave_the_script_alone(ep: ScriptedEndpoint) -> None:
    ep.script(Reply("main answer"))
    side = post(ep, "/v1/messages", {"model": "wardian-side-model", "messages": [
        {"role": "user", "content": "title please"}]})
    assert side.json()["content"] == [{"type": "text", "text": "ok"}]
    main = post(ep, "/v1/messages", {"model": "m", "messages": []})
    assert main.json()["content"][0]["text"] == "main answer"
    assert [r.main for r in ep.requests] == [False, True]
    post(ep, "/v1/messages", {"model": "m", "messages": []})
    assert ep.overrun == 1


def test_responses_stream_shapes_shell_call_for_the_offered_tool(ep: ScriptedEndpoint) -> None:
    ep.script(Reply(Shell("echo hi")), Reply("bye", model="rerouted-model"))
    body = {"model": "gpt-x", "instructions": "BE BRIEF", "reasoning": {"effort": "high"},
            "tools": [{"type": "function", "name": "exec_command"}],
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "run it"}]}]}
    first = post(ep, "/v1/responses", body)
    assert first.headers["openai-model"] == "gpt-x"
    events = list(iter_sse(first.content))
    assert events[0][0] == "response.created"
    done = [d["item"] for n, d in events if n == "response.output_item.done"]
    assert done[0]["type"] == "function_call"
    assert done[0]["name"] == "exec_command"
    assert done[0]["arguments"] == '{"cmd": "echo hi"}'
    assert events[-1][1]["response"]["usage"]["total_tokens"] == 15
    rerouted = post(ep, "/responses", body)
    assert rerouted.headers["openai-model"] == "rerouted-model"  # as the OpenAI API says it
    second = list(iter_sse(rerouted.content))
    assert second[-1][1]["response"]["model"] == "rerouted-model"
    rec = ep.requests[0]
    assert (rec.model, rec.system_text, rec.user_texts, rec.reasoning) == (
        "gpt-x", "BE BRIEF", ["run it"], {"reasoning": {"effort": "high"}})


def test_gemini_stream_and_json_side_request(ep: ScriptedEndpoint) -> None:
    ep.script(Reply(Shell("ls")))
    tools = [{"functionDeclarations": [{"name": "run_shell_command"}]}]
    body = {"contents": [{"role": "user", "parts": [{"text": "list"}]}], "tools": tools,
            "systemInstruction": {"parts": [{"text": "GEM SYS"}]},
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 128}}}
    r = post(ep, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body)
    (_, chunk), = list(iter_sse(r.content))
    assert chunk["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]
    schema = {"type": "object", "properties": {"next_speaker": {"enum": ["user", "model"]},
                                               "reasoning": {"type": "string"}},
              "required": ["next_speaker", "reasoning"]}
    side = post(ep, "/v1beta/models/gemini-2.5-flash:generateContent",
                {"contents": [], "generationConfig": {"responseJsonSchema": schema}})
    text = side.json()["candidates"][0]["content"]["parts"][0]["text"]
    assert text == '{"next_speaker": "user", "reasoning": ""}'
    main = ep.requests[0]
    assert (main.model, main.system_text, main.user_texts, main.tool_names) == (
        "gemini-2.5-pro", "GEM SYS", ["list"], ["run_shell_command"])
    assert main.reasoning == {"thinkingConfig": {"thinkingBudget": 128}}
    assert [r.main for r in ep.requests] == [True, False]


def test_structured_output_uses_claudes_tool_when_offered(ep: ScriptedEndpoint) -> None:
    ep.script(Reply(Structured({"records": []})), Reply(Structured({"records": [1]})))
    with_tool = post(ep, "/v1/messages", {"model": "m", "messages": [],
                                          "tools": [{"name": "StructuredOutput"}]})
    assert with_tool.json()["content"][0]["name"] == "StructuredOutput"
    assert with_tool.json()["content"][0]["input"] == {"records": []}
    plain = post(ep, "/v1/messages", {"model": "m", "messages": []})
    assert plain.json()["content"][0]["text"] == '{"records": [1]}'


def test_failure_and_unfit_script_are_errors(ep: ScriptedEndpoint) -> None:
    ep.script(Failure(529, "overloaded"), Reply(ToolCall("memory_save", suffix=True)))
    r = post(ep, "/v1/messages", {"model": "m", "messages": []})
    assert r.status_code == 529
    assert r.json()["error"]["message"] == "overloaded"
    r = post(ep, "/v1/messages", {"model": "m", "messages": [], "tools": [{"name": "Bash"}]})
    assert r.status_code == 400
    assert ep.errors and "memory_save" in ep.errors[0]
    assert post(ep, "/nowhere", {}).status_code == 404


def test_minimal_for_schema() -> None:
    assert minimal_for_schema({"type": "array"}) == []
    assert minimal_for_schema({"anyOf": [{"type": "integer"}, {"type": "string"}]}) == 0
    assert minimal_for_schema({"type": "object", "properties": {"a": {"type": "boolean"}}}) == {
        "a": False}
