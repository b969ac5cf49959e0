"""`wardian blueprint`: Validate, list, show and export the schema of blueprints."""

from __future__ import annotations

import typer

from wardian.cli._common import JsonOption, emit_json, print_table, stderr, stdout

app = typer.Typer(
    help="Validate, list, show and export the schema of blueprints.",
    no_args_is_help=True,
)


@app.command("validate")
def validate(
    paths: list[str] = typer.Argument(..., help="Blueprint files or folders to check."),
    assignments: str | None = typer.Option(
        None, "--assignments", help="Assignments JSON as a run would get them: also check "
        "the roles, and that each role step's provider can answer its output schema "
        "(the builtin provider answers only the schemas it implements)."),
    as_json: bool = JsonOption,
) -> None:
    """Check blueprint files and report every problem in every file (exit 2 if any); warn
    where a step reads the output of a step its `when` can skip (warnings alone exit 0)."""
    from wardian.app.blueprints import validate_blueprints

    reports = validate_blueprints(paths, assignments=assignments)
    bad = [r for r in reports if r.problems]
    if as_json:
        emit_json([{"path": str(r.path), "ok": r.ok,
                    "id": r.loaded.id if r.loaded else None,
                    "problems": [p.to_json() for p in r.problems],
                    "warnings": [w.to_json() for w in r.warnings]} for r in reports])
    else:
        for report in reports:
            if report.ok:
                stdout(f"ok  {report.path} ({report.loaded.id if report.loaded else ''})")
            for problem in [*report.problems, *report.warnings]:
                stdout(problem.render())
        if not reports:
            stderr("no blueprint files found")
        warned = sum(len(r.warnings) for r in reports)
        stderr(f"{len(reports)} file(s) checked, {len(bad)} with problems "
               f"({sum(len(r.problems) for r in bad)} problem(s))"
               + (f", {warned} warning(s)" if warned else ""))
    if bad or not reports:
        raise typer.Exit(2)


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """List the blueprints of the user and shipped libraries, broken ones with their error."""
    from wardian.app.blueprints import list_blueprints

    entries = list_blueprints()
    if as_json:
        emit_json([e.to_json() for e in entries])
        return
    rows = []
    for e in entries:
        loaded = e.report.loaded
        status = "ok" if e.ok else "BROKEN"
        if not e.active:
            status += " (inactive)"
        detail = e.error or e.note or (loaded.blueprint.blueprint.name if loaded else "")
        if e.ok and e.note:
            detail = f"{loaded.blueprint.blueprint.name if loaded else ''} — {e.note}"
        rows.append((e.id, e.source, status, detail, str(e.path)))
    print_table(["ID", "SOURCE", "STATUS", "NAME / ERROR", "PATH"], rows)


@app.command("show")
def show(
    ref: str = typer.Argument(..., help="Blueprint id (user library first) or path."),
    as_json: bool = JsonOption,
) -> None:
    """Print the resolved blueprint (defaults filled in) with its source path."""
    from wardian.app.blueprints import show_blueprint

    document = show_blueprint(ref)
    if as_json:
        emit_json(document)
        return
    import yaml

    stdout(f"# source: {document['path']}")
    stdout(f"# hash: {document['hash']}")
    stdout(yaml.safe_dump(document["blueprint"], sort_keys=False, allow_unicode=True).rstrip())


@app.command("schema")
def schema() -> None:
    """Print the JSON Schema of the blueprint format (as shipped in schemas/)."""
    from wardian.app.blueprints import blueprint_schema_text

    typer.echo(blueprint_schema_text(), nl=False)
