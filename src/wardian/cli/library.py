"""`wardian library`: The shipped and user blueprint libraries."""

from __future__ import annotations

import typer

from wardian.cli._common import JsonOption, emit_json, print_table, require_operator, stdout

app = typer.Typer(
    help="The shipped and user blueprint libraries.",
    no_args_is_help=True,
)


@app.callback()
def _operator_only() -> None:
    """The shipped and user blueprint libraries."""
    require_operator()  # the user library is the operator's (CLI.md)


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """Show shipped and user blueprints; user copies shadow shipped ones (with a note)."""
    from wardian.app.blueprints import list_blueprints

    entries = list_blueprints()
    if as_json:
        emit_json([e.to_json() for e in entries])
        return
    if not entries:
        stdout("no blueprints (run `wardian library init` to copy the shipped samples)")
        return
    print_table(
        ["ID", "SOURCE", "STATUS", "NOTE", "PATH"],
        [(e.id, e.source, "ok" if e.ok else "BROKEN", e.note or e.error or "", str(e.path))
         for e in entries],
    )


@app.command("init")
def init() -> None:
    """Copy the shipped samples into the user library (edited files are never overwritten)."""
    from wardian.app.blueprints import init_library
    from wardian.config import user_library_dir

    results = init_library()
    for rel, action in results:
        stdout(f"{action:15} {rel}")
    stdout(f"user library: {user_library_dir()}")
