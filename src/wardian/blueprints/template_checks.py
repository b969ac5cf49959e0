"""Template checks for blueprint validation: syntax, names, references and step order.

Each template (a `when` expression, a `with:`/`payload:` value, an inline or file prompt)
is parsed, never compiled or rendered. Reported: syntax errors; names outside ``inputs``,
``invocation``, ``steps`` and ``roles``; undeclared inputs and roles; unknown invocation
fields, steps and step fields; a step referring to itself or a later step; included
templates missing or outside the blueprint's folder. Each template's reads of an earlier
step's output, and each parsed `when`, are kept for the skipped-output warnings
(`wardian.blueprints.skip_checks`).

Spec: docs/blueprint-guide.md (loading and errors; templates).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wardian.blueprints.errors import Problem, format_path, nearest

if TYPE_CHECKING:
    from wardian.blueprints.skip_checks import OutputRead
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = ["TemplateChecker"]


class TemplateChecker:
    """Checks template syntax and names for one blueprint (a `LoadedBlueprint`); appends
    `Problem`s to `problems`."""

    def __init__(self, loaded: LoadedBlueprint, name: str, problems: list[Problem],
                 step_index: dict[str, int], *, unknown_steps_ok: bool = False) -> None:
        """`unknown_steps_ok`: a step's id is broken, so a reference to a step that is not
        in `step_index` is not reported (it may name that step)."""
        self.unknown_steps_ok = unknown_steps_ok
        self.reads: list[OutputRead] = []
        """Every template's reads of an earlier step's output (`skip_checks`)."""
        self.when_asts: dict[int, Any] = {}
        """Step index -> its parsed `when` expression."""
        self.loaded = loaded
        self.name = name
        self.problems = problems
        self.step_index = step_index
        self.env = loaded.engine.env

    def check_values(self, loc: tuple[Any, ...], value: Any, index: int) -> None:
        """Check every template string inside a `with:`/`payload:` value (recursively).

        Args:
            loc: the field path of `value` (``("steps", 2, "with")``).
            value: a string, list or mapping from the YAML.
            index: the position of the step the value belongs to (for step-order checks).
        """
        from wardian.blueprints.templates import is_whole_expression

        if isinstance(value, str):
            if "{" in value:
                expr = is_whole_expression(value)
                if expr is not None:
                    self.check(loc, expr, index, expression=True)
                else:
                    self.check(loc, value, index, expression=False)
        elif isinstance(value, dict):
            for key, item in value.items():
                self.check_values((*loc, key), item, index)
        elif isinstance(value, list):
            for pos, item in enumerate(value):
                self.check_values((*loc, pos), item, index)

    def check_prompt(self, base: tuple[Any, ...], step: Any, index: int) -> None:
        """Check a role step's prompt (inline, or a file inside the blueprint's folder) and
        record its source in `loaded.prompts` / `loaded.prompt_files`."""
        from wardian.blueprints.schema import PromptFile

        marks = self.loaded.marks
        if isinstance(step.prompt, PromptFile):
            loc = (*base, "prompt", "file")
            file_name = step.prompt.file
            folder = self.loaded.folder.resolve()
            target = (folder / file_name).resolve()
            if Path(file_name).is_absolute() or (folder not in target.parents):
                self.problems.append(Problem(
                    self.name, *marks.value(loc), format_path(loc),
                    "prompt file outside the blueprint folder",
                    expected="a file name inside the blueprint's folder",
                    found=repr(file_name), kind="reference"))
                return
            if not target.is_file():
                candidates = [p.name for p in folder.glob("*.j2")]
                self.problems.append(Problem(
                    self.name, *marks.value(loc), format_path(loc), "prompt file not found",
                    expected="a template file next to the blueprint",
                    found=f"no file {file_name!r}", suggestion=nearest(file_name, candidates),
                    kind="reference"))
                return
            from wardian._fs import read_regular_file
            from wardian.blueprints.loader import MAX_BLUEPRINT_BYTES

            try:
                source = read_regular_file(target, MAX_BLUEPRINT_BYTES).decode("utf-8")
            except (OSError, ValueError) as exc:  # too large, not a file, not UTF-8
                self.problems.append(Problem(
                    self.name, *marks.value(loc), format_path(loc),
                    f"prompt file cannot be used: {exc}",
                    expected=f"a UTF-8 template file of at most {MAX_BLUEPRINT_BYTES:,} bytes",
                    found=file_name, kind="limit"))
                return
            self.loaded.prompts[step.id] = source
            self.loaded.prompt_files[step.id] = file_name
            rel = str(Path(self.name).parent / file_name) if self.name else file_name
            self.check(loc, source, index, expression=False, file_display=rel)
        else:
            self.loaded.prompts[step.id] = step.prompt
            self.check((*base, "prompt"), step.prompt, index, expression=False)

    def _report(self, loc: tuple[Any, ...], message: str, expected: str, found: str,
                suggestion: str | None = None, *, line: int = 1,
                file_display: str | None = None, kind: str = "template") -> None:
        if file_display is not None:
            position = (line, 1)
            file = file_display
        else:
            position = self.loaded.marks.value(loc)
            if line > 1:
                message = f"{message} (template line {line})"
            file = self.name
        self.problems.append(Problem(file, *position, format_path(loc), message,
                                     expected=expected, found=found, suggestion=suggestion,
                                     kind=kind))

    def check(self, loc: tuple[Any, ...], source: str, index: int, *, expression: bool,
              file_display: str | None = None) -> None:
        """Parse one template (never render it) and report its problems.

        Args:
            loc: the field path the template sits at.
            source: the template text (an expression when `expression`).
            index: the position of the step it belongs to.
            expression: parse as a bare Jinja2 expression (`when`, whole ``{{ }}`` values).
            file_display: for a prompt file, the file name used in messages (positions are
                then template lines, not YAML marks).
        """
        from jinja2 import TemplateSyntaxError, meta, nodes

        try:
            if expression:  # what compile_expression parses, without compiling it
                from jinja2.parser import Parser

                parser = Parser(self.env, source, state="variable")
                expr = parser.parse_expression()
                if not parser.stream.eos:
                    raise TemplateSyntaxError("chunk after expression",
                                              parser.stream.current.lineno, None, None)
                ast = nodes.Template([nodes.Output([expr], lineno=1)], lineno=1)
            else:
                ast = self.env.parse(source)
        except TemplateSyntaxError as exc:
            shown = source
            if file_display is not None or "\n" in source:
                lines = source.splitlines() or [""]
                shown = lines[min(max((exc.lineno or 1) - 1, 0), len(lines) - 1)]
            self._report(loc, f"template syntax error: {exc.message}",
                         expected="a valid Jinja2 " + ("expression" if expression
                                                       else "template"),
                         found=repr(shown if len(shown) <= 60 else shown[:57] + "..."),
                         line=exc.lineno or 1, file_display=file_display)
            return
        from wardian.blueprints.templates import CONTEXT_NAMES

        known = set(CONTEXT_NAMES) | set(self.env.globals)
        for undeclared in sorted(_undeclared(ast, nodes)):
            if undeclared not in known:
                line = _name_line(ast, undeclared)
                self._report(loc, f"undefined variable {undeclared!r}",
                             expected="one of " + ", ".join(CONTEXT_NAMES),
                             found=repr(undeclared),
                             suggestion=nearest(undeclared, CONTEXT_NAMES),
                             line=line, file_display=file_display)
        for ref in meta.find_referenced_templates(ast):
            if ref is None:
                continue
            target = (self.loaded.folder / ref).resolve()
            folder = self.loaded.folder.resolve()
            if folder not in target.parents or not target.is_file():
                self._report(loc, f"included template {ref!r} not found",
                             expected="a template file inside the blueprint folder",
                             found=repr(ref), file_display=file_display, kind="reference")
        self._walk(ast, None, loc, index, file_display, nodes)
        if expression and loc[-1:] == ("when",):
            self.when_asts[index] = expr  # the parsed `when` (set when expression)
        self._collect_reads(ast, loc, index, file_display, expression, nodes)

    def _collect_reads(self, ast: Any, loc: tuple[Any, ...], index: int,
                       file_display: str | None, expression: bool, nodes: Any) -> None:
        from wardian.blueprints.skip_checks import OutputRead, guarded_steps, step_field

        guarded = guarded_steps(ast, nodes)
        body = ast.body[0].nodes[0] if expression else None
        done: set[str] = set()
        for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
            ref = step_field(node, nodes)
            if ref is None or ref[1] != "output" or ref[0] in done:
                continue
            done.add(ref[0])
            line = node.lineno or 1
            if file_display is not None:
                position, note = (file_display, line, 1), ""
            else:
                position = (self.name, *self.loaded.marks.value(loc))
                note = f" (template line {line})" if line > 1 else ""
            self.reads.append(OutputRead(index, ref[0], loc, position, note,
                                         whole=body is node, guarded=ref[0] in guarded))

    def _walk(self, node: Any, parent: Any, loc: tuple[Any, ...], index: int,
              file_display: str | None, nodes: Any) -> None:
        if isinstance(node, nodes.Getattr | nodes.Getitem) and isinstance(node.node, nodes.Name):
            self._check_ref(node, parent, loc, index, file_display, nodes)
        for child in node.iter_child_nodes():
            self._walk(child, node, loc, index, file_display, nodes)

    def _check_ref(self, node: Any, parent: Any, loc: tuple[Any, ...], index: int,
                   file_display: str | None, nodes: Any) -> None:
        from wardian.blueprints.templates import INVOCATION_KEYS, STEP_KEYS

        root = node.node.name
        attr = _attr(node, nodes)
        if attr is None:
            return
        line = node.lineno or 1
        bp = self.loaded.blueprint

        def report(message: str, expected: str, candidates: Iterable[str]) -> None:
            self._report(loc, message, expected=expected, found=repr(attr),
                         suggestion=nearest(attr, candidates), line=line,
                         file_display=file_display, kind="reference")

        if root == "inputs" and attr not in bp.inputs:
            report(f"undefined input {attr!r}",
                   "an input declared under 'inputs' (" + (", ".join(sorted(bp.inputs))
                                                          or "none are declared") + ")",
                   bp.inputs)
        elif root == "roles" and attr not in bp.roles:
            report(f"undefined role {attr!r}", "a role declared under 'roles' ("
                   + (", ".join(sorted(bp.roles)) or "none are declared") + ")", bp.roles)
        elif root == "invocation" and attr not in INVOCATION_KEYS:
            report(f"unknown invocation field {attr!r}", "one of " + ", ".join(INVOCATION_KEYS),
                   INVOCATION_KEYS)
        elif root == "steps":
            current = bp.steps[index].id
            if attr not in self.step_index:
                if self.unknown_steps_ok:
                    return
                report(f"unknown step {attr!r}", "the id of an earlier step",
                       [s.id for s in bp.steps[:index]])
            elif self.step_index[attr] >= index:
                what = "itself" if attr == current else "a later step"
                self._report(loc, f"step {current!r} refers to {what} {attr!r}",
                             expected=f"a step that runs before {current!r}",
                             found=f"steps[{self.step_index[attr]}] {attr!r}", line=line,
                             file_display=file_display, kind="order")
            elif isinstance(parent, nodes.Getattr | nodes.Getitem) and parent.node is node:
                field_name = _attr(parent, nodes)
                if field_name is not None and field_name not in STEP_KEYS:
                    self._report(loc, f"unknown step field {field_name!r}",
                                 expected="one of " + ", ".join(STEP_KEYS),
                                 found=repr(field_name),
                                 suggestion=nearest(field_name, STEP_KEYS), line=line,
                                 file_display=file_display, kind="reference")


def _undeclared(ast: Any, nodes: Any) -> set[str]:
    """Names read but never assigned in the template (a fast, scope-blind version of
    jinja2.meta.find_undeclared_variables, which compiles the template)."""
    loaded: set[str] = set()
    stored: set[str] = set()
    for node in ast.find_all(nodes.Name):
        (loaded if node.ctx == "load" else stored).add(node.name)
    for node in ast.find_all((nodes.Macro, nodes.CallBlock)):
        stored.update(arg.name for arg in node.args)
        stored.update(("caller", "varargs", "kwargs"))
    stored.add("loop")
    return loaded - stored


def _attr(node: Any, nodes: Any) -> str | None:
    if isinstance(node, nodes.Getattr):
        return str(node.attr)
    if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
        return str(node.arg.value)
    return None


def _name_line(ast: Any, name: str) -> int:
    from jinja2 import nodes

    for node in ast.find_all(nodes.Name):
        if node.name == name and node.ctx == "load":
            return int(node.lineno or 1)
    return 1
