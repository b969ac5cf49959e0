"""What the server answers for a request that is not a well-formed JSON-RPC 2.0 request,
on the raw wire of a real `wardian mcp` child (pipes and the socketpairs Node-based hosts
give): every request that carries an id gets exactly one answer, a JSON-RPC error with the
standard code where the request cannot be served; a line that is not valid UTF-8 is
refused, never read with its bad bytes replaced; a tool call with an argument the tool
does not take is refused naming it. The server goes on serving after each."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import add_agent, base_env, capability_env

INITIALIZE = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LAST = {"jsonrpc": "2.0", "id": "last", "method": "ping"}


def _exchange(workdir: Path, lines: list[bytes], *, wire: str = "pipes",
              env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Send `lines` (after initialize), then a ping; read every answer up to the ping's,
    then end the input (the SDK ends in-flight requests at end of input, as a host that
    closes the pipe no longer reads) and see the server exit 0. The answers, in order,
    between initialize's and the ping's."""
    env = env or {"PATH": os.environ["PATH"], **base_env()}
    payload = b"".join(line + b"\n" for line in [
        json.dumps(INITIALIZE).encode(), json.dumps(INITIALIZED).encode(), *lines,
        json.dumps(LAST).encode()])
    argv = [sys.executable, "-P", "-m", "wardian", "mcp"]
    with ExitStack() as stack:
        if wire == "pipes":
            child = stack.enter_context(subprocess.Popen(
                argv, cwd=workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL))
            assert child.stdin is not None and child.stdout is not None
            send, reply = child.stdin, child.stdout
            send.write(payload)
            send.flush()
            end_input = send.close
        else:
            in_host, in_child = socket.socketpair()
            out_host, out_child = socket.socketpair()
            with in_child, out_child:
                child = stack.enter_context(subprocess.Popen(
                    argv, cwd=workdir, env=env, stdin=in_child.fileno(),
                    stdout=out_child.fileno(), stderr=subprocess.DEVNULL))
            for sock in (in_host, out_host):
                stack.enter_context(sock)
            out_host.settimeout(120)
            reply = stack.enter_context(out_host.makefile("rb"))
            in_host.sendall(payload)

            def end_input() -> None:
                in_host.shutdown(socket.SHUT_WR)

        answers: list[dict[str, Any]] = []
        while not answers or answers[-1].get("id") != "last":
            line = reply.readline()
            assert line, f"the server ended before answering every request: {answers}"
            answers.append(json.loads(line))
        end_input()
        assert reply.read() == b""
        assert child.wait(timeout=120) == 0
    assert answers[0]["id"] == "init" and answers[-1] == {
        "jsonrpc": "2.0", "id": "last", "result": {}}, answers
    return answers[1:-1]


MALFORMED = [
    # (line, the id it must be answered with, the JSON-RPC error code)
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}', 3, -32602),
    (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', 7, -32600),
    (b'{"id":8,"method":"ping"}', 8, -32600),
    (b'{"jsonrpc":"2.0","id":11,"method":"ping","params":5}', 11, -32602),
    (b'{"jsonrpc":"2.0","id":12,"method":', None, -32700),
    (b'[{"jsonrpc":"2.0","id":13,"method":"ping"}]', None, -32600),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":21,"method":7}', 21, -32600),
    (b'{"jsonrpc":"2.0","id":22}', 22, -32600),
    (b'{"jsonrpc":"2.0","id":23,"method":"tools/call","params":[1,2]}', 23, -32602),
    (b'"just a string"', None, -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, -32600),
]


@pytest.mark.parametrize("wire", ["pipes", "socketpairs"])
def test_every_malformed_request_with_an_id_gets_one_error_answer(
        wire: str, workdir: Path, wardian_home: Path) -> None:
    answers = _exchange(workdir, [line for line, _, _ in MALFORMED], wire=wire)
    assert [(a.get("id"), a.get("error", {}).get("code")) for a in answers] == [
        (want_id, code) for _, want_id, code in MALFORMED], answers
    for answer in answers:
        assert answer["jsonrpc"] == "2.0" and "result" not in answer
        assert isinstance(answer["error"]["message"], str) and answer["error"]["message"]


def test_a_malformed_notification_is_not_answered(workdir: Path, wardian_home: Path) -> None:
    """JSON-RPC answers no notification, a malformed one neither (the request after it
    is still served)."""
    answers = _exchange(workdir, [
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}',
        b'{"jsonrpc":"1.0","method":"notifications/progress"}',
        b'',
        b'   ',
    ])
    assert answers == []


def test_invalid_utf8_is_refused_not_replaced(workdir: Path, wardian_home: Path) -> None:
    """A line that is not UTF-8 is never read with U+FFFD in place of its bytes (a save
    would store text the caller never sent): the request is refused with its id."""
    env = {"PATH": os.environ["PATH"], **base_env(), **capability_env(add_agent("ada"))}
    save = (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_save",'
            b'"arguments":{"text":"The staging host is caf\xe9 (Latin-1)",'
            b'"evidence":"the user said so"}}}')
    garbage = b'\xff\xfe\x00{"id": 6}'
    listed = (b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
              b'"params":{"name":"memory_list","arguments":{}}}')
    answers = _exchange(workdir, [save, garbage, listed], env=env)
    assert [a.get("id") for a in answers] == [5, None, 7], answers
    assert answers[0]["error"]["code"] == -32600
    assert "UTF-8" in answers[0]["error"]["message"]
    assert answers[1]["error"]["code"] in (-32600, -32700)
    assert answers[2]["result"]["structuredContent"]["records"] == []


def test_an_unknown_argument_is_refused_naming_it(workdir: Path, wardian_home: Path) -> None:
    env = {"PATH": os.environ["PATH"], **base_env(), **capability_env(add_agent("ada"))}
    calls = [
        {"name": "memory_list", "arguments": {"kind": "stable", "limt": 5}},
        {"name": "memory_save", "arguments": {"text": "Builds run with make", "evidence": "said",
                                              "confidence": 0.9}},
        {"name": "memory_recall", "arguments": {"query": "make", "top_k": 3}},
    ]
    answers = _exchange(workdir, [
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}).encode()
        for i, call in enumerate(calls)], env=env)
    assert [a["id"] for a in answers] == [0, 1, 2]
    for answer, name in zip(answers, ["limt", "confidence", "top_k"], strict=True):
        result = answer["result"]
        assert result["isError"] is True, answer
        assert f"{name} is not an argument of this tool" in result["content"][0]["text"]
    listed = _exchange(workdir, [json.dumps({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "memory_list", "arguments": {}}}).encode()], env=env)
    assert listed[0]["result"]["structuredContent"]["records"] == []
