"""YAML loading that keeps a line/column mark for every key and value.

`parse_yaml` composes the YAML into a node tree (``yaml.compose``-style, SafeLoader), builds
plain Python data from it, and records a `Marks` map from field path tuples to 1-based
(line, column) of both the value and (for mapping members) the key. Duplicate keys, which
PyYAML would silently collapse, are reported as problems.

Spec: docs/blueprint-guide.md (loading and errors).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wardian.blueprints.errors import Problem, format_path

__all__ = [
    "MAX_BLUEPRINT_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "Marks",
    "ParsedYaml",
    "check_yaml_bounds",
    "parse_yaml",
]

Path = tuple[str | int, ...]

MAX_BLUEPRINT_BYTES = 1024 * 1024
"""Largest blueprint (or prompt template) file read, in bytes: 1 MiB. Real blueprints are
a few KiB; the cap keeps `blueprint validate`/`list` bounded on any file."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of mappings/sequences accepted in blueprint YAML."""
MAX_YAML_NODES = 100_000
"""Most YAML nodes a blueprint may hold *after* expanding aliases: a "billion laughs" file
of a few hundred bytes that expands to 10^9 nodes is refused before anything is built."""


@dataclass
class Marks:
    """1-based positions of values (`values`) and mapping keys (`keys`) by field path."""

    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def value(self, path: Sequence[str | int]) -> tuple[int, int]:
        """The position of the value at `path`, or of its nearest ancestor that has one."""
        return self._lookup(self.values, tuple(path))

    def key(self, path: Sequence[str | int]) -> tuple[int, int]:
        """The position of the key naming `path` (falls back to the value, then ancestors)."""
        path = tuple(path)
        if path in self.keys:
            return self.keys[path]
        return self._lookup(self.values, path)

    @staticmethod
    def _lookup(table: dict[Path, tuple[int, int]], path: Path) -> tuple[int, int]:
        while path:
            if path in table:
                return table[path]
            path = path[:-1]
        return table.get((), (1, 1))


@dataclass
class ParsedYaml:
    """The result of `parse_yaml`: plain data, marks, and any problems found."""

    data: Any
    marks: Marks
    problems: list[Problem]


def parse_yaml(text: str, filename: str) -> ParsedYaml:
    """Parse `text` into plain data plus marks; problems instead of exceptions.

    Args:
        text: the YAML source.
        filename: the name used in problem messages.

    Returns:
        `ParsedYaml`; `data` is None when the YAML could not be parsed (then `problems`
        holds one ``syntax`` problem with the parser's position).
    """
    import yaml

    bound = check_yaml_bounds(text, filename)
    if bound is not None:
        return ParsedYaml(None, Marks(), [bound])
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        parsed = _parse(text, filename, fast)
        if not any(p.kind == "syntax" for p in parsed.problems):
            return parsed
        # libyaml words its errors differently; report the pure-Python parser's message so
        # messages are the same on every platform.
    return _parse(text, filename, yaml.SafeLoader)


def check_yaml_bounds(text: str, filename: str) -> Problem | None:
    """One pass over the YAML *events* (no nodes built, no recursion): a problem when the
    text nests deeper than `MAX_YAML_DEPTH` or expands to more than `MAX_YAML_NODES` nodes
    (aliases count as the size of what they name), else None. Syntax errors are left to
    the parser (None).
    """
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return _scan_bounds(text, filename, fast)
        except yaml.YAMLError:
            pass  # libyaml stops at its own nesting limit (1,000): scan with PyYAML's parser
    try:
        return _scan_bounds(text, filename, yaml.SafeLoader)
    except yaml.YAMLError:
        return None  # a syntax error: the parser reports it with its position


def _scan_bounds(text: str, filename: str, loader_cls: Any) -> Problem | None:
    import yaml

    sizes: dict[str, int] = {}
    stack: list[tuple[int, str | None]] = []  # (nodes so far, anchor) per open collection
    total = 0
    for event in yaml.parse(text, Loader=loader_cls):  # raises yaml.YAMLError
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append((1, event.anchor))
            if len(stack) > MAX_YAML_DEPTH:
                return _bound_problem(
                    filename, event, f"YAML nested more than {MAX_YAML_DEPTH} levels deep",
                    expected=f"at most {MAX_YAML_DEPTH} levels of mappings and lists",
                    found=f"level {len(stack)}")
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            count, anchor = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            count, anchor = 1, event.anchor
        elif isinstance(event, yaml.AliasEvent):
            count, anchor = sizes.get(event.anchor or "", 1), None
        else:
            continue
        if anchor is not None:
            sizes[anchor] = count
        if stack:
            top, top_anchor = stack[-1]
            stack[-1] = (top + count, top_anchor)
            size = top + count
        else:
            total += count
            size = total
        if size > MAX_YAML_NODES:
            return _bound_problem(
                filename, event,
                f"YAML expands to more than {MAX_YAML_NODES:,} values"
                + (" (through aliases)" if sizes else ""),
                expected=f"at most {MAX_YAML_NODES:,} values after expanding aliases "
                "(*name)", found=f"over {MAX_YAML_NODES:,}")
    return None


def _bound_problem(filename: str, event: Any, message: str, *, expected: str,
                   found: str) -> Problem:
    mark = event.start_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    return Problem(filename, line, col, "(root)", message, expected=expected, found=found,
                   kind="limit")


def _parse(text: str, filename: str, loader_cls: Any) -> ParsedYaml:
    import yaml

    marks = Marks()
    problems: list[Problem] = []
    loader = None
    try:
        loader = loader_cls(text)  # PyYAML's reader refuses control characters right here
        node = loader.get_single_node()
        if node is None:
            problems.append(
                Problem(filename, 1, 1, "(root)", "empty document",
                        expected="a mapping with blueprint, roles, inputs, triggers and steps",
                        found="nothing", kind="syntax")
            )
            return ParsedYaml(None, marks, problems)
        data = _build(loader, node, (), marks, problems, filename)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = exc.problem or "invalid YAML"
        if exc.context:
            what = f"{exc.context}, {what}"
        problems.append(
            Problem(filename, line, col, "(root)", f"YAML syntax error: {what}",
                    expected="valid YAML", found=_char_at(text, line, col), kind="syntax")
        )
        return ParsedYaml(None, marks, problems)
    except RecursionError:  # `check_yaml_bounds` stops deep files first; never a traceback
        problems.append(Problem(filename, 1, 1, "(root)", "YAML nested too deeply",
                                expected=f"at most {MAX_YAML_DEPTH} levels", kind="limit"))
        return ParsedYaml(None, marks, problems)
    except yaml.YAMLError as exc:  # reader errors (bad bytes) carry no mark
        problems.append(Problem(filename, 1, 1, "(root)", f"YAML error: {exc}", kind="syntax"))
        return ParsedYaml(None, marks, problems)
    finally:
        if loader is not None:
            loader.dispose()
    return ParsedYaml(data, marks, problems)


def _char_at(text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    if line - 1 >= len(lines):
        return "end of file"
    rest = lines[line - 1][col - 1 :]
    return repr(rest[:20]) if rest else "end of line"


def _build(
    loader: Any, node: Any, path: Path, marks: Marks, problems: list[Problem], filename: str
) -> Any:
    import yaml

    marks.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) or key is None:
                line, col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
                problems.append(Problem(filename, line, col, format_path(path),
                                        "invalid key", expected="a plain string key",
                                        found=f"a {type(key).__name__}"))
                continue
            key = str(key) if not isinstance(key, str) else key
            child = (*path, key)
            key_mark = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key in out:
                first = marks.keys[child]
                problems.append(Problem(
                    filename, *key_mark, format_path(child), f"duplicate key {key!r}",
                    expected="each key once in a mapping",
                    found=f"a second {key!r} (the first is at line {first[0]})",
                    kind="duplicate"))
                continue
            marks.keys[child] = key_mark
            out[key] = _build(loader, value_node, child, marks, problems, filename)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(loader, item, (*path, index), marks, problems, filename)
            for index, item in enumerate(node.value)
        ]
    try:
        return loader.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError:
        line, col = node.start_mark.line + 1, node.start_mark.column + 1
        problems.append(Problem(
            filename, line, col, format_path(path), f"unsupported YAML tag {node.tag!r}",
            expected="a plain value (use templates such as {{ inputs.NAME }}, not YAML tags)",
            found=repr(f"{node.tag} {node.value}") if isinstance(node.value, str)
            else repr(node.tag), kind="syntax"))
        return None
