"""Blueprint errors: one structured `Problem` per defect, and the exceptions that carry them.

Every problem names the file, line and column (1-based), the field path (``steps[2].retry``
style; ``(root)`` for the document itself), what was wrong, what was expected, what was found,
and for an unknown key or name the nearest valid one. `Problem.render` builds the one-line
message from those fields::

    bp.yaml:12:7: steps[1].retry.attempts: invalid value; expected an integer >= 1, found 0

Tree (rooted in `wardian.errors`)::

    UsageError
    └── BlueprintError          exit 2; `.problems` lists every Problem found
        ├── BlueprintSyntaxError    YAML could not be parsed
        └── BlueprintInvalid        schema / reference / template problems

Loading one blueprint raises; validating or listing many returns problems per file so one
bad file never hides the others (model-codebases.md, Home Assistant blueprints).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from wardian.errors import UsageError

__all__ = [
    "BlueprintError",
    "BlueprintInvalid",
    "BlueprintSyntaxError",
    "Problem",
    "format_path",
    "nearest",
]

ROOT_PATH = "(root)"


def format_path(path: Sequence[str | int]) -> str:
    """Format a field path tuple as ``steps[2].with.limit`` (``(root)`` when empty)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or ROOT_PATH


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to `word` (difflib ratio >= 0.6), or None."""
    matches = difflib.get_close_matches(str(word), sorted(set(candidates)), n=1, cutoff=0.6)
    return matches[0] if matches else None


@dataclass(frozen=True)
class Problem:
    """One defect in one blueprint file.

    Args:
        file: the file as the user named it.
        line: 1-based line.
        column: 1-based column.
        path: the field path (``steps[0].with.limit``).
        message: what was wrong, e.g. ``unknown key 'retires'``.
        expected: what was expected (a phrase), or None.
        found: what was found (a phrase), or None.
        suggestion: the nearest valid key/name for an unknown one, or None.
        kind: ``syntax``, ``schema``, ``reference``, ``template``, ``duplicate``, ``order``,
            ``io``, ``limit`` (a size/depth bound, `wardian.blueprints.loader`),
            ``provider`` (an assigned provider cannot answer the step's output schema);
            for warnings ``skipped-output`` (`wardian.blueprints.skip_checks`).
        severity: ``error`` (the file is refused) or ``warning`` (reported; the file
            still loads and runs).
    """

    file: str
    line: int
    column: int
    path: str
    message: str
    expected: str | None = None
    found: str | None = None
    suggestion: str | None = None
    kind: str = "schema"
    severity: str = "error"

    def render(self) -> str:
        """The one-line message: ``file:line:col: path: message; expected …, found … (did you
        mean '…'?)``; a warning reads ``file:line:col: warning: path: …``."""
        label = "warning: " if self.severity == "warning" else ""
        text = f"{self.file}:{self.line}:{self.column}: {label}{self.path}: {self.message}"
        details = []
        if self.expected is not None:
            details.append(f"expected {self.expected}")
        if self.found is not None:
            details.append(f"found {self.found}")
        if details:
            text += "; " + ", ".join(details)
        if self.suggestion is not None:
            text += f" (did you mean {self.suggestion!r}?)"
        return text

    def to_json(self) -> dict[str, Any]:
        """The problem as a JSON-able dict (with its rendered message under ``text``)."""
        return {**asdict(self), "text": self.render()}


class BlueprintError(UsageError):
    """A blueprint could not be loaded (exit 2); `problems` holds every defect found.

    The message is the first problem's; when there are more, it says how many.
    """

    def __init__(self, problems: Sequence[Problem], *, hint: str | None = None) -> None:
        if not problems:
            raise ValueError("BlueprintError needs at least one problem")
        self.problems = list(problems)
        first = self.problems[0].render()
        more = len(self.problems) - 1
        message = first if not more else f"{first} (and {more} more problem(s))"
        super().__init__(message, hint=hint or "run `wardian blueprint validate PATH` to list all")


class BlueprintSyntaxError(BlueprintError):
    """The YAML itself could not be parsed."""


class BlueprintInvalid(BlueprintError):
    """The YAML parsed but the blueprint breaks the schema or its references/templates."""
