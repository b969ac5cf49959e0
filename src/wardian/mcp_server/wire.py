"""Screening of one line of the MCP wire before the SDK reads it.

JSON-RPC 2.0 answers every request that carries an id; the SDK's stdio transport answers
nothing for a line it cannot parse into a message (it logs it and goes on), so a host that
sent such a request waits forever. `screen` decides, per line, what the server does:

- hand the line on to the SDK unchanged (a well-formed JSON-RPC 2.0 message);
- answer with a JSON-RPC error (`Refusal`): ``-32700`` (parse error) for text that is not
  JSON, ``-32600`` (invalid request) for JSON that is not a JSON-RPC 2.0 request, a line
  that is not valid UTF-8 and a line over `MAX_LINE_BYTES`, ``-32602`` (invalid params)
  for ``params`` that are not an object; the error carries the request's id when the
  request has a valid one (an integer or a string), else ``null``;
- drop it without an answer: a blank line, and a malformed notification or response (no
  id to answer; JSON-RPC never answers a notification).

A line that is not valid UTF-8 is refused, never read with U+FFFD in place of the bytes:
a save would otherwise store text the caller never sent. Batches (a JSON array) are not
part of MCP since protocol version 2025-06-18 and are refused as invalid requests.

Spec: "Save and inspect memory" (the MCP tools); JSON-RPC 2.0 section 5.1 (error codes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)

__all__ = ["MAX_LINE_BYTES", "Refusal", "screen", "too_long"]

MAX_LINE_BYTES = 256 * 1024 * 1024
"""Longest request line read (bytes, newline included): far above any tool call (a save
is at most a few hundred KB); a longer line is refused and skipped to its end."""

RequestId = int | str


@dataclass(frozen=True)
class Refusal:
    """A JSON-RPC error answer for a line the server will not serve.

    Attributes:
        id: the request's id, or None where the line carries no valid one.
        code: the JSON-RPC error code (``-32700``, ``-32600`` or ``-32602``).
        message: one line saying what is wrong with the request and what is expected.
    """

    id: RequestId | None
    code: int
    message: str

    def answer(self) -> JSONRPCError:
        """The error as the message the SDK's writer sends."""
        return JSONRPCError(jsonrpc="2.0", id=self.id,
                            error=ErrorData(code=self.code, message=self.message))


def too_long() -> Refusal:
    """The refusal of a line over `MAX_LINE_BYTES` (its id is not read)."""
    return Refusal(None, INVALID_REQUEST,
                   f"request line longer than {MAX_LINE_BYTES} bytes; it was skipped")


def screen(line: bytes) -> str | Refusal | None:
    """What to do with one line read from the wire (newline included or not).

    Returns:
        The line as text to hand to the SDK; a `Refusal` to answer instead; or None to
        drop the line without an answer.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"byte 0x{line[exc.start]:02x} at offset {exc.start}"
        doc = _json_or_none(line.decode("utf-8", errors="replace"))
        if isinstance(doc, dict) and "id" not in doc and "method" in doc:
            return None  # a notification: never answered
        request_id = _valid_id(doc.get("id")) if isinstance(doc, dict) else None
        return Refusal(request_id, INVALID_REQUEST,
                       f"request is not valid UTF-8 ({where}); send the text as UTF-8")
    if not text.strip():
        return None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        return Refusal(None, PARSE_ERROR, f"parse error: not JSON ({exc})")
    if isinstance(doc, list):
        return Refusal(None, INVALID_REQUEST,
                       "batches are not supported: send each request on its own line")
    if not isinstance(doc, dict):
        return Refusal(None, INVALID_REQUEST,
                       "invalid request: a JSON-RPC message is a JSON object")
    return _screen_message(doc, text)


def _screen_message(doc: dict[str, Any], text: str) -> str | Refusal | None:
    has_id = "id" in doc
    request_id = _valid_id(doc.get("id"))
    if has_id and request_id is None:
        return Refusal(None, INVALID_REQUEST,
                       "invalid request: id must be an integer or a string")
    if "method" not in doc and ("result" in doc or "error" in doc):
        return text  # a response to the server's own request: the SDK's to judge
    if doc.get("jsonrpc") != "2.0":
        return _refuse(request_id, INVALID_REQUEST,
                       'invalid request: "jsonrpc" must be "2.0"')
    if not isinstance(doc.get("method"), str):
        return _refuse(request_id, INVALID_REQUEST,
                       'invalid request: "method" must be a string')
    if "params" in doc and not isinstance(doc["params"], dict):
        return _refuse(request_id, INVALID_PARAMS,
                       f'invalid params of {doc["method"]}: "params" must be an object')
    try:
        jsonrpc_message_adapter.validate_python(doc, by_name=False)
    except ValueError:
        return _refuse(request_id, INVALID_REQUEST,
                       "invalid request: not a JSON-RPC 2.0 request or notification")
    return text


def _refuse(request_id: RequestId | None, code: int, message: str) -> Refusal | None:
    """`Refusal` of a request with an id; None (no answer) for a notification."""
    return Refusal(request_id, code, message) if request_id is not None else None


def _valid_id(value: object) -> RequestId | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, int | str) else None


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None
