"""The argument line of an installed hook: ``HOST EVENT [--agent NAME]… [--home PATH]``.

Parsed by `wardian._argv`, the parser of the hot CLI path, not with argparse: argparse adds
to a hook's start-up, and a hook runs at every session start and end.
Spec: docs/hosts.md (hooks for Claude Code, Codex and Gemini; several agents per host).
"""

from __future__ import annotations

from typing import NamedTuple

from wardian._argv import MULTI, VALUE, parse_options
from wardian.errors import UsageError

__all__ = ["EVENTS_BY_HOST", "HOSTS", "HookArgs", "parse_hook_argv"]

EVENTS_BY_HOST: dict[str, tuple[str, ...]] = {
    "claude-code": ("session-start", "session-end"),
    "gemini": ("session-start", "session-end"),
    "codex": ("session-start", "session-end"),  # SessionEnd since Codex 0.145.0
    "opencode": ("session-start", "session-end"),  # run by Wardian's opencode plugin
}
"""The hook events Wardian handles per host."""

HOSTS = tuple(EVENTS_BY_HOST)
"""Hosts with installable hooks."""

_USAGE = ("HOST EVENT [--agent NAME]... [--home PATH] (HOST: claude-code, codex, gemini, "
          "opencode)")


class HookArgs(NamedTuple):
    """A parsed hook argument line.

    Attributes:
        host: ``claude-code``, ``codex``, ``gemini`` or ``opencode``. event: ``session-start`` or
            ``session-end``. agents: the agents the hook may report for, in order (the
            runtime picks one by workspace, docs/hosts.md). home: a data dir (``--home``).
    """

    host: str
    event: str
    agents: tuple[str, ...] = ()
    home: str | None = None


def parse_hook_argv(argv: list[str]) -> HookArgs:
    """Parse ``HOST EVENT [--agent NAME]... [--home PATH]`` (``--opt=value`` works too).

    Raises:
        UsageError: an unknown host or event, a missing option value (or one starting
            with ``-``), ``--home`` twice, another option, or extra words.
    """
    parsed = parse_options(argv, {"--agent": MULTI, "--home": VALUE}, most=2)
    if parsed is None or len(parsed.words) != 2 or parsed.words[0] not in EVENTS_BY_HOST:
        raise UsageError(f"bad hook arguments {' '.join(argv)!r}; expected {_USAGE}",
                         hint="reinstall the hooks with `wardian hooks install HOST`")
    host, event = parsed.words
    if event not in EVENTS_BY_HOST[host]:
        raise UsageError(f"{host} has no {event} hook (it has: "
                         f"{', '.join(EVENTS_BY_HOST[host])})",
                         hint=f"reinstall the hooks with `wardian hooks install {host}`")
    return HookArgs(host, event, tuple(dict.fromkeys(parsed.multi.get("--agent", []))),
                    parsed.values.get("--home"))
