"""One provider hook call (``wardian hooks HOST EVENT``): the hot path's entry to the hook
protocol (`wardian.runtime.hooks`).

Imported on every hook call and every ``wardian hooks …`` argument line the hot parser
reads (`wardian.cli.hot`), so it loads only the hosts' event table at import time; the
hook machinery loads when a call runs (bench/hooks_bench.py prints the per-hook CPU budget).

Spec: "What appears in chat" (startup context), "Optional consolidation" (session close);
DESIGN.md (surfaces call only the application layer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from wardian.runtime.hook_argv import EVENTS_BY_HOST

if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["EVENTS_BY_HOST", "read_input", "run_hook"]


def read_input(stream: BinaryIO) -> str:
    """A hook's input from `stream` (its stdin), bounded as the installed hook reads it
    (`wardian.runtime.hooks.read_hook_input`)."""
    from wardian.runtime.hooks import read_hook_input

    return read_hook_input(stream)


def run_hook(host: str, event: str, stdin_text: str, *, agents: Sequence[str] = (),
             warn: Callable[[str], object] | None = None) -> str | None:
    """Handle one hook call of `host` (``claude-code``, ``codex``, ``gemini``) for `event`
    (one of ``EVENTS_BY_HOST[host]``) with the hook's input; returns what to print on
    stdout (None = nothing). `warn` receives warnings (unusable input: the close is still
    recorded).

    Raises:
        UsageError: no agent. NotFoundError: unknown agent. StoreError: the database.
    """
    from wardian.runtime.hooks import run_hook as handle

    return handle(host, event, stdin_text, agents=agents, warn=warn)
