"""Warnings for steps that read the output of a step its `when` can skip.

A step whose `when` is false is recorded as ``skipped`` and its output is null: a later
template that reads ``steps.T.output.field`` then fails the run, and one that passes
``steps.T.output`` on hands null to its action or prints ``None``. `blueprint validate`
warns (never an error: the file still loads and runs) at each such read, naming the
reading step and the skippable one with the line of its `when`, unless the read is
guarded — the author has said what happens when ``T`` is skipped:

* the reading step's own `when` implies ``T``'s: one of its ``and``-joined conditions is
  ``T``'s `when` itself (or it holds each of the conditions ``T``'s `when` joins with
  ``and``), or it tests ``steps.T`` (``steps.T.status == 'succeeded'``,
  ``steps.T.output is not none``);
* the template itself tests ``T``: it reads ``steps.T.status``, tests ``steps.T.output``
  (``is none``, ``is defined``, ``{% if steps.T.output %}``, ``steps.T.output or {}``)
  or gives it a ``default``;
* the reading action declares that the argument accepts a skipped input
  (``register_action(name, accepts_skipped=("batch",))``; ``memory.commit`` and
  ``memory.draft_plan`` take a skipped curator's null ``batch`` as an empty batch) and the
  argument's value is exactly ``{{ steps.T.output }}`` or a step reference to ``T``
  (``batch_step: T``).

Which action arguments accept a skipped input is the engine's to say (its registry sits
above this package): the caller passes `accepts_skipped` (action -> argument names).

Spec: docs/blueprint-guide.md (validation: steps skipped by `when`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wardian.blueprints.errors import Problem

if TYPE_CHECKING:
    from wardian.blueprints.validate import LoadedBlueprint

__all__ = ["OutputRead", "guarded_steps", "skipped_output_warnings", "step_field"]

KIND = "skipped-output"
"""The `Problem.kind` of these warnings."""


@dataclass(frozen=True)
class OutputRead:
    """One template's reads of an earlier step's output.

    Attributes:
        reader: the index of the step the template belongs to.
        target: the id of the step whose output it reads.
        loc: the template's field path (``("steps", 3, "with", "batch")``).
        position: ``(file, line, column)`` where a warning about it points.
        note: text added to the message (the template line, for an inline template).
        whole: the template is exactly ``{{ steps.TARGET.output }}``.
        guarded: the template itself tests the target (see the module docstring).
    """

    reader: int
    target: str
    loc: tuple[Any, ...]
    position: tuple[str, int, int]
    note: str
    whole: bool
    guarded: bool


def step_field(node: Any, nodes: Any) -> tuple[str, str] | None:
    """``(step id, field)`` when `node` is ``steps.ID.FIELD`` (or ``steps['ID']['FIELD']``),
    else None."""
    def attr(item: Any) -> str | None:
        if isinstance(item, nodes.Getattr):
            return str(item.attr)
        if (isinstance(item, nodes.Getitem) and isinstance(item.arg, nodes.Const)
                and isinstance(item.arg.value, str)):
            return str(item.arg.value)
        return None

    if not isinstance(node, nodes.Getattr | nodes.Getitem):
        return None
    inner = node.node
    if not isinstance(inner, nodes.Getattr | nodes.Getitem):
        return None
    if not (isinstance(inner.node, nodes.Name) and inner.node.name == "steps"):
        return None
    step, name = attr(inner), attr(node)
    return (step, name) if step is not None and name is not None else None


def guarded_steps(ast: Any, nodes: Any) -> set[str]:
    """The ids of the steps template `ast` tests (module docstring: reads their status,
    tests their output, or gives it a default)."""
    def output_of(node: Any) -> str | None:
        ref = step_field(node, nodes)
        return ref[0] if ref is not None and ref[1] == "output" else None

    found: set[str] = set()
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        ref = step_field(node, nodes)
        if ref is not None and ref[1] == "status":
            found.add(ref[0])
    for node in ast.find_all(nodes.Test):
        if (step := output_of(node.node)) is not None:
            found.add(step)
    for node in ast.find_all(nodes.Filter):
        if node.name in ("default", "d") and (step := output_of(node.node)) is not None:
            found.add(step)
    for node in ast.find_all(nodes.Or):
        if (step := output_of(node.left)) is not None:
            found.add(step)
    for node in ast.find_all((nodes.If, nodes.CondExpr)):
        tests = [node.test, *node.test.find_all((nodes.Getattr, nodes.Getitem))]
        found.update(s for s in (output_of(t) for t in tests) if s is not None)
    return found


def _conjuncts(expr: Any, nodes: Any) -> list[Any]:
    if isinstance(expr, nodes.And):
        return [*_conjuncts(expr.left, nodes), *_conjuncts(expr.right, nodes)]
    return [expr]


def _implies(reader_when: Any, target_when: Any, target: str, nodes: Any) -> bool:
    """True when the reader's `when` can only be true when the target's is (module doc)."""
    mine = _conjuncts(reader_when, nodes)
    if target in guarded_steps(nodes.Template([nodes.Output([reader_when])]), nodes):
        return True
    if any(part == target_when for part in mine):
        return True
    return all(any(part == wanted for part in mine)
               for wanted in _conjuncts(target_when, nodes))


def _argument(key: Any) -> Any:
    """The argument a ``with:`` key gives: ``<name>`` for a step reference ``<name>_step``
    (the engine hands the action the step's output as ``<name>``), else the key."""
    if isinstance(key, str) and key.endswith("_step") and key != "_step":
        return key[:-len("_step")]
    return key


def skipped_output_warnings(loaded: LoadedBlueprint, reads: list[OutputRead],
                            when_asts: Mapping[int, Any],
                            accepts_skipped: Mapping[str, Collection[str]]) -> list[Problem]:
    """One warning per template and skippable step it reads unguarded (module docstring).

    Args:
        loaded: the blueprint (its steps and marks).
        reads: every template's output reads (`TemplateChecker.reads`).
        when_asts: step index -> its parsed `when` expression (steps whose `when` parsed).
        accepts_skipped: action name -> the arguments that accept a skipped input.
    """
    from jinja2 import nodes

    steps = loaded.blueprint.steps
    index = {step.id: i for i, step in enumerate(steps)}
    warnings: list[Problem] = []
    seen: set[tuple[tuple[Any, ...], str]] = set()
    for read in reads:
        target_index = index.get(read.target)
        if target_index is None or target_index >= read.reader:
            continue  # an unknown or later step: an error reported elsewhere
        target = steps[target_index]
        if target.when is None or target_index not in when_asts or read.guarded:
            continue
        if (read.loc, read.target) in seen:
            continue
        reader = steps[read.reader]
        if read.reader in when_asts and read.loc[-1:] != ("when",) and _implies(
                when_asts[read.reader], when_asts[target_index], read.target, nodes):
            continue
        loc = read.loc
        if (read.whole and reader.action is not None and len(loc) == 4 and loc[2] == "with"
                and _argument(loc[3]) in accepts_skipped.get(reader.action, ())):
            continue
        seen.add((read.loc, read.target))
        when_line = loaded.marks.value(("steps", target_index, "when"))[0]
        from wardian.blueprints.errors import format_path

        warnings.append(Problem(
            *read.position, format_path(loc),
            f"step {reader.id!r} reads steps.{target.id}.output, but step {target.id!r} is "
            f"skipped when its `when` is false (line {when_line}: {target.when!r}) and its "
            f"output is then null{read.note}",
            expected=f"a `when` on {reader.id!r} that implies the one of {target.id!r}, a test of "
                     f"steps.{target.id}.status in this template, or an argument that "
                     "accepts a skipped input",
            found=f"steps.{target.id}.output read unguarded", kind=KIND, severity="warning"))
    return warnings
