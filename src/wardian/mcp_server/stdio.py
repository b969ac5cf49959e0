"""The server's stdin and stdout: the MCP SDK's stdio transport, fed screened lines.

`stdio_streams` is the SDK's ``stdio_server()`` (its writer, its diversion of fd 1 to
stderr while serving) with one difference: the SDK reads stdin as text with bad bytes
replaced and answers nothing for a line it cannot parse, so here the lines are read as
bytes from a private duplicate of fd 0 and each is screened first
(`wardian.mcp_server.wire.screen`): a well-formed message goes on to the SDK unchanged,
a malformed request is answered with its JSON-RPC error on the SDK's write stream, and
the rest is dropped. While serving, fd 0 reads the null device (as the SDK arranges for
its own claim), so neither a tool nor a child process can swallow the host's input;
fd 0 is restored on exit.
"""

from __future__ import annotations

import fcntl
import io
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from wardian.mcp_server.wire import MAX_LINE_BYTES, Refusal, screen, too_long

__all__ = ["ScreenedLines", "run_stdio", "stdio_streams"]


class ScreenedLines:
    """The request lines of a binary stream, as the SDK's stdio reader iterates them
    (``async for line in stdin``): only lines `screen` hands on are yielded; a refused
    line is answered on the write stream given to `answer_on` (awaited if the answer is
    due before the SDK has yielded its streams)."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self._write: MemoryObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_on(self, write: MemoryObjectSendStream[SessionMessage]) -> None:
        """Send refusals on `write` (the SDK's write stream) from now on."""
        self._write = write
        self._ready.set()

    def __aiter__(self) -> ScreenedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._readline()
            if not line:
                raise StopAsyncIteration
            if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := await self._readline()) and not rest.endswith(b"\n"):
                    pass
                verdict: str | Refusal | None = too_long()
            else:
                verdict = screen(line)
            if isinstance(verdict, str):
                return verdict
            if verdict is not None:
                await self._answer(verdict)

    async def _readline(self) -> bytes:
        """The next line, or its first `MAX_LINE_BYTES` bytes (read in a worker thread,
        as the SDK reads stdin)."""
        return await anyio.to_thread.run_sync(self._source.readline, MAX_LINE_BYTES)

    async def _answer(self, refusal: Refusal) -> None:
        await self._ready.wait()
        assert self._write is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._write.send(SessionMessage(refusal.answer()))


@contextmanager
def _claimed_stdin() -> Iterator[BinaryIO | None]:
    """A private duplicate of fd 0 (None when there is no fd 0), with fd 0 reading the
    null device while inside; fd 0 is pointed back at the wire on exit (best effort:
    where fd 0 cannot be moved it stays as it is and the duplicate is still read)."""
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield None
        return
    diverted = False
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
            diverted = True
        finally:
            os.close(null)
    except OSError:
        pass
    # closefd=False and never closed, as in the SDK's own claim: a worker thread may
    # still block on a read after the server ends, and a recycled descriptor would be
    # read in its place.
    wire = os.fdopen(private, "rb", closefd=False)
    try:
        yield wire
    finally:
        if diverted:
            with suppress(OSError):
                os.dup2(private, 0)


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage]]]:
    """The read and write streams of messages over stdin and stdout, for
    ``Server.run``: screened as the module says."""
    with _claimed_stdin() as wire:
        lines = ScreenedLines(wire if wire is not None else io.BytesIO())
        stdin: Any = lines  # the SDK iterates it as it iterates an anyio text file
        async with stdio_server(stdin=stdin) as (read, write):
            lines.answer_on(write)
            yield read, write


async def run_stdio(lowlevel: Any) -> None:
    """Run the SDK's low-level `lowlevel` server over `stdio_streams` until the host
    closes stdin."""
    async with stdio_streams() as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
