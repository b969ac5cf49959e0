"""YAML loading that keeps a line/column mark for every key and value.

`parse_yaml` composes the YAML into a node tree (``yaml.compose``-style, SafeLoader), builds
plain Python data from it, and records a `Marks` map from field path tuples to 1-based
(line, column) of both the value and (for mapping members) the key. Duplicate keys, which
PyYAML would silently collapse, are reported as problems.

Spec: issue 4 "Loading and errors".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wardian.blueprints.errors import Problem, format_path

__all__ = ["Marks", "ParsedYaml", "parse_yaml"]

Path = tuple[str | int, ...]


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

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        parsed = _parse(text, filename, fast)
        if not any(p.kind == "syntax" for p in parsed.problems):
            return parsed
        # libyaml words its errors differently; report the pure-Python parser's message so
        # messages are the same on every platform.
    return _parse(text, filename, yaml.SafeLoader)


def _parse(text: str, filename: str, loader_cls: Any) -> ParsedYaml:
    import yaml

    marks = Marks()
    problems: list[Problem] = []
    loader = loader_cls(text)
    try:
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
    except yaml.YAMLError as exc:  # reader errors (bad bytes) carry no mark
        problems.append(Problem(filename, 1, 1, "(root)", f"YAML error: {exc}", kind="syntax"))
        return ParsedYaml(None, marks, problems)
    finally:
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
