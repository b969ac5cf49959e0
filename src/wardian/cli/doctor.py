"""`wardian doctor`: check this installation and say how to fix what is wrong."""

from __future__ import annotations

import typer

from wardian.cli._common import JsonOption, emit_json, stdout

_MARK = {"ok": "ok", "warning": "warn", "problem": "FAIL"}


def register(root: typer.Typer) -> None:
    """Add ``doctor`` to the root group."""

    @root.command("doctor")
    def doctor(
        check: list[str] = typer.Option(
            [], "--check", help="Run only this check (repeatable); default: all."),
        as_json: bool = JsonOption,
    ) -> None:
        """Check the data directory, settings, hooks, invokers, runs, provider CLIs and
        model catalogs; each problem names the command that fixes it.

        The database check says which database is in use; on PostgreSQL it checks the
        URL, the postgres extra, the server, the migrations and the records' history.

        Exit codes: 0 nothing is wrong (warnings included: worth knowing, nothing fails
        because of them), 1 at least one problem, 2 an unknown --check.
        """
        from wardian.app.doctor import run_doctor

        report = run_doctor(check or None)
        if as_json:
            emit_json(report.to_json())
        else:
            stdout(f"Data directory: {report.data_dir}")
            for name, title in report.titles.items():
                stdout(f"\n{title}")
                for finding in (f for f in report.findings if f.check == name):
                    stdout(f"  [{_MARK[finding.status]}] {finding.message}")
                    if finding.fix and finding.status != "ok":
                        stdout(f"         fix: {finding.fix}")
            problems = len(report.problems)
            stdout("\n" + ("No problems found." if not problems
                           else f"{problems} problem(s) found."))
        if not report.ok:
            raise typer.Exit(1)
