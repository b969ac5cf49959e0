"""Load and validate blueprints: schema, cross references and templates, with positions.

Stages, each reporting every problem it can find (never stopping at the first):

1. YAML (`loader.parse_yaml`): syntax errors, duplicate keys.
2. Schema (`schema.Blueprint`, pydantic): pydantic errors are translated here into
   `Problem`s with the key's or value's mark, the field path, expected/found, and the
   nearest valid key for unknown keys. A step's or input's own consistency check, which
   pydantic skips while one of its fields is broken, is run again without those fields,
   and a file that fails the schema is still cross-checked (`wardian.blueprints.partial`),
   so one pass lists every problem of the file.
3. Cross references: duplicate step ids, unknown roles, unknown actions, prompt template
   files, output schemas (``{"$ref": NAME}`` is resolved in the output schema registry,
   `wardian.blueprints.output_schemas`, where memory registers ``wardian:curator-batch``).
4. Templates: syntax; names outside ``inputs/invocation/steps/roles``; unknown inputs,
   roles, invocation fields, steps, step fields; a step referring to itself or a later step.
5. Warnings, for a valid file only (`FileReport.warnings`; they refuse nothing): a read of
   the output of a step that its `when` can skip, unguarded (`skip_checks`).

`load_blueprint` raises `BlueprintError`; `validate_file`/`validate_paths` return problems.

**Action names come from the caller.** The action registry lives in the engine, a layer
above this package (DESIGN.md: dependencies point one way), so the validator never looks
it up: every function here takes ``known_actions`` — the registered action names, i.e.
``wardian.engine.actions.known_actions()`` — and reports a step whose ``action:`` is not
among them. ``known_actions=None`` (the default) means *action names are not checked*;
everything else still is. The engine (executor, run creation, manual runs) and the CLI
(``blueprint validate/list/show``, ``library list``) always pass the registry's names.

Spec: docs/blueprint-guide.md (loading and errors).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wardian.blueprints.errors import (
    BlueprintInvalid,
    BlueprintSyntaxError,
    Problem,
    format_path,
    nearest,
)
from wardian.blueprints.loader import Marks, parse_yaml
from wardian.blueprints.skip_checks import OutputRead
from wardian.blueprints.template_checks import TemplateChecker

if TYPE_CHECKING:  # pydantic models and Jinja2: imported when a blueprint is validated
    from wardian.blueprints.schema import Blueprint
    from wardian.blueprints.templates import TemplateEngine

__all__ = [
    "FileReport",
    "LoadedBlueprint",
    "load_blueprint",
    "resolve_output_ref",
    "validate_file",
    "validate_paths",
]

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class LoadedBlueprint:
    """A valid blueprint with everything the engine needs.

    Attributes:
        blueprint: the parsed model.
        path: the YAML file.
        source_hash: ``sha256:<hex>`` over the YAML and the prompt template files it uses.
        prompts: step id -> prompt template source (inline text or the file's contents).
        prompt_files: step id -> template file name, for file prompts.
        outputs: step id -> the resolved JSON Schema of a role step's answer.
        output_refs: step id -> the registered output schema name, for role steps whose
            ``output`` is ``{"$ref": NAME}`` (their answers are checked by that entry).
    """

    blueprint: Blueprint
    path: Path
    source_hash: str
    marks: Marks
    prompts: dict[str, str] = field(default_factory=dict)
    prompt_files: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_refs: dict[str, str] = field(default_factory=dict)
    _engine: TemplateEngine | None = None

    @property
    def id(self) -> str:
        """The blueprint id."""
        return str(self.blueprint.blueprint.id)

    @property
    def folder(self) -> Path:
        """The folder templates are loaded from."""
        return self.path.parent

    def unchanged_on_disk(self) -> bool:
        """True when the YAML and its prompt files still hash to `source_hash` (they are
        read and hashed, not validated again); False when they changed or cannot be read.

        Lets a caller handed a validated blueprint (the drain loads one per event) run it
        only while it is exactly what is on disk. Read-only."""
        try:
            raw = self.path.read_bytes()
            prompts = {step_id: (self.folder / name).read_text(encoding="utf-8")
                       for step_id, name in self.prompt_files.items()}
        except (OSError, UnicodeDecodeError):
            return False
        return _source_hash(raw, self.prompt_files, prompts) == self.source_hash

    def check_output(self, step_id: str, value: Any) -> None:
        """Accept or reject a role step's answer: by the registered output schema's check
        for ``{"$ref": NAME}`` outputs, else by the step's inline JSON Schema. The engine
        calls this once, when it accepts a provider's result.

        Raises:
            ValidationError: the answer does not match; ``path`` is its JSON path.
            KeyError: `step_id` has no output schema.
        """
        from wardian.blueprints.output_schemas import check_json_schema, get_output_schema

        ref = self.output_refs.get(step_id)
        if ref is not None:
            get_output_schema(ref).check_value(value)
        else:
            check_json_schema(value, self.outputs[step_id])

    @property
    def engine(self) -> TemplateEngine:
        """The `TemplateEngine` for this blueprint's folder (created on first use)."""
        if self._engine is None:
            from wardian.blueprints.templates import TemplateEngine

            self._engine = TemplateEngine(self.folder)
        return self._engine


@dataclass
class FileReport:
    """The outcome of validating one file: the blueprint (when valid) or its problems, and
    the warnings of a valid file (`wardian.blueprints.skip_checks`; they refuse nothing)."""

    path: Path
    loaded: LoadedBlueprint | None
    problems: list[Problem]
    warnings: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file has no problems."""
        return not self.problems


def resolve_output_ref(ref: str) -> dict[str, Any]:
    """The JSON Schema registered as `ref` (``output: {"$ref": ref}``), a fresh copy.

    Raises:
        KeyError: an unknown name (`wardian.blueprints.output_schemas`).
    """
    from wardian.blueprints.output_schemas import get_output_schema

    return get_output_schema(ref).schema()


def _source_hash(raw: bytes, prompt_files: dict[str, str], prompts: dict[str, str]) -> str:
    """``sha256:<hex>`` over the YAML bytes and each prompt file's name and text."""
    digest = hashlib.sha256(raw)
    for step_id in sorted(prompt_files):
        digest.update(b"\0" + prompt_files[step_id].encode() + b"\0")
        digest.update(prompts[step_id].encode())
    return "sha256:" + digest.hexdigest()


def load_blueprint(path: Path | str, *, display: str | None = None,
                   known_actions: Collection[str] | None = None) -> LoadedBlueprint:
    """Load and fully validate one blueprint file.

    Args:
        path: the YAML file.
        display: the file name used in messages (default: `path` as given).
        known_actions: the registered action names (the engine's ``known_actions()``);
            None = action names are not checked (see the module docstring).

    Raises:
        BlueprintSyntaxError: the YAML cannot be parsed (exit 2).
        BlueprintInvalid: schema/reference/template problems; `.problems` lists them all.
    """
    report = validate_file(path, display=display, known_actions=known_actions)
    if report.problems:
        if report.problems[0].kind == "syntax":
            raise BlueprintSyntaxError(report.problems)
        raise BlueprintInvalid(report.problems)
    assert report.loaded is not None
    return report.loaded


def validate_paths(paths: Iterable[Path | str], *,
                   known_actions: Collection[str] | None = None,
                   accepts_skipped: Mapping[str, Collection[str]] | None = None
                   ) -> list[FileReport]:
    """Validate files and folders (folders: every ``*.yaml``/``*.yml`` below them, sorted).

    One bad file never hides another: each gets its own `FileReport`. Read-only.
    `known_actions` and `accepts_skipped` as in `validate_file`.
    """
    reports: list[FileReport] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in YAML_SUFFIXES)
            for file in files:
                reports.append(validate_file(file, known_actions=known_actions,
                                             accepts_skipped=accepts_skipped))
        else:
            reports.append(validate_file(path, known_actions=known_actions,
                                         accepts_skipped=accepts_skipped))
    return reports


def validate_file(path: Path | str, *, display: str | None = None,
                  known_actions: Collection[str] | None = None,
                  accepts_skipped: Mapping[str, Collection[str]] | None = None
                  ) -> FileReport:
    """Validate one blueprint file and report every problem (read-only; never raises for
    a defect in the file).

    Args:
        path: the YAML file.
        display: the file name used in messages (default: `path` as given).
        known_actions: the registered action names (the engine's ``known_actions()``); a
            step whose ``action:`` is not among them is a problem that lists them. None =
            action names are not checked (see the module docstring).
        accepts_skipped: action name -> the ``with:`` arguments that accept the null
            output of a step skipped by its `when` (the engine's
            ``actions_accepting_skipped()``); a valid file's unguarded reads of a
            skippable output are warnings (`skip_checks`). None = no action does.
    """
    path = Path(path)
    name = display if display is not None else str(path)
    from wardian._fs import FileTooLarge, NotRegularFile, read_regular_file
    from wardian.blueprints.loader import MAX_BLUEPRINT_BYTES

    try:
        raw = read_regular_file(path, MAX_BLUEPRINT_BYTES)
        text = raw.decode("utf-8")
    except (NotRegularFile, FileTooLarge) as exc:
        limit = isinstance(exc, FileTooLarge)
        return FileReport(path, None, [Problem(
            name, 1, 1, "(root)",
            f"blueprint file is larger than {MAX_BLUEPRINT_BYTES:,} bytes (1 MiB)" if limit
            else f"cannot read file: it is {getattr(exc, 'kind', 'not a regular file')}",
            expected="a YAML file of at most 1 MiB" if limit else "a regular YAML file",
            found="a larger file" if limit else getattr(exc, "kind", "something else"),
            kind="limit" if limit else "io")])
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return FileReport(path, None, [Problem(name, 1, 1, "(root)", f"cannot read file: {why}",
                                               expected="a readable UTF-8 YAML file",
                                               found="no file" if isinstance(
                                                   exc, FileNotFoundError) else why,
                                               kind="io")])
    parsed = parse_yaml(text, name)
    if parsed.data is None:
        return FileReport(path, None, parsed.problems)
    problems = list(parsed.problems)
    data, marks = parsed.data, parsed.marks
    if not isinstance(data, dict):
        from wardian.blueprints.schema import describe

        problems.append(Problem(name, *marks.value(()), "(root)", "not a blueprint",
                                expected="a mapping with blueprint, roles, inputs, triggers and "
                                "steps", found=describe(data)))
        return FileReport(path, None, problems)
    model = _schema_check(data, marks, name, problems)
    if model is None:
        # The schema failed elsewhere; when the steps, roles and inputs are sound, still
        # check references and templates so one run of `validate` shows everything.
        from wardian.blueprints.partial import partial_blueprint

        partial = partial_blueprint(data)
        if partial is not None:
            _cross_check(LoadedBlueprint(partial, path, "", marks), name, problems,
                         known_actions)
        return FileReport(path, None, _sorted(problems, name))
    loaded = LoadedBlueprint(model, path, "", marks)
    checker = _cross_check(loaded, name, problems, known_actions)
    if problems:
        return FileReport(path, None, _sorted(problems, name))
    loaded.source_hash = _source_hash(raw, loaded.prompt_files, loaded.prompts)
    from wardian.blueprints.skip_checks import skipped_output_warnings

    warnings = skipped_output_warnings(loaded, checker.reads, checker.when_asts,
                                       accepts_skipped or {})
    return FileReport(path, loaded, [], _sorted(warnings, name))


def _sorted(problems: list[Problem], name: str) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.file != name, p.file, p.line, p.column))


# --- schema -----------------------------------------------------------------------------


def _model_keys(loc: Sequence[str | int]) -> list[str] | None:
    from wardian.blueprints import schema

    model: Any = None
    if len(loc) == 0:
        model = schema.Blueprint
    elif loc == ("blueprint",):
        model = schema.Meta
    elif len(loc) == 2 and loc[0] == "inputs":
        model = schema.InputSpec
    elif len(loc) == 2 and loc[0] == "steps" and isinstance(loc[1], int):
        model = schema.Step
    elif len(loc) == 3 and loc[0] == "steps" and loc[2] == "retry":
        model = schema.Retry
    elif len(loc) == 3 and loc[0] == "steps" and loc[2] == "prompt":
        model = schema.PromptFile
    if model is None:
        return None
    return [f.alias or n for n, f in model.model_fields.items()]


def _clean_loc(data: Any, loc: Sequence[Any], error_type: str) -> tuple[tuple[Any, ...], bool]:
    """Drop pydantic union tags from `loc`, keeping only keys that exist in `data`."""
    out: list[Any] = []
    tagged = False
    current = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        in_dict = isinstance(current, dict) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and part < len(current)
        if in_dict or in_list:
            out.append(part)
            current = current[part]
        elif last and error_type in ("missing", "extra_forbidden") and isinstance(current, dict):
            out.append(part)
        else:
            tagged = True
    return tuple(out), tagged


def _schema_check(data: dict[str, Any], marks: Marks, name: str,
                  problems: list[Problem]) -> Any:
    import pydantic

    from wardian.blueprints.schema import Blueprint, describe

    try:
        return Blueprint.model_validate(data)
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False)
    from wardian.blueprints.partial import hidden_model_errors

    # A step's or input's own consistency check runs only when all its fields are valid:
    # run it again without the broken fields so one pass reports both.
    errors = [*errors, *hidden_model_errors(data, errors)]
    cleaned = []
    for err in errors:
        loc, tagged = _clean_loc(data, err["loc"], err["type"])
        cleaned.append((loc, tagged, err))
    # Union branches: keep the deepest match; drop a branch's error when another branch
    # got further into the same value.
    tagged_locs = [loc for loc, tagged, _ in cleaned if tagged]
    kept = []
    for loc, tagged, err in cleaned:
        if tagged and any(len(o) > len(loc) and o[: len(loc)] == loc for o in tagged_locs):
            continue
        kept.append((loc, tagged, err))
    # A typo'd key reports as "unknown key" with a suggestion; drop its "missing" twin.
    suggested: set[tuple[Any, ...]] = set()
    for loc, _tagged, err in kept:
        if err["type"] == "extra_forbidden":
            keys = _model_keys(loc[:-1]) or []
            guess = nearest(str(loc[-1]), keys)
            if guess:
                suggested.add((*loc[:-1], guess))
    seen: dict[tuple[Any, ...], int] = {}
    for loc, tagged, err in kept:
        if err["type"] == "missing" and loc in suggested:
            continue
        problem = _translate(err, loc, data, marks, name, describe)
        if tagged and loc in seen:  # several union branches rejected the same value
            index = seen[loc]
            old = problems[index]
            if problem.expected and old.expected and problem.expected not in old.expected:
                problems[index] = Problem(old.file, old.line, old.column, old.path,
                                          old.message, f"{old.expected} or {problem.expected}",
                                          old.found, old.suggestion, old.kind)
            continue
        seen[loc] = len(problems)
        problems.append(problem)
    return None


def _translate(err: Any, loc: tuple[Any, ...], data: Any, marks: Marks, name: str,
               describe: Any) -> Problem:
    kind = err["type"]
    path = format_path(loc)
    ctx = err.get("ctx") or {}
    value = err.get("input")
    if kind == "extra_forbidden":
        keys = _model_keys(loc[:-1]) or []
        return Problem(name, *marks.key(loc), path, f"unknown key {loc[-1]!r}",
                       expected="one of " + ", ".join(keys), found=repr(loc[-1]),
                       suggestion=nearest(str(loc[-1]), keys))
    if kind == "missing":
        return Problem(name, *marks.value(loc[:-1]), path, f"missing required key {loc[-1]!r}",
                       expected=f"a value for {loc[-1]!r}", found="none")
    if kind == "wardian":
        return Problem(name, *marks.value(loc), path, str(ctx.get("what", "invalid value")),
                       expected=str(ctx["expected"]), found=str(ctx["found"]))
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected")))
        return Problem(name, *marks.value(loc), path, "invalid value",
                       expected="one of " + str(ctx.get("expected")), found=describe(value),
                       suggestion=nearest(str(value), choices) if isinstance(value, str)
                       else None)
    if kind == "too_short":
        return Problem(name, *marks.value(loc), path, "too few items",
                       expected=f"at least {ctx.get('min_length')} item(s)",
                       found=f"{ctx.get('actual_length')}")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        ops = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">",
               "less_than": "<"}
        bound = next(iter(ctx.values()), "?")
        return Problem(name, *marks.value(loc), path, "invalid value",
                       expected=f"a value {ops[kind]} {bound}", found=describe(value))
    message = str(err["msg"]).split(", unable to")[0]
    expected = message
    for prefix in ("Input should be ", "Value should be "):
        if message.startswith(prefix):
            expected = message[len(prefix):]
    expected = expected.replace("valid dictionary", "mapping").replace("a valid ", "a ")
    return Problem(name, *marks.value(loc), path, "invalid value", expected=expected,
                   found=describe(value))


# --- cross references and templates -------------------------------------------------------


def _cross_check(loaded: LoadedBlueprint, name: str, problems: list[Problem],
                 known_actions: Collection[str] | None) -> TemplateChecker:
    from wardian.blueprints.schema import NAME_RE

    bp = loaded.blueprint
    marks = loaded.marks
    for section, what in (("roles", "role"), ("inputs", "input")):
        for key in getattr(bp, section):
            if not NAME_RE.match(key):
                problems.append(Problem(
                    name, *marks.key((section, key)), format_path((section, key)),
                    f"invalid {what} name", expected="a name of lowercase letters, digits and "
                    "'_' starting with a letter (usable in templates)", found=repr(key)))
    minimum = bp.blueprint.min_wardian
    if minimum is not None:
        from wardian import __version__

        wanted, have = _version_tuple(minimum), _version_tuple(__version__)
        loc = ("blueprint", "min_wardian")
        if wanted is None:
            problems.append(Problem(name, *marks.value(loc), format_path(loc),
                                    "invalid version", expected="a version such as '0.1.0'",
                                    found=repr(minimum)))
        elif have is not None and wanted > have:
            problems.append(Problem(name, *marks.value(loc), format_path(loc),
                                    "needs a newer Wardian", expected=f"at most {__version__} "
                                    "(this Wardian)", found=repr(minimum), kind="reference"))
    step_index: dict[str, int] = {}
    for index, step in enumerate(bp.steps):
        if step.id in step_index:
            first = step_index[step.id]
            problems.append(Problem(
                name, *marks.value(("steps", index, "id")), format_path(("steps", index, "id")),
                f"duplicate step id {step.id!r}", expected="a unique step id",
                found=f"{step.id!r} again (first used by steps[{first}])", kind="duplicate"))
        else:
            step_index[step.id] = index
    from wardian.blueprints.schema import SLUG_RE

    # A step whose id is broken (reported by the schema) may be the one a reference
    # names: unknown step names are not reported on top of it.
    analyser = TemplateChecker(loaded, name, problems, step_index,
                               unknown_steps_ok=any(not SLUG_RE.match(s.id) for s in bp.steps))
    for index, step in enumerate(bp.steps):
        base = ("steps", index)
        if (step.action is not None and known_actions is not None
                and step.action not in known_actions):
            actions = sorted(known_actions)
            problems.append(Problem(
                name, *marks.value((*base, "action")), format_path((*base, "action")),
                f"unknown action {step.action!r}",
                expected="a registered action (" + ", ".join(actions) + ")",
                found=repr(step.action), suggestion=nearest(step.action, actions),
                kind="reference"))
        if step.role is not None and step.role not in bp.roles:
            declared = ", ".join(sorted(bp.roles)) or "none are declared"
            problems.append(Problem(
                name, *marks.value((*base, "role")), format_path((*base, "role")),
                f"unknown role {step.role!r}",
                expected=f"a role declared under 'roles' ({declared})", found=repr(step.role),
                suggestion=nearest(step.role, bp.roles), kind="reference"))
        if step.when is not None:
            analyser.check((*base, "when"), step.when, index, expression=True)
        if step.with_:
            analyser.check_values((*base, "with"), step.with_, index)
            if step.action is not None:
                _check_step_references(loaded, base, step.with_, index, step_index, name,
                                       problems, analyser.reads)
        if step.payload:
            analyser.check_values((*base, "payload"), step.payload, index)
        if step.prompt is not None:
            analyser.check_prompt(base, step, index)
        if step.output is not None:
            _check_output(loaded, base, step, name, problems)
    return analyser


def _check_step_references(loaded: LoadedBlueprint, base: tuple[Any, ...],
                           with_: dict[str, Any], index: int, step_index: dict[str, int],
                           name: str, problems: list[Problem],
                           reads: list[OutputRead]) -> None:
    """Each ``<name>_step: ID`` argument of an action step is a step reference: `ID` must be
    a step that runs before this one, and ``<name>`` (the value it stands for) not given
    as well. The engine hands the action that step's output as ``<name>``; a valid
    reference is added to `reads` as a whole read of that output (so a skippable step
    named here warns as a template reading it would)."""
    marks = loaded.marks
    steps = loaded.blueprint.steps
    for key, value in with_.items():
        if not isinstance(key, str) or not key.endswith("_step") or key == "_step":
            continue
        loc = (*base, "with", key)
        target = key[:-len("_step")]
        earlier = ", ".join(s.id for s in steps[:index]) or "none"
        if target in with_:
            problems.append(Problem(
                name, *marks.value(loc), format_path(loc),
                f"both {target!r} and its step reference {key!r} are given",
                expected=f"either `{key}: STEP_ID` (preferred) or `{target}: ...`",
                found=f"{key}: {value!r}", kind="reference"))
            continue
        if not isinstance(value, str) or "{" in value:
            problems.append(Problem(
                name, *marks.value(loc), format_path(loc),
                f"step reference {key!r} must name a step by its id",
                expected=f"the id of an earlier step ({earlier})", found=repr(value),
                kind="reference"))
            continue
        at = step_index.get(value)
        if at is None or at >= index:
            why = ("names no step" if at is None else
                   "names this step" if at == index else "names a later step")
            problems.append(Problem(
                name, *marks.value(loc), format_path(loc),
                f"step reference {key!r} {why}: {value!r}",
                expected=f"the id of an earlier step ({earlier})", found=repr(value),
                suggestion=nearest(value, [s.id for s in steps[:index]]) if at is None
                else None, kind="reference"))
            continue
        reads.append(OutputRead(index, value, loc, (name, *marks.value(loc)), "",
                                whole=True, guarded=False))


def _check_output(loaded: LoadedBlueprint, base: tuple[Any, ...], step: Any, name: str,
                  problems: list[Problem]) -> None:
    marks = loaded.marks
    output = step.output
    if set(output) == {"$ref"}:
        from wardian.blueprints.output_schemas import known_output_schemas, plugin_errors

        ref = str(output["$ref"])
        try:
            loaded.outputs[step.id] = resolve_output_ref(ref)
            loaded.output_refs[step.id] = ref
        except KeyError:
            loc = (*base, "output", "$ref")
            known = list(known_output_schemas())
            expected = ("one of " + ", ".join(known) if known
                        else "a registered output schema (none are registered)")
            broken = plugin_errors()
            if broken:
                expected += "; plugin errors: " + "; ".join(broken)
            problems.append(Problem(
                name, *marks.value(loc), format_path(loc), "unknown output schema reference",
                expected=expected, found=repr(output["$ref"]),
                suggestion=nearest(ref, known), kind="reference"))
        return
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(output)
    except jsonschema.SchemaError as exc:
        loc = (*base, "output", *exc.path)
        problems.append(Problem(
            name, *marks.value(loc), format_path(loc), "invalid JSON Schema",
            expected=(_TYPES if exc.path and exc.path[-1] == "type"
                      else _first_line(exc.validator_value, exc.validator)),
            found=_short(exc.instance)))
        return
    loaded.outputs[step.id] = output


_TYPES = "a JSON Schema type (array, boolean, integer, null, number, object or string)"


def _first_line(validator_value: Any, validator: Any) -> str:
    if validator in ("anyOf", "$ref"):
        return "a valid JSON Schema keyword value"
    return f"{validator} {validator_value!r}"[:120]


def _short(value: Any) -> str:
    from wardian.blueprints.schema import describe

    return describe(value)


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text).strip())
    if not match:
        return None
    return tuple(int(g) for g in match.groups(default="0"))
