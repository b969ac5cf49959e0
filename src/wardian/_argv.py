"""The one hand-written argument parser, for the processes on a budget a user feels
(bench/process_bench.py): the hot CLI path (`wardian.cli.hot`) and the installed hooks
(`wardian.runtime.hook_argv`). Everything else parses with argparse or Typer.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["FLAG", "MULTI", "VALUE", "Parsed", "parse_options"]

VALUE, MULTI, FLAG = "value", "multi", "flag"
"""Kinds of option: one value given at most once, a repeatable value, a flag."""


class Parsed:
    """What `parse_options` read: single values, repeatable values, flags given, words."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.multi: dict[str, list[str]] = {}
        self.flags: set[str] = set()
        self.words: list[str] = []


def parse_options(args: Sequence[str], spec: dict[str, str], most: int) -> Parsed | None:
    """Options and words of `args` as Click would read them, or None when unsure.

    `spec` maps ``--name`` to `VALUE` (once), `MULTI` (repeatable) or `FLAG`; at most
    `most` words. ``--name=value`` and ``--name value`` both work. Unsure: ``--``,
    ``-h``/``--help``, any other word starting with ``-``, a value that starts with ``-``,
    a single option or flag twice, a flag with ``=``, too many words.
    """
    out = Parsed()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            out.words.append(arg)
            continue
        name, eq, inline = arg.partition("=")
        kind = spec.get(name)
        if kind is None or name in out.values or name in out.flags:
            return None
        if kind == FLAG:
            if eq:
                return None
            out.flags.add(name)
            continue
        if eq:
            value = inline
        elif i < len(args) and not args[i].startswith("-"):
            value = args[i]
            i += 1
        else:
            return None
        if kind == MULTI:
            out.multi.setdefault(name, []).append(value)
        else:
            out.values[name] = value
    return out if len(out.words) <= most else None
