"""Blueprints and their libraries as the operator handles them: ``wardian blueprint
validate|list|show|schema`` and ``wardian library list|init`` (CLI.md "blueprint",
"library").

Every check runs with the engine's registered actions (`wardian.engine.actions`), so a
blueprint naming an unknown action fails here exactly as it would at run start. The
blueprint models (pydantic) are imported inside each function: ``blueprint schema`` and
``library init`` never pay for what they do not use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from wardian.blueprints.errors import Problem
    from wardian.blueprints.library import LibraryEntry
    from wardian.blueprints.validate import FileReport

__all__ = ["blueprint_schema_text", "init_library", "list_blueprints", "show_blueprint",
           "validate_blueprints"]


def validate_blueprints(paths: Iterable[Path | str], *,
                        assignments: str | None = None) -> list[FileReport]:
    """Check blueprint files (folders are searched for ``*.yaml``/``*.yml``); one report per
    file with every problem in it (file:line, field path, how to fix), and the warnings of
    valid files (a skippable step's output read unguarded). Read-only.

    Args:
        assignments: ``--assignments`` JSON: also check each valid file's roles against
            it (as a run start would, without the model catalog), and report each role
            step whose provider cannot answer its output schema at the step's
            ``output`` (kind ``provider``).
    """
    from wardian.blueprints.validate import FileReport, validate_paths
    from wardian.engine.actions import actions_accepting_skipped, known_actions

    reports = validate_paths(paths, known_actions=known_actions(),
                             accepts_skipped=actions_accepting_skipped())
    if assignments is None:
        return reports
    checked = []
    for report in reports:
        problems = _assignment_problems(report, assignments) if report.loaded else []
        checked.append(FileReport(report.path, None, problems, report.warnings)
                       if problems else report)
    return checked


def _assignment_problems(report: FileReport, assignments: str) -> list[Problem]:
    from wardian.blueprints.errors import Problem
    from wardian.engine.assignments import (
        check_assignments,
        parse_assignments_json,
        unanswerable_outputs,
    )
    from wardian.errors import WardianError
    from wardian.providers.errors import OutputUnsupported

    loaded = report.loaded
    assert loaded is not None
    name = str(report.path)
    try:
        check_assignments(loaded, assignments, check_catalog=False)
        return []
    except OutputUnsupported:
        refused = unanswerable_outputs(loaded, parse_assignments_json(assignments))
    except WardianError as exc:
        return [Problem(name, 1, 1, "(root)", exc.render(), kind="reference")]
    problems = []
    for error in refused:
        index = int(error.path.split("[")[1].split("]")[0])
        what = (f"output schema {error.output_ref!r}" if error.output_ref
                else "an inline output schema")
        step = loaded.blueprint.steps[index]
        problems.append(Problem(
            name, *loaded.marks.key(("steps", index, "output")), error.path,
            f"role {step.role!r} is assigned to the {error.provider} provider, which cannot "
            f"answer {what}",
            expected=f"an output schema the {error.provider} provider answers ("
                     + (", ".join(error.answerable) or "none") + "), or another provider",
            found=what, kind="provider"))
    return problems


def list_blueprints() -> list[LibraryEntry]:
    """The blueprints of the user and shipped libraries (user copies shadow shipped ones,
    with a note), broken ones with their error. Read-only."""
    from wardian.blueprints.library import list_library
    from wardian.engine.actions import known_actions

    return list_library(known_actions=known_actions())


def show_blueprint(ref: str) -> dict[str, Any]:
    """The resolved blueprint `ref` (id, user library first, or path) with defaults filled
    in, as ``{id, path, hash, blueprint, prompt_files}``. Read-only.

    Raises:
        NotFoundError: no such blueprint. BlueprintError (exit 2): it does not validate.
    """
    from wardian.blueprints.library import find_blueprint
    from wardian.engine.actions import known_actions

    loaded = find_blueprint(ref, known_actions=known_actions())
    return {
        "id": loaded.id,
        "path": str(loaded.path),
        "hash": loaded.source_hash,
        "blueprint": loaded.blueprint.model_dump(mode="json", by_alias=True,
                                                 exclude_none=True),
        "prompt_files": loaded.prompt_files,
    }


def blueprint_schema_text() -> str:
    """The JSON Schema of the blueprint format, as shipped in ``schemas/``."""
    from wardian.blueprints.jsonschema_export import blueprint_json_schema_text

    return blueprint_json_schema_text()


def init_library() -> list[tuple[str, str]]:
    """Copy the shipped samples into the user library; edited files are never overwritten.

    Returns:
        ``(relative path, action)`` per shipped file, sorted by path; the action is
        ``copied``, ``unchanged``, ``updated`` or ``kept (edited)``.

    Raises:
        StoreError: the user library cannot be written (names the file and the reason).
    """
    from wardian.blueprints.library import init_library as copy_samples

    return copy_samples()
