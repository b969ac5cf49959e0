"""The server's stdin/stdout as event-loop pipes, for the SDK's stdio transport.

The SDK's ``stdio_server()`` reads and writes the standard streams through
``anyio.wrap_file``: every line read, every write and every flush is a hop to a worker
thread and back, which roughly doubles the MCP ping round trip (bench/mcp_bench.py). When stdin and
stdout are pipes or stream sockets, as they are under every MCP
host (Node-based hosts spawn children with socketpairs), this module hands the SDK the
same streams served by the asyncio event loop itself (``connect_read_pipe``, and
``connect_write_pipe`` or ``sock_sendall``): same line framing, same UTF-8, no threads.
Anything else (a terminal, a regular file) keeps the SDK's own path.

The server reads and writes JSON-RPC messages on those pipes itself (`MessageReader`,
`MessageWriter`: the read and write streams the SDK's ``Server.run`` takes, parsed and
serialised exactly as its stdio transport does), instead of through the transport's
reader and writer tasks: that saves two task hand-offs per message.

As the SDK does, the wire is moved off fds 0 and 1 while serving — fd 0 reads the null
device and fd 1 writes to stderr — so a stray ``print`` or a child process can neither
corrupt the JSON-RPC stream nor swallow its input; both are restored on exit.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from types import TracebackType
from typing import Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

__all__ = ["MAX_LINE_BYTES", "MessageReader", "MessageWriter", "PipeLines", "PipeWriter",
           "SocketWriter", "event_loop_stdio", "is_pipe"]

MAX_LINE_BYTES = 256 * 1024 * 1024
"""Longest JSON-RPC line read (bytes): far above any tool call (a save is at most a few
hundred KB), so the SDK's unlimited line reading is matched in practice."""


def is_pipe(fd: int) -> bool:
    """Whether `fd` is a pipe or a socket (what the event loop can serve directly)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PipeLines:
    """Lines of UTF-8 text from an event-loop pipe, as ``async for line in stdin`` reads
    them from the SDK's wrapped file (bad bytes replaced, as there)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class PipeWriter:
    """``write(text)`` and ``flush()`` of UTF-8 text onto an event-loop pipe; ``flush``
    returns once the kernel holds every byte, waiting (without blocking the loop) while
    the reader is behind, as the SDK's blocking flush would."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


class SocketWriter:
    """``write(text)`` and ``flush()`` onto a non-blocking stream socket (``sock_sendall``):
    Node-based hosts give a child a socketpair for stdout, and asyncio's pipe transport
    would take the host's half-close of its never-written end for a closed pipe."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._pending: list[bytes] = []

    async def write(self, text: str) -> None:
        self._pending.append(text.encode("utf-8"))

    async def flush(self) -> None:
        data, self._pending = b"".join(self._pending), []
        await asyncio.get_running_loop().sock_sendall(self._sock, data)


class _PipeStream:
    """``aclose`` and ``async with`` of a message stream: nothing to release, as
    `event_loop_stdio` owns the pipe."""

    async def aclose(self) -> None:
        """Nothing to do."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


class MessageReader(_PipeStream):
    """The JSON-RPC messages read from `lines`, one per line, as the SDK's stdio transport
    reads them: each parsed into a ``SessionMessage``; a line that is not a JSON-RPC
    message is handed on as its exception (the SDK answers nothing for it and goes on);
    the iteration ends at end of input. A read stream for ``Server.run``."""

    def __init__(self, lines: PipeLines) -> None:
        self._lines = lines

    async def receive(self) -> SessionMessage | Exception:
        """The next message (or a bad line's exception).

        Raises:
            anyio.EndOfStream: the input ended.
        """
        try:
            line = await self._lines.__anext__()
        except StopAsyncIteration:
            raise anyio.EndOfStream from None
        try:
            return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
        except Exception as exc:  # the SDK transport's rule: the dispatcher logs it
            return exc

    def __aiter__(self) -> MessageReader:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class MessageWriter(_PipeStream):
    """Writes each JSON-RPC message as one line of JSON onto `out` and flushes it before
    ``send`` returns, as the SDK's stdio transport does; concurrent sends (handlers run
    as tasks) go out whole, one after the other. A write stream for ``Server.run``."""

    def __init__(self, out: PipeWriter | SocketWriter) -> None:
        self._out = out
        self._lock = asyncio.Lock()

    async def send(self, item: SessionMessage) -> None:
        """Write `item`.

        Raises:
            anyio.BrokenResourceError: the host closed its end (the SDK drops the answer).
        """
        line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        async with self._lock:
            try:
                await self._out.write(line)
                await self._out.flush()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc


@asynccontextmanager
async def event_loop_stdio() -> AsyncIterator[tuple[PipeLines, PipeWriter | SocketWriter]
                                              | None]:
    """Yield ``(stdin lines, stdout writer)`` served by the running asyncio loop, with fds
    0 and 1 diverted while inside; yield None (touching nothing) when stdin or stdout is
    not a pipe or stream socket, or a descriptor cannot be duplicated: then use the SDK's
    ``stdio_server()`` as it is."""
    if not (is_pipe(0) and is_pipe(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    with ExitStack() as stack:
        try:
            # Private duplicates carry the wire; fds 0 and 1 are diverted below.
            read_pipe = stack.enter_context(os.fdopen(os.dup(0), "rb", buffering=0))
            out_fd = os.dup(1)
        except OSError:
            yield None
            return
        out: PipeWriter | SocketWriter
        if stat.S_ISSOCK(os.fstat(out_fd).st_mode):
            sock = stack.enter_context(socket.socket(fileno=out_fd))
            if sock.type != socket.SOCK_STREAM:
                yield None
                return
            sock.setblocking(False)
            out = SocketWriter(sock)
        else:
            write_pipe = stack.enter_context(os.fdopen(out_fd, "wb", buffering=0))
            write_transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, write_pipe)
            stack.callback(write_transport.close)
            # No buffering in the loop: `flush` returns once every byte is in the kernel,
            # as the SDK's blocking flush does (a write normally goes straight through).
            write_transport.set_write_buffer_limits(high=0)
            out = PipeWriter(asyncio.StreamWriter(write_transport, protocol, None, loop))
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), read_pipe)
        stack.callback(read_transport.close)
        # The loop made the wire non-blocking, which fds 0 and 1 share: once they are back
        # (this runs after the diversions are undone) they block again, as before.
        stack.callback(_blocking, 0, 1)
        for fd, divert in ((0, lambda: os.open(os.devnull, os.O_RDONLY)), (1, lambda: os.dup(2))):
            stack.enter_context(_diverted(fd, divert))
        yield PipeLines(reader), out


def _blocking(*fds: int) -> None:
    for fd in fds:
        with suppress(OSError):
            os.set_blocking(fd, True)


@contextmanager
def _diverted(fd: int, divert: Callable[[], int]) -> Iterator[None]:
    """Point `fd` at what `divert` opens while inside, then back (best effort: a
    descriptor that cannot be moved stays as it is)."""
    try:
        keep = os.dup(fd)
    except OSError:
        yield
        return
    try:
        target = divert()
        os.dup2(target, fd)
        os.close(target)
    except OSError:
        os.close(keep)
        yield
        return
    try:
        yield
    finally:
        with suppress(OSError):
            os.dup2(keep, fd)
        os.close(keep)
