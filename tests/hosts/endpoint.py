"""A scripted model endpoint: real HTTP on 127.0.0.1 that speaks the three wire protocols the
host CLIs use, replays a script of model turns and records every request.

Protocols (one server, one base URL, told apart by path):

- Anthropic Messages (Claude Code): ``POST /v1/messages`` (SSE when ``"stream": true``:
  ``message_start``, ``content_block_start/delta/stop`` with ``text_delta`` and
  ``input_json_delta``, ``message_delta`` with the stop reason, ``message_stop``; a JSON
  message otherwise) and ``POST /v1/messages/count_tokens``.
- OpenAI Responses (Codex, opencode): ``POST /v1/responses`` or ``/responses`` (SSE:
  ``response.created``, ``response.output_item.added``, ``response.output_text.delta`` /
  ``response.function_call_arguments.delta``, ``response.output_item.done``,
  ``response.completed`` with usage).
- Gemini (Gemini CLI): ``POST /v1beta/models/<model>:streamGenerateContent`` (SSE, one
  ``GenerateContentResponse`` per event), ``:generateContent`` (JSON) and ``:countTokens``.
- Anthropic model listing: ``GET /v1/models`` answers `ScriptedEndpoint.models` (entries
  of the listing's ``data``, one page) when set, 404 otherwise.

A *script* is a list of `Reply` objects. Each **main** request (the host's agent loop) takes
the next reply; *side* requests (title generation, next-speaker checks, routing classifiers:
a request whose model is in `side_models`, a Gemini non-streaming ``generateContent``, or a
Responses request offering no tools) are answered without consuming the script (a short
text, or for a request carrying a JSON response schema, the smallest object that schema
allows). After the script is used up a main
request gets the text ``EXHAUSTED`` and is counted in `ScriptedEndpoint.overrun`.

A reply holds items: `Text`, `ToolCall` (a named tool, matched exactly or by name suffix
against the tools the request offers, so ``ToolCall("memory_recall", …, suffix=True)`` finds
Claude's ``mcp__wardian__memory_recall`` and Gemini's ``mcp_wardian_memory_recall``),
`Shell` (the host's own shell tool, whatever it is called and however its arguments are
shaped) and `Structured` (a JSON result: Claude Code's ``StructuredOutput`` tool call
when the request offers it, JSON text otherwise). `Reply(model=…)` reports another model
than the one requested (a scripted reroute): in the response body, and for Responses also
in the ``OpenAI-Model`` header, where the OpenAI API names the model that served a request
(Codex reads it there); `Failure(status, message)` answers with an HTTP error in the
protocol's error shape.

Every request is kept as a `Recorded` (protocol, path, parsed body, headers, main or side)
with protocol-neutral views: `model`, `system_text`, `user_texts`, `tool_names`,
`tool_results`, `reasoning` (Anthropic ``thinking``/``output_config``, Responses
``reasoning``, Gemini ``thinkingConfig``).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "Failure",
    "Recorded",
    "Reply",
    "ScriptedEndpoint",
    "Shell",
    "Structured",
    "Text",
    "ToolCall",
]

Protocol = Literal["anthropic", "responses", "gemini", "other"]

MAX_BODY = 64 * 1024 * 1024
"""The largest request body read, bytes (a host's request with a long transcript stays far
below; a larger one is answered 413)."""


# --- the script ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Assistant text."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool the request offers: `name` exactly, or the offered tool whose name
    ends with `name` when `suffix` (MCP tools are prefixed differently by each host)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    suffix: bool = False


@dataclass(frozen=True)
class Shell:
    """A call of the host's shell tool running `command` (Claude Code ``Bash``, Gemini
    ``run_shell_command``, Codex ``shell``/``shell_command``/``exec_command``, opencode
    ``bash``), its arguments shaped for that tool."""

    command: str


@dataclass(frozen=True)
class Structured:
    """A structured (JSON) result: a call of Claude Code's ``StructuredOutput`` tool when the
    request offers it, the JSON as the reply's text otherwise."""

    value: Any


Item = Text | ToolCall | Shell | Structured


@dataclass(frozen=True)
class Reply:
    """One model turn: its items in order, and the model id the response reports (None: the
    requested one)."""

    items: tuple[Item, ...]
    model: str | None = None

    def __init__(self, *items: Item | str, model: str | None = None) -> None:
        object.__setattr__(self, "items",
                           tuple(Text(i) if isinstance(i, str) else i for i in items))
        object.__setattr__(self, "model", model)


@dataclass(frozen=True)
class Failure:
    """An HTTP error reply in the protocol's error shape."""

    status: int
    message: str


Step = Reply | Failure


# --- recorded requests ----------------------------------------------------------------------


def _texts(content: Any) -> list[str]:
    """The text parts of an Anthropic/Responses content value (string or list of blocks)."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") in {"text", "input_text", "output_text"} and isinstance(
                        block.get("text"), str):
                    out.append(block["text"])
                elif isinstance(block.get("text"), str) and "type" not in block:
                    out.append(block["text"])  # a Gemini part
    return out


@dataclass
class Recorded:
    """One request the endpoint received."""

    protocol: Protocol
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    main: bool
    stream: bool

    @property
    def model(self) -> str | None:
        """The model id the host asked for (Gemini: from the URL path)."""
        if self.protocol == "gemini":
            m = re.search(r"/models/([^/:]+)", self.path)
            return m.group(1) if m else None
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def system_text(self) -> str:
        """Every system/developer instruction text, joined by newlines."""
        b = self.body if isinstance(self.body, dict) else {}
        parts: list[str] = []
        if self.protocol == "anthropic":
            parts += _texts(b.get("system"))
        elif self.protocol == "responses":
            if isinstance(b.get("instructions"), str):
                parts.append(b["instructions"])
            for item in b.get("input") or []:
                if isinstance(item, dict) and item.get("role") in {"system", "developer"}:
                    parts += _texts(item.get("content"))
        elif self.protocol == "gemini":
            si = b.get("systemInstruction") or b.get("system_instruction") or {}
            if isinstance(si, str):
                parts.append(si)
            elif isinstance(si, dict):
                parts += _texts(si.get("parts"))
        return "\n".join(parts)

    @property
    def user_texts(self) -> list[str]:
        """The texts of every user message, in order (tool results excluded)."""
        b = self.body if isinstance(self.body, dict) else {}
        out: list[str] = []
        if self.protocol == "anthropic":
            for m in b.get("messages") or []:
                if isinstance(m, dict) and m.get("role") == "user":
                    out += _texts(m.get("content"))
        elif self.protocol == "responses":
            items = b.get("input")
            if isinstance(items, str):
                return [items]
            for item in items or []:
                if isinstance(item, dict) and item.get("role") == "user":
                    out += _texts(item.get("content"))
        elif self.protocol == "gemini":
            for c in b.get("contents") or []:
                if isinstance(c, dict) and c.get("role", "user") == "user":
                    out += _texts(c.get("parts"))
        return out

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the request offers."""
        b = self.body if isinstance(self.body, dict) else {}
        names: list[str] = []
        for t in b.get("tools") or []:
            if not isinstance(t, dict):
                continue
            if self.protocol == "gemini":
                for d in t.get("functionDeclarations") or t.get("function_declarations") or []:
                    if isinstance(d, dict) and isinstance(d.get("name"), str):
                        names.append(d["name"])
            elif t.get("type") == "namespace":
                names += list(self._namespace_tools(t))
            elif isinstance(t.get("name"), str):
                names.append(t["name"])
            elif isinstance(t.get("function"), dict) and isinstance(
                    t["function"].get("name"), str):
                names.append(t["function"]["name"])
        return names

    @staticmethod
    def _namespace_tools(t: dict[str, Any]) -> dict[str, tuple[str, str]]:
        """A Responses ``namespace`` tool's functions (Codex offers a server's MCP tools as
        ``{"type": "namespace", "name": "mcp__wardian", "tools": [...]}``), each under its
        qualified name ``<namespace>__<function>`` mapped to (namespace, function)."""
        ns = t.get("name")
        if not isinstance(ns, str) or not isinstance(t.get("tools"), list):
            return {}
        sep = "" if ns.endswith("__") else "__"
        return {f"{ns}{sep}{f['name']}": (ns, f["name"]) for f in t["tools"]
                if isinstance(f, dict) and isinstance(f.get("name"), str)}

    @property
    def namespaces(self) -> dict[str, tuple[str, str]]:
        """The functions offered inside Responses namespace tools: qualified name →
        (namespace, function name); a call of one names both."""
        b = self.body if isinstance(self.body, dict) else {}
        out: dict[str, tuple[str, str]] = {}
        if self.protocol == "responses":
            for t in b.get("tools") or []:
                if isinstance(t, dict) and t.get("type") == "namespace":
                    out.update(self._namespace_tools(t))
        return out

    def tool(self, name: str) -> dict[str, Any] | None:
        """The offered tool definition called `name` (as the request carries it)."""
        b = self.body if isinstance(self.body, dict) else {}
        for t in b.get("tools") or []:
            if not isinstance(t, dict):
                continue
            if self.protocol == "gemini":
                for d in t.get("functionDeclarations") or t.get("function_declarations") or []:
                    if isinstance(d, dict) and d.get("name") == name:
                        return d
            elif t.get("name") == name:
                return t
        return None

    @property
    def tool_results(self) -> list[str]:
        """The texts of every tool result the host sent back, in order."""
        b = self.body if isinstance(self.body, dict) else {}
        out: list[str] = []
        if self.protocol == "anthropic":
            for m in b.get("messages") or []:
                content = m.get("content") if isinstance(m, dict) else None
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        c = block.get("content")
                        out.append("\n".join(_texts(c)) if not isinstance(c, str) else c)
        elif self.protocol == "responses":
            for item in b.get("input") or []:
                if isinstance(item, dict) and item.get("type") in {
                        "function_call_output", "custom_tool_call_output",
                        "mcp_tool_call_output"}:
                    o = item.get("output")
                    out.append(o if isinstance(o, str) else json.dumps(o))
        elif self.protocol == "gemini":
            for c in b.get("contents") or []:
                for p in (c.get("parts") or []) if isinstance(c, dict) else []:
                    if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
                        out.append(json.dumps(p["functionResponse"].get("response")))
        return out

    @property
    def reasoning(self) -> dict[str, Any]:
        """The effort/thinking settings the request carries, as sent (empty when none)."""
        b = self.body if isinstance(self.body, dict) else {}
        if self.protocol == "anthropic":
            return {k: b[k] for k in ("thinking", "output_config") if k in b}
        if self.protocol == "responses":
            return {"reasoning": b["reasoning"]} if "reasoning" in b else {}
        if self.protocol == "gemini":
            gc = b.get("generationConfig") or {}
            tc = gc.get("thinkingConfig") if isinstance(gc, dict) else None
            return {"thinkingConfig": tc} if tc is not None else {}
        return {}

    def text(self) -> str:
        """The whole request body as JSON text (for `in` checks across every field)."""
        return json.dumps(self.body)


# --- per-protocol rendering -----------------------------------------------------------------

SHELL_TOOLS = ("Bash", "run_shell_command", "shell_command", "exec_command", "shell", "bash")
"""Shell tool names, most specific first (Claude Code, Gemini CLI, Codex's variants,
opencode)."""


def _shell_arguments(tool: str, command: str) -> dict[str, Any]:
    if tool == "Bash" or tool == "bash":
        return {"command": command, "description": "Run the scripted command"}
    if tool == "shell":
        return {"command": ["bash", "-lc", command]}
    if tool == "exec_command":
        return {"cmd": command}
    return {"command": command}


def minimal_for_schema(schema: Any) -> Any:
    """The smallest value a JSON schema allows (first enum value, empty string, zero, the
    required properties filled in): the answer to a side request asking for JSON."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return minimal_for_schema(schema[key][0])
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {k: minimal_for_schema(props.get(k, {})) for k in required}
    if kind == "array":
        return []
    if kind in {"integer", "number"}:
        return 0
    if kind == "boolean":
        return False
    return ""


class _Resolved:
    """A reply's items resolved against the tools one request offers."""

    def __init__(self, reply: Reply, offered: list[str],
                 namespaces: dict[str, tuple[str, str]] | None = None) -> None:
        self.namespaces = namespaces or {}
        """Qualified name → (namespace, function) of the functions offered in namespaces."""
        self.parts: list[tuple[str, Any]] = []  # ("text", str) | ("call", (name, args))
        for item in reply.items:
            if isinstance(item, Text):
                self.parts.append(("text", item.text))
            elif isinstance(item, Structured):
                if "StructuredOutput" in offered:
                    self.parts.append(("call", ("StructuredOutput", item.value)))
                else:
                    self.parts.append(("text", json.dumps(item.value)))
            elif isinstance(item, Shell):
                tool = next((t for t in SHELL_TOOLS if t in offered), None)
                if tool is None:
                    raise ScriptError(f"Shell({item.command!r}): the request offers no shell "
                                      f"tool (offered: {offered})")
                self.parts.append(("call", (tool, _shell_arguments(tool, item.command))))
            else:
                name = item.name
                if item.suffix:
                    found = [t for t in offered if t == name or t.endswith(name)]
                    if not found:
                        raise ScriptError(f"ToolCall({name!r}, suffix=True): no offered tool "
                                          f"ends with it (offered: {offered})")
                    name = found[0]
                elif name not in offered:
                    raise ScriptError(f"ToolCall({name!r}): not offered ({offered})")
                self.parts.append(("call", (name, item.arguments)))

    @property
    def calls(self) -> bool:
        return any(kind == "call" for kind, _ in self.parts)


class ScriptError(Exception):
    """The script does not fit the request (a tool it names is not offered)."""


def _sse(events: Sequence[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


def anthropic_message(resolved: _Resolved, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for kind, value in resolved.parts:
        if kind == "text":
            content.append({"type": "text", "text": value})
        else:
            content.append({"type": "tool_use", "id": _id("toolu"), "name": value[0],
                            "input": value[1]})
    return {"id": _id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if resolved.calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def anthropic_stream(message: dict[str, Any]) -> bytes:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start",
                                                               "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {"type": "text",
                                                                      "text": ""}}))
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                  "input": {}}}))
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta",
                          "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"],
                                               "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def responses_stream(resolved: _Resolved, model: str) -> bytes:
    rid = _id("resp")
    created = 1_700_000_000
    base = {"id": rid, "object": "response", "created_at": created, "model": model,
            "status": "in_progress", "output": [], "usage": None, "error": None,
            "incomplete_details": None}
    seq = itertools.count()
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "sequence_number": next(seq),
                              "response": base}),
        ("response.in_progress", {"type": "response.in_progress",
                                  "sequence_number": next(seq), "response": base}),
    ]
    output: list[dict[str, Any]] = []
    for index, (kind, value) in enumerate(resolved.parts):
        if kind == "text":
            mid = _id("msg")
            item = {"id": mid, "type": "message", "status": "in_progress", "role": "assistant",
                    "content": []}
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            done_part = dict(part, text=value)
            events += [
                ("response.output_item.added", {"type": "response.output_item.added",
                                                "sequence_number": next(seq),
                                                "output_index": index, "item": item}),
                ("response.content_part.added", {"type": "response.content_part.added",
                                                 "sequence_number": next(seq),
                                                 "item_id": mid, "output_index": index,
                                                 "content_index": 0, "part": part}),
                ("response.output_text.delta", {"type": "response.output_text.delta",
                                                "sequence_number": next(seq),
                                                "item_id": mid, "output_index": index,
                                                "content_index": 0, "delta": value,
                                                "logprobs": []}),
                ("response.output_text.done", {"type": "response.output_text.done",
                                               "sequence_number": next(seq),
                                               "item_id": mid, "output_index": index,
                                               "content_index": 0, "text": value,
                                               "logprobs": []}),
                ("response.content_part.done", {"type": "response.content_part.done",
                                                "sequence_number": next(seq),
                                                "item_id": mid, "output_index": index,
                                                "content_index": 0, "part": done_part}),
            ]
            done = dict(item, status="completed", content=[done_part])
        else:
            fid, call_id = _id("fc"), _id("call")
            args = json.dumps(value[1])
            item = {"id": fid, "type": "function_call", "status": "in_progress",
                    "arguments": "", "call_id": call_id, "name": value[0]}
            if value[0] in resolved.namespaces:
                item["namespace"], item["name"] = resolved.namespaces[value[0]]
            events += [
                ("response.output_item.added", {"type": "response.output_item.added",
                                                "sequence_number": next(seq),
                                                "output_index": index, "item": item}),
                ("response.function_call_arguments.delta", {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq), "item_id": fid, "output_index": index,
                    "delta": args}),
                ("response.function_call_arguments.done", {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq), "item_id": fid, "output_index": index,
                    "arguments": args}),
            ]
            done = dict(item, status="completed", arguments=args)
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "sequence_number": next(seq),
                                                     "output_index": index, "item": done}))
        output.append(done)
    final = dict(base, status="completed", output=output,
                 usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 15})
    events.append(("response.completed", {"type": "response.completed",
                                          "sequence_number": next(seq), "response": final}))
    return _sse(events)


def gemini_response(resolved: _Resolved, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for kind, value in resolved.parts:
        if kind == "text":
            parts.append({"text": value})
        else:
            parts.append({"functionCall": {"name": value[0], "args": value[1]}})
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": model, "responseId": _id("gem")}


# --- the server -----------------------------------------------------------------------------


def _classify(path: str) -> tuple[Protocol, str]:
    """(protocol, operation) for a request path."""
    if path.rstrip("/").endswith("/messages/count_tokens"):
        return "anthropic", "count_tokens"
    if path.rstrip("/").endswith("/messages"):
        return "anthropic", "messages"
    if path.rstrip("/").endswith("/responses"):
        return "responses", "responses"
    m = re.search(r"/models/[^/:]+:(\w+)$", path)
    if m:
        return "gemini", m.group(1)
    return "other", ""


class ScriptedEndpoint:
    """The endpoint: `start()` binds 127.0.0.1 on a free port; `url` is its base URL.

    `script(*steps)` replaces the script; `requests` lists every request received (a
    copy), `main_requests` only the agent-loop ones. Thread-safe: the server answers each
    connection on its own thread.
    """

    def __init__(self, steps: Sequence[Step] = (), *,
                 side_models: Sequence[str] = ("wardian-side-model",),
                 is_main: Callable[[Recorded], bool] | None = None) -> None:
        self._lock = threading.Lock()
        self._steps: list[Step] = list(steps)
        self._requests: list[Recorded] = []
        self.side_models = set(side_models)
        self._is_main = is_main
        self.overrun = 0
        self.errors: list[str] = []
        self.models: list[dict[str, Any]] | None = None
        """``GET /v1/models`` entries (``{"id": …, "capabilities": …}``), or None: 404."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # script and records

    def script(self, *steps: Step) -> None:
        """Replace the remaining script with `steps`."""
        with self._lock:
            self._steps = list(steps)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def main_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.main]

    def _next(self) -> Step | None:
        with self._lock:
            if self._steps:
                return self._steps.pop(0)
            self.overrun += 1
            return None

    def classify_main(self, rec: Recorded, operation: str) -> bool:
        """Whether a request belongs to the host's agent loop (takes a script step)."""
        if self._is_main is not None:
            return self._is_main(rec)
        if rec.model in self.side_models:
            return False
        if rec.protocol == "gemini":
            return operation == "streamGenerateContent"
        if rec.protocol == "anthropic":
            return operation == "messages"
        return rec.protocol == "responses" and bool(rec.tool_names)

    # lifecycle

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        assert self._server is not None, "endpoint not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> ScriptedEndpoint:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                endpoint._handle(self, "GET")

            def do_POST(self) -> None:
                endpoint._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="scripted-endpoint", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # answering

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        split = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(h, 413, "application/json", b'{"error": "request too large"}')
            return
        raw = h.rfile.read(length) if length else b""
        if h.headers.get("Content-Encoding") in {"gzip", "zstd", "br"}:
            self.errors.append(f"compressed request body on {split.path}: not decoded")
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        protocol, operation = _classify(split.path)
        stream = (bool(body.get("stream")) if isinstance(body, dict) else False) or (
            operation == "streamGenerateContent") or (protocol == "responses" and not (
            isinstance(body, dict) and body.get("stream") is False))
        rec = Recorded(protocol=protocol, method=method, path=split.path, query=split.query,
                       headers={k.lower(): v for k, v in h.headers.items()}, body=body,
                       main=False, stream=stream)
        rec.main = method == "POST" and protocol != "other" and operation in {
            "messages", "responses", "streamGenerateContent", "generateContent"} and (
            self.classify_main(rec, operation))
        with self._lock:
            self._requests.append(rec)
        try:
            self._answer(h, rec, operation)
        except ScriptError as exc:
            self.errors.append(str(exc))
            self._send(h, 400, "application/json",
                       json.dumps({"error": {"message": f"scripted endpoint: {exc}"}}).encode())

    def _answer(self, h: BaseHTTPRequestHandler, rec: Recorded, operation: str) -> None:
        if rec.method == "GET" and rec.path.rstrip("/") == "/v1/models" and (
                self.models is not None):
            listing = {"data": [{"type": "model", **m} for m in self.models],
                       "has_more": False, "first_id": None, "last_id": None}
            self._send(h, 200, "application/json", json.dumps(listing).encode())
            return
        if rec.protocol == "other" or rec.method != "POST":
            self._send(h, 404, "application/json",
                       json.dumps({"error": {"message": f"no route {rec.path}"}}).encode())
            return
        if operation == "count_tokens":
            self._send(h, 200, "application/json", b'{"input_tokens": 10}')
            return
        if operation == "countTokens":
            self._send(h, 200, "application/json", b'{"totalTokens": 10}')
            return
        step: Step | None
        if rec.main:
            step = self._next()
            if step is None:
                step = Reply("EXHAUSTED")
        else:
            step = Reply(self._side_text(rec))
        if isinstance(step, Failure):
            self._send_failure(h, rec, step)
            return
        resolved = _Resolved(step, rec.tool_names, rec.namespaces)
        model = step.model or rec.model or "scripted-model"
        if rec.protocol == "anthropic":
            message = anthropic_message(resolved, model)
            if rec.stream:
                self._send(h, 200, "text/event-stream", anthropic_stream(message))
            else:
                self._send(h, 200, "application/json", json.dumps(message).encode())
        elif rec.protocol == "responses":
            # The OpenAI API names the model that served a response in the ``OpenAI-Model``
            # header too (Codex compares it with the one it asked for).
            self._send(h, 200, "text/event-stream", responses_stream(resolved, model),
                       headers={"OpenAI-Model": model})
        else:
            answer = gemini_response(resolved, model)
            if rec.stream:
                self._send(h, 200, "text/event-stream", _sse([(None, answer)]))
            else:
                self._send(h, 200, "application/json", json.dumps(answer).encode())

    @staticmethod
    def _side_text(rec: Recorded) -> str:
        b = rec.body if isinstance(rec.body, dict) else {}
        gc = b.get("generationConfig") if rec.protocol == "gemini" else None
        if isinstance(gc, dict):
            schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
            if schema is not None or gc.get("responseMimeType") == "application/json":
                return json.dumps(minimal_for_schema(schema))
        return "ok"

    def _send_failure(self, h: BaseHTTPRequestHandler, rec: Recorded, f: Failure) -> None:
        if rec.protocol == "anthropic":
            body: dict[str, Any] = {"type": "error", "error": {"type": "api_error",
                                                                 "message": f.message}}
        elif rec.protocol == "gemini":
            body = {"error": {"code": f.status, "message": f.message, "status": "INTERNAL"}}
        else:
            body = {"error": {"message": f.message, "type": "server_error", "code": None,
                              "param": None}}
        self._send(h, f.status, "application/json", json.dumps(body).encode())

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, ctype: str, data: bytes,
              headers: dict[str, str] | None = None) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            for name, value in (headers or {}).items():
                h.send_header(name, value)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the host went away (killed mid-request): nothing to answer


def iter_sse(data: bytes) -> Iterator[tuple[str | None, Any]]:
    """(event name, parsed data) per SSE event of `data` (for the endpoint's own tests)."""
    for block in data.decode().split("\n\n"):
        name, payload = None, None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                payload = json.loads(line[6:])
        if payload is not None:
            yield name, payload
