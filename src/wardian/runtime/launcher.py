"""The one entry point of the small programs Wardian starts in a fresh interpreter:
``python -P -c LAUNCHER_MAIN PROGRAM [OPTIONS] -- [COMMAND]...``
(`wardian._process.launcher_argv`). One argparse parser reads the options; what follows
the first ``--`` is passed on untouched.

* ``supervise --parent PID [--held-record FILE --held-under DIR] -- CMD [ARGS]...``
  (`wardian.providers.supervisor.supervise`);
* ``hold --parent PID [--workspace PATH] -- CMD [ARGS]...``
  (`wardian.runtime.step_launch.hold`);
* ``provider PROVIDER [--model M] [--effort E] -- [ARGS]...``
  (`wardian.runtime.provider_launch.exec_provider`; its earlier form ``python -m
  wardian.runtime.provider_launch PROVIDER ...`` is still accepted).

A bad argument line exits 2 with the usage; a `WardianError` prints ``Error: …`` and
exits with its code. The installed hooks keep their own command (it is written into the
hosts' settings files, and runs on a budget: `wardian.runtime.hooks`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wardian launcher")
    programs = parser.add_subparsers(dest="program", required=True, metavar="PROGRAM")
    supervise = programs.add_parser("supervise", help="run CMD; it ends with the engine")
    hold = programs.add_parser("hold", help="hold an agent step's launch, become CMD")
    for program in (supervise, hold):
        program.add_argument("--parent", type=int, required=True, metavar="PID")
    supervise.add_argument("--held-record", metavar="FILE")
    supervise.add_argument("--held-under", metavar="DIR")
    hold.add_argument("--workspace", metavar="PATH")
    provider = programs.add_parser("provider", help="become `agent launch`'s provider CLI")
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
