"""The `wardian` command line: one Typer app, one module per command group (CLI.md).

Only this package imports Typer or Rich. A command parses, makes one call, prints,
and lets `WardianError` reach the root group, which prints ``Error: …`` and exits
with the documented code.
"""
