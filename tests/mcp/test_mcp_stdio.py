"""The server's event-loop stdio (`wardian.mcp_server.stdio`, issue 16): real pipes to a
real child process; lines of any length both ways, stray output kept off the wire, the
standard descriptors restored afterwards, and the SDK's own path when stdin is a file."""

from __future__ import annotations

import socket
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest

from tests.mcp.conftest import add_agent, base_env, capability_env, session, structured, text_of
from wardian.memory.models import MAX_LOCATOR_CHARS, MAX_SOURCES

ECHO = r"""
import asyncio, os, sys
from wardian.mcp_server.stdio import event_loop_stdio

async def main():
    async with event_loop_stdio() as pipes:
        if pipes is None:
            sys.stdout.write("no pipes\n")
        else:
            lines, out = pipes
            print("stray print", flush=True)
            os.write(1, b"stray fd write\n")
            async for line in lines:
                await out.write(str(len(line)) + ":" + line.upper())
                await out.flush()
    blocking = os.get_blocking(0) and os.get_blocking(1)
    sys.stdout.write("restored" + ("" if blocking else " non-blocking") + "\n")

asyncio.run(main())
"""


def _echo(stdin: bytes | Path) -> subprocess.CompletedProcess[bytes]:
    if isinstance(stdin, Path):
        with stdin.open("rb") as handle:
            return subprocess.run([sys.executable, "-c", ECHO], stdin=handle,
                                  capture_output=True, timeout=60, check=True)
    return subprocess.run([sys.executable, "-c", ECHO], input=stdin, capture_output=True,
                          timeout=60, check=True)


def test_lines_of_any_length_go_both_ways_and_stray_output_misses_the_wire() -> None:
    big = "é" * 700_000  # 1.4 MB of UTF-8: far past a pipe buffer and asyncio's 64 KiB
    done = _echo(f"hello\n{big}\nlast line without newline".encode())
    out = done.stdout.decode()
    assert out.splitlines() == ["6:HELLO", f"700001:{big.upper()}",
                                "25:LAST LINE WITHOUT NEWLINE" + "restored"]
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
        in_host.sendall(b"hello\n")
        first = b""
        while not first.endswith(b"\n"):
            chunk = out_host.recv(4096)
            assert chunk, first
            first += chunk
        out_host.shutdown(socket.SHUT_WR)  # after the server is serving
        in_host.sendall(b"second\n")
        in_host.shutdown(socket.SHUT_WR)
        rest = b""
        while chunk := out_host.recv(4096):
            rest += chunk
        assert child.wait(timeout=60) == 0
    assert first + rest == b"6:HELLO\n7:SECOND\nrestored\n"


def test_bad_utf8_is_replaced_as_the_sdk_does() -> None:
    done = _echo(b"ok \xff\xfe\n")
    assert done.stdout.decode().splitlines()[0] == "6:OK \ufffd\ufffd"


def test_a_file_on_stdin_keeps_the_sdk_path(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text("{}\n")
    assert _echo(requests).stdout.decode() == "no pipes\nrestored\n"


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
    """The server's own message reader and writer (`MessageReader`, `MessageWriter`), on
    the wire as a host writes it, over pipes and over the socketpairs Node-based hosts
    give: a line that is no JSON-RPC message gets no answer and the next ones are served;
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
        answers = [json.loads(reply.readline()) for _ in saves]
        write(recall)
        answers.append(json.loads(reply.readline()))
        end_input()  # end of input ends the server
        assert reply.read() == b""
        assert child.wait(timeout=60) == 0
    assert sorted(a["id"] for a in answers) == [10, 11, 12, 20]
    assert all(not a["result"].get("isError") for a in answers), answers
    found = next(a for a in answers if a["id"] == 20)["result"]["structuredContent"]
    assert len(found["records"]) == 3
