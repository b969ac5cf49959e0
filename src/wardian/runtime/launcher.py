"""The one entry point of the small programs Wardian starts in a fresh interpreter.

Each runs as ``python -P -c LAUNCHER_MAIN PROGRAM [OPTIONS] -- [COMMAND]...``
(`wardian._process.launcher_argv`); one argparse parser reads the options, and what
follows the first ``--`` is passed on untouched:

* ``supervise --parent PID [--held-record FILE --held-under DIR] -- CMD [ARGS]...``: the
  supervisor a provider CLI runs under on Linux (`wardian.providers.supervisor.supervise`);
* ``hold --parent PID [--workspace PATH] -- CMD [ARGS]...``: the holder of an
  agent-assigned step's launch (`wardian.runtime.step_launch.hold`);
* ``provider PROVIDER [--model M] [--effort E] -- [ARGS]...``: the managed child of
  ``wardian agent launch``, which becomes the provider CLI
  (`wardian.runtime.provider_launch.exec_provider`). The form it had before,
  ``python -m wardian.runtime.provider_launch PROVIDER ...``, is still accepted.

A bad argument line exits 2 with argparse's usage message; a `WardianError` is printed as
``Error: …`` with its exit code. The installed hooks are not programs of this launcher:
their command is written into the hosts' settings files and runs on a budget a user feels
(`wardian.runtime.hooks`). Spec: DESIGN.md "Conventions" (process-tree control).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wardian launcher", description="Programs Wardian starts in a fresh interpreter.")
    programs = parser.add_subparsers(dest="program", required=True, metavar="PROGRAM")
    supervise = programs.add_parser(
        "supervise", usage="%(prog)s --parent PID [--held-record FILE --held-under DIR] "
        "-- CMD [ARGS]...", help="run CMD so that it ends with the engine (Linux)")
    supervise.add_argument("--parent", type=int, required=True, metavar="PID")
    supervise.add_argument("--held-record", metavar="FILE")
    supervise.add_argument("--held-under", metavar="DIR")
    hold = programs.add_parser(
        "hold", usage="%(prog)s --parent PID [--workspace PATH] -- CMD [ARGS]...",
        help="record an agent step's launch, mint its capability, become CMD")
    hold.add_argument("--parent", type=int, required=True, metavar="PID")
    hold.add_argument("--workspace", metavar="PATH")
    provider = programs.add_parser(
        "provider", usage="%(prog)s PROVIDER [--model M] [--effort E] -- [ARGS]...",
        help="become the provider CLI of `wardian agent launch`")
    provider.add_argument("name", metavar="PROVIDER")
    provider.add_argument("--model")
    provider.add_argument("--effort")
    return parser


def main(argv: Sequence[str]) -> int:
    """Run the launcher program `argv` names (module docstring); its exit code.

    A program that replaces this process (``hold``, ``provider``) does not return once its
    command starts.
    """
    from wardian.errors import WardianError

    words = list(argv)
    cut = words.index("--") if "--" in words else len(words)
    parser = _parser()
    args, command = parser.parse_args(words[:cut]), words[cut + 1:]
    if args.program != "provider" and not command:
        parser.error(f"{args.program}: expected -- CMD [ARGS]... after the options")
    try:
        if args.program == "supervise":
            from pathlib import Path

            from wardian.providers.supervisor import HeldRecord, supervise

            if (args.held_record is None) != (args.held_under is None):
                parser.error("supervise: --held-record and --held-under go together")
            held = (HeldRecord(Path(args.held_record), Path(args.held_under))
                    if args.held_record is not None else None)
            return supervise(args.parent, command, held=held)
        if args.program == "hold":
            from wardian.runtime.step_launch import hold

            return hold(args.parent, command, workspace=args.workspace)
        from wardian.runtime.provider_launch import exec_provider

        return exec_provider(args.name, model=args.model, effort=args.effort, args=command)
    except WardianError as exc:
        sys.stderr.write(f"Error: {exc.render()}\n")
        return exc.exit_code
