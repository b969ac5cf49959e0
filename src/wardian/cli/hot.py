"""The `wardian` entry point, with a hot path for the commands agents run many times.

``memory save``, ``memory recall``, ``hooks HOST EVENT`` and ``agent exec`` run inside
every managed session, often several times a minute; Typer (with Click and Rich) costs
more to import than such a whole process may (bench/process_bench.py prints the budgets
of the inner memory commands and ``agent exec``). `main` therefore parses those argument
lines itself and runs the very same command bodies the Typer commands call (defined here; the
modules `wardian.cli.memory`, `wardian.cli.agent` and `wardian.cli.hooks` delegate to
them), with the same output and exit codes (`wardian.cli._plain`).

The hot parser (`wardian._argv`) is deliberately narrow: it accepts only argument lines
whose meaning is certain (known options, each single-valued option once, the right number
of words, no ``--help``, no ``--``, no word that starts with ``-`` where Click would read
an option, valid UTF-8). Everything else — usage errors included — goes to the Typer app, which
answers as it always has. tests/cli/test_hot_path.py runs both paths on the same inputs.

The root ``wardian --help`` (or ``-h``) is hot too: printed from the static tables of
`wardian.cli._root_help` (Typer's Rich rendering costs more than its whole budget);
tests/cli/test_root_help.py keeps them equal to the Typer app's.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from wardian._argv import FLAG, MULTI, VALUE, parse_options
from wardian.cli._plain import emit_json, error_exit_code, require_operator, stderr, stdout

if TYPE_CHECKING:
    from wardian.app.agent_memory import Record

__all__ = [
    "agent_exec",
    "hook_run",
    "leading_workspace",
    "main",
    "memory_recall",
    "memory_save",
    "plan",
    "report_record",
    "root_help",
]

# --- the command bodies (shared with the Typer commands) -----------------------------------


def report_record(record: Record, row: str, *, as_json: bool) -> None:
    """Print the changed record: its JSON, or its id8, kind, scope and status, then the
    spec's chat row (``Memory saved · This agent`` …) as the last line."""
    if as_json:
        emit_json(record.to_json())
        return
    removed = " · removed" if record.status == "removed" else ""
    stdout(f"{record.short_id}  {record.kind} · {record.scope.label()}{removed}")
    stdout(row)


def memory_save(text: str, *, evidence: str, kind: str, scope: str, sources: list[str],
                as_json: bool) -> None:
    """``wardian memory save`` (see its help in `wardian.cli.memory`)."""
    from wardian.app.agent_memory import open_agent_memory, save_row

    outcome = open_agent_memory().save(text, evidence=evidence, kind=kind, scope=scope,
                                       sources=sources)
    if as_json:
        emit_json({**outcome.record.to_json(), "unchanged": outcome.unchanged,
                   "already_saved": outcome.already_saved})
        return
    report_record(outcome.record, save_row(outcome), as_json=False)


def memory_recall(query: str | None, *, limit: int, as_json: bool) -> None:
    """``wardian memory recall`` (see its help in `wardian.cli.memory`)."""
    from wardian.app.agent_memory import open_agent_memory, recall_lines

    found = open_agent_memory().recall(query, limit=limit)
    if as_json:
        doc = found.to_json()
        del doc["read_only"]  # always False here: a memory command needs the capability
        if found.query is None:
            del doc["query"]
        emit_json(doc)
        return
    if found.context is None:
        for line in recall_lines(found):
            stdout(line)
        return
    text = found.context.text
    marker = "\n## Recalled memory"
    stdout(text[text.index(marker) + 1:].rstrip("\n"))


def hook_run(host: str, event: str, agents: list[str]) -> None:
    """``wardian hooks HOST EVENT``: one hook call through `wardian.app.hook_call.run_hook`;
    unusable input is a warning (the close is still recorded), a missing or unknown agent
    an error."""
    from wardian.app.hook_call import read_input, run_hook

    out = run_hook(host, event, read_input(sys.stdin.buffer), agents=agents,
                   warn=lambda msg: stderr(f"Warning: {msg}"))
    if out is not None:
        stdout(out)


def agent_exec(name_or_id: str, command: list[str], workspace: str | None) -> int:
    """``wardian agent exec``: run CMD as a managed process; returns its exit code."""
    from wardian.app.managed_exec import exec_agent

    gc.enable()  # `main` turned it off for the imports; this process supervises for hours
    require_operator()
    if name_or_id.startswith("-"):
        # Click stops reading options at NAME: a mistyped option before it lands here.
        raise _unknown_exec_option(name_or_id)
    workspace, command = leading_workspace(command, workspace)
    from wardian.config import open_state_db  # not app.databases: it loads memory.db's code

    return exec_agent(open_state_db(), name_or_id, command, workspace=workspace)


def _unknown_exec_option(word: str) -> Exception:
    from difflib import get_close_matches

    from wardian.cli._plain import unknown_option
    from wardian.errors import UsageError

    option = word.partition("=")[0]
    return UsageError(unknown_option(option, "wardian agent exec",
                                     maybe=get_close_matches(option, ["--workspace"])))


def leading_workspace(
    args: list[str], workspace: str | None
) -> tuple[str | None, list[str]]:
    """Split ``[--workspace PATH] [--] CMD ARGS...`` (what follows NAME) into the workspace
    and the command. CLI.md writes ``agent exec NAME [--workspace PATH] -- CMD``, but the
    parser stops reading options at NAME so that CMD's own options stay CMD's.

    Raises:
        UsageError: ``--workspace`` without a path, or given both before and after NAME;
            an unknown option before ``--``.
    """
    from wardian.errors import UsageError

    rest = list(args)
    while rest and (rest[0] == "--workspace" or rest[0].startswith("--workspace=")):
        flag = rest.pop(0)
        if "=" in flag:
            value = flag.partition("=")[2]
        elif rest and rest[0] != "--":
            value = rest.pop(0)
        else:
            value = ""
        if not value:
            raise UsageError("--workspace needs a directory",
                             hint="use `wardian agent exec NAME --workspace PATH -- CMD`")
        if workspace is not None:
            raise UsageError("--workspace given twice", hint="give it once")
        workspace = value
    if rest and rest[0] == "--":
        rest = rest[1:]
    elif rest and rest[0].startswith("-") and rest[0] != "-":
        # No program is called ``-x``: before ``--`` it is a mistyped option of ours.
        raise _unknown_exec_option(rest[0])
    return workspace, rest


def root_help() -> None:
    """``wardian --help``: the root help from `wardian.cli._root_help` (Typer's Rich
    rendering would cost more than the whole budget)."""
    from wardian.cli._root_help import render

    stdout(render())


# --- the hot argument line (`wardian._argv`, the one parser of our own) ------------------------

def _valid_utf8(args: Sequence[str]) -> bool:
    try:
        for arg in args:
            arg.encode("utf-8")
    except UnicodeEncodeError:
        return False  # the Typer app refuses it with its own message
    return True


def _completing() -> bool:
    """Whether the shell asks for completions (``_WARDIAN_COMPLETE=…``): Click's job."""
    import os

    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def plan(argv: Sequence[str]) -> Callable[[], int | None] | None:
    """The hot command `argv` (without the program name) asks for, ready to run; None
    when the Typer app must answer (any other command, any doubt about the parse).

    The returned callable runs the command and returns its exit code (None = 0); it
    raises what the command raises (`main` turns that into ``Error: …`` and a code).
    """
    if not _valid_utf8(argv) or _completing():
        return None
    if list(argv) in (["--help"], ["-h"]):
        return root_help
    if len(argv) < 2:
        return None
    group, command, rest = argv[0], argv[1], list(argv[2:])
    if group == "memory" and command == "save":
        save = parse_options(rest, {"--evidence": VALUE, "--kind": VALUE, "--scope": VALUE,
                               "--source": MULTI, "--json": FLAG}, most=1)
        if save is None or len(save.words) != 1 or "--evidence" not in save.values:
            return None
        return lambda: memory_save(
            save.words[0], evidence=save.values["--evidence"],
            kind=save.values.get("--kind", "stable"),
            scope=save.values.get("--scope", "workspace"),
            sources=save.multi.get("--source", []), as_json="--json" in save.flags)
    if group == "memory" and command == "recall":
        recall = parse_options(rest, {"--limit": VALUE, "--json": FLAG}, most=1)
        if recall is None:
            return None
        limit = recall.values.get("--limit", "10")
        if not (limit.isascii() and limit.isdigit() and int(limit) >= 1):
            return None  # Click's own message for a bad --limit
        query = recall.words[0] if recall.words else None
        return lambda: memory_recall(query, limit=int(limit),
                                     as_json="--json" in recall.flags)
    if group == "hooks":
        from wardian.app.hook_call import EVENTS_BY_HOST

        event = rest.pop(0) if rest else ""
        if event not in EVENTS_BY_HOST.get(command, ()):
            return None
        hook = parse_options(rest, {"--agent": MULTI}, most=0)
        if hook is None:
            return None
        return lambda: hook_run(command, event, hook.multi.get("--agent", []))
    if group == "agent" and command == "exec":
        # Click stops reading options at NAME (everything after it is CMD's); options
        # before NAME go to the Typer app.
        if not rest or rest[0].startswith("-") or len(rest) < 2:
            return None
        name, tail = rest[0], rest[1:]
        return lambda: agent_exec(name, tail, None)
    return None


def main() -> None:
    """Console-script entry point (``wardian``, ``python -m wardian``): the hot path when
    `plan` recognises the command, else the Typer app (`wardian.cli.main.main`).

    A hot command runs without the cyclic garbage collector: while one imports its
    modules, allocation counts trigger collections that find almost nothing. Such a
    process lives for milliseconds and what it allocates is freed by reference counting or
    at exit; ``agent exec``, which stays to supervise, and the
    Typer app turn it back on."""
    gc.disable()
    run = plan(sys.argv[1:])
    if run is None:
        gc.enable()
        from wardian.cli.main import main as typer_main

        typer_main()
        return
    try:
        code = run() or 0
    except (Exception, KeyboardInterrupt) as exc:
        code = error_exit_code(exc)
    sys.exit(code)
