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
    as_json: bool = JsonOption,
) -> None:
    """Check blueprint files and report every problem in every file (exit 2 if any)."""
    from wardian.blueprints.validate import validate_paths
    from wardian.engine.actions import known_actions

    reports = validate_paths(paths, known_actions=known_actions())
    bad = [r for r in reports if r.problems]
    if as_json:
        emit_json([{"path": str(r.path), "ok": r.ok,
                    "id": r.loaded.id if r.loaded else None,
                    "problems": [p.to_json() for p in r.problems]} for r in reports])
    else:
        for report in reports:
            if report.ok:
                stdout(f"ok  {report.path} ({report.loaded.id if report.loaded else ''})")
            for problem in report.problems:
                stdout(problem.render())
        if not reports:
            stderr("no blueprint files found")
        stderr(f"{len(reports)} file(s) checked, {len(bad)} with problems "
               f"({sum(len(r.problems) for r in bad)} problem(s))")
    if bad or not reports:
        raise typer.Exit(2)


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """List the blueprints of the user and shipped libraries, broken ones with their error."""
    from wardian.blueprints.library import list_library
    from wardian.engine.actions import known_actions

    entries = list_library(known_actions=known_actions())
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
    from wardian.blueprints.library import find_blueprint
    from wardian.engine.actions import known_actions

    loaded = find_blueprint(ref, known_actions=known_actions())
    document = {
        "id": loaded.id,
        "path": str(loaded.path),
        "hash": loaded.source_hash,
        "blueprint": loaded.blueprint.model_dump(mode="json", by_alias=True,
                                                 exclude_none=True),
        "prompt_files": loaded.prompt_files,
    }
    if as_json:
        emit_json(document)
        return
    import yaml

    stdout(f"# source: {loaded.path}")
    stdout(f"# hash: {loaded.source_hash}")
    stdout(yaml.safe_dump(document["blueprint"], sort_keys=False, allow_unicode=True).rstrip())


@app.command("schema")
def schema() -> None:
    """Print the JSON Schema of the blueprint format (as shipped in schemas/)."""
    from wardian.blueprints.jsonschema_export import blueprint_json_schema_text

    typer.echo(blueprint_json_schema_text(), nl=False)
