"""`wardian garden maintain …`: reviewed memory maintenance (preview, apply, check-receipt).

Owned by the maintenance work; registered by `wardian.cli.garden`. Operator-only: call
`wardian.cli.garden.require_operator()` first in every command.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Reviewed memory maintenance: preview a plan, apply it with confirmation, "
    "check a receipt.",
    no_args_is_help=True,
)
