"""The server's stdio (`wardian.mcp_server.stdio`): the SDK's transport fed screened
lines, over real pipes, socketpairs and a file to a real child process; lines of any
length both ways, stray output kept off the wire, the standard descriptors restored
afterwards, a malformed line answered and the next ones served."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.conftest import add_agent, base_env, capability_env, session, structured, text_of
from wardian.memory.models import MAX_LOCATOR_CHARS, MAX_SOURCES

ECHO = r"""
import os, sys
import anyio
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCRequest, JSONRPCResponse
from wardian.mcp_server.stdio import stdio_streams

async def main():
    async with stdio_streams() as (read, write):
        print("stray print", flush=True)
        os.write(1, b"stray fd write\n")
        async for item in read:
            message = item.message
            assert isinstance(message, JSONRPCRequest), message
            text = message.params["text"]
            await write.send(SessionMessage(JSONRPCResponse(
                jsonrpc="2.0", id=message.id, result={"text": text.upper(), "n": len(text)})))
        await write.aclose()  # as Server.run does: the writer ends
    sys.stdout.write("restored " + str(os.get_blocking(0) and os.get_blocking(1)) + "\n")

anyio.run(main)
"""


def _request(i: int, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "echo",
                       "params": {"text": text}}).encode() + b"\n"


def _answers(out: bytes) -> tuple[list[dict[str, Any]], str]:
    """The JSON answers on `out`, and the text after them (the child's last line)."""
    lines = out.decode().splitlines()
    return [json.loads(line) for line in lines[:-1]], lines[-1]


def _echo(stdin: bytes | Path) -> subprocess.CompletedProcess[bytes]:
    if isinstance(stdin, Path):
        with stdin.open("rb") as handle:
            return subprocess.run([sys.executable, "-c", ECHO], stdin=handle,
                                  capture_output=True, timeout=60, check=True)
    return subprocess.run([sys.executable, "-c", ECHO], input=stdin, capture_output=True,
                          timeout=60, check=True)


def test_lines_of_any_length_go_both_ways_and_stray_output_misses_the_wire() -> None:
    big = "é" * 700_000  # 1.4 MB of UTF-8 as JSON escapes and as raw bytes
    raw_big = b'{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"' + \
        ("ü" * 700_000).encode() + b'"}}'
    done = _echo(_request(1, "hello") + _request(2, big) + raw_big)  # last: no newline
    answers, last = _answers(done.stdout)
    assert [(a["id"], a["result"]["n"]) for a in answers] == [(1, 5), (2, 700_000),
                                                              (3, 700_000)]
    assert answers[1]["result"]["text"] == big.upper()
    assert last == "restored True"
    assert "stray print" in done.stderr.decode()
    assert "stray fd write" in done.stderr.decode()


def test_socketpair_stdio_as_node_hosts_spawn_servers() -> None:
    """Node (libuv) gives a child socketpairs for stdin and stdout; a host that shuts down
    its (never written) end of the stdout socket must not close the server's replies."""
    in_host, in_child = socket.socketpair()
    out_host, out_child = socket.socketpair()
    with in_host, out_host:
        with in_child, out_child:
            child = subprocess.Popen([sys.executable, "-c", ECHO], stdin=in_child.fileno(),
                                     stdout=out_child.fileno(), stderr=subprocess.DEVNULL)
        out_host.settimeout(60)
        in_host.sendall(_request(1, "hello"))
        first = b""
        while not first.endswith(b"\n"):
            chunk = out_host.recv(4096)
            assert chunk, first
            first += chunk
        out_host.shutdown(socket.SHUT_WR)  # after the server is serving
        in_host.sendall(_request(2, "second"))
        rest = b""
        while not rest.endswith(b"\n"):
            chunk = out_host.recv(4096)
            assert chunk, rest
            rest += chunk
        in_host.shutdown(socket.SHUT_WR)
        while chunk := out_host.recv(4096):
            rest += chunk
        assert child.wait(timeout=60) == 0
    answers, last = _answers(first + rest)
    assert [a["result"]["text"] for a in answers] == ["HELLO", "SECOND"]
    assert last == "restored True"


def test_bad_utf8_is_answered_with_an_error_never_replaced() -> None:
    done = _echo(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"ok \xff\xfe"}}\n'
                 + _request(2, "fine"))
    answers, _ = _answers(done.stdout)
    assert answers[0]["id"] == 1 and answers[0]["error"]["code"] == -32600
    assert "not valid UTF-8 (byte 0xff at offset" in answers[0]["error"]["message"]
    assert answers[1]["result"]["text"] == "FINE"


def test_a_file_on_stdin_is_served_the_same_way(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_request(1, "from a file") + b"{}\n")
    answers, last = _answers(_echo(requests).stdout)
    assert answers[0]["result"]["text"] == "FROM A FILE"
    assert answers[1:] == []  # {} has no id: nothing to answer
    assert last == "restored True"


def test_a_save_larger_than_a_pipe_buffer_round_trips(workdir: Path,
                                                      wardian_home: Path) -> None:
    """A request line and its answer of ~260 KB each (64 sources at the locator limit)."""
    env = {**base_env(), **capability_env(add_agent("ada"))}
    sources = [f"file={i:02d}" + "x" * (MAX_LOCATOR_CHARS - 2) for i in range(MAX_SOURCES)]

    async def main() -> None:
        async with session(env, workdir) as client:
            saved = await client.call_tool("memory_save", {
                "text": "Generated fixtures live under tests/data", "evidence": "the user said so",
                "sources": sources})
            assert not saved.is_error, text_of(saved)
            record = structured(saved)["record"]
            assert [s["locator"] for s in record["sources"]] == [s[5:] for s in sources]

    anyio.run(main)


@pytest.mark.parametrize("wire", ["pipes", "socketpairs"])
def test_the_raw_wire_skips_a_bad_line_and_answers_pipelined_calls_whole(
        wire: str, workdir: Path, wardian_home: Path) -> None:
    """The whole server on the wire as a host writes it, over pipes and over the
    socketpairs Node-based hosts give: a line that is no JSON is answered with a parse
    error (id null) and the next ones are served;
    requests sent back to back without waiting are each answered on one whole line; end
    of input ends the server cleanly."""
    import json
    import os

    env = {"PATH": os.environ["PATH"], **base_env(), **capability_env(add_agent("ada"))}
    saves = [{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {
        "name": "memory_save", "arguments": {"text": f"Pipelined fact number {i} about the "
                                             "quokka build", "evidence": "the user said so"}}}
        for i in range(3)]
    recall = {"jsonrpc": "2.0", "id": 20, "method": "tools/call",
              "params": {"name": "memory_recall", "arguments": {"query": "quokka"}}}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    with ExitStack() as stack:
        if wire == "pipes":
            child = stack.enter_context(subprocess.Popen(
                [sys.executable, "-P", "-m", "wardian", "mcp"], cwd=workdir, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
            assert child.stdin is not None and child.stdout is not None
            send, reply = stack.enter_context(child.stdin), stack.enter_context(child.stdout)
            end_input = send.close
        else:
            in_host, in_child = socket.socketpair()
            out_host, out_child = socket.socketpair()
            with in_child, out_child:
                child = stack.enter_context(subprocess.Popen(
                    [sys.executable, "-P", "-m", "wardian", "mcp"], cwd=workdir, env=env,
                    stdin=in_child.fileno(), stdout=out_child.fileno(),
                    stderr=subprocess.DEVNULL))
            out_host.settimeout(60)
            send = stack.enter_context(in_host.makefile("wb"))
            reply = stack.enter_context(out_host.makefile("rb"))
            for sock in (in_host, out_host):
                stack.enter_context(sock)

            def end_input() -> None:
                send.close()
                in_host.shutdown(socket.SHUT_WR)

        def write(*messages: object, prefix: bytes = b"") -> None:
            send.write(prefix + b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            send.flush()

        write(initialize)
        assert json.loads(reply.readline())["id"] == 1
        write({"jsonrpc": "2.0", "method": "notifications/initialized"}, *saves,
              prefix=b"this is not json\n")
        answers = [json.loads(reply.readline()) for _ in range(len(saves) + 1)]
        parse_error = next(a for a in answers if a["id"] is None)
        answers.remove(parse_error)
        write(recall)
        answers.append(json.loads(reply.readline()))
        end_input()  # end of input ends the server
        assert reply.read() == b""
        assert child.wait(timeout=60) == 0
    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
    assert sorted(a["id"] for a in answers) == [10, 11, 12, 20]
    assert all(not a["result"].get("isError") for a in answers), answers
    found = next(a for a in answers if a["id"] == 20)["result"]["structuredContent"]
    assert len(found["records"]) == 3
