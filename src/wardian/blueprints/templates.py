"""Sandboxed Jinja2 rendering for blueprints.

* `SandboxedEnvironment` with `StrictUndefined`: an undefined name is an error, never ``""``.
* The loader only sees the blueprint's own folder: ``..``, absolute names and symlinks that
  lead outside are refused (`FolderLoader`).
* Context: ``inputs``, ``invocation`` (trigger, agent_id, agent_name, workspace, archive,
  time, run_id, idempotency_key, payload), ``steps.<id>.output`` (and ``.status``), ``roles``.
* Native values: a string that is exactly one ``{{ expr }}`` (surrounding spaces allowed)
  evaluates to the expression's native value (list, dict, int, …) via
  `compile_expression`; any other string renders to a string. This applies to `with:`
  arguments and `payload:` values. Prompts always render to text.
* ``a.b`` on a mapping looks up the key ``b`` first (so ``output.items`` is data, not
  ``dict.items``).
* Bounded per render: at most `MAX_RENDER_CHARS` characters of output
  and `MAX_RENDER_SECONDS` of time per template render or expression evaluation; ``*``
  and ``**`` refuse results beyond the output cap before computing them (``'a' * 10**9``),
  and ``range`` stays capped by the sandbox (100,000 items); no string or list built may
be longer than the output cap, and all of them together at most `MAX_RENDER_BUILT`
(`template_bounds`). Past a bound the render
  raises `TemplateLimitError` (a failed step, with this message).

Spec: docs/blueprint-guide.md (templates).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "CONTEXT_NAMES",
    "INVOCATION_KEYS",
    "MAX_RENDER_BUILT",
    "MAX_RENDER_CHARS",
    "MAX_RENDER_SECONDS",
    "STEP_KEYS",
    "TemplateEngine",
    "TemplateLimitError",
    "is_whole_expression",
]

MAX_RENDER_CHARS = 1_000_000
"""Most characters one render may produce (and the largest string or list ``*`` may build)."""
MAX_RENDER_BUILT = 50 * MAX_RENDER_CHARS
"""Most characters (or items) one render may build in strings and lists altogether."""
MAX_RENDER_SECONDS = 2.0
"""Longest one render or expression evaluation may run, in seconds of wall time."""
_MAX_POWER_BITS = 64_000
"""``a ** b`` is refused when its result would need more bits than this (~19,000 digits)."""


class TemplateLimitError(RuntimeError):
    """A template render went past `MAX_RENDER_CHARS` or `MAX_RENDER_SECONDS`."""


CONTEXT_NAMES = ("inputs", "invocation", "steps", "roles")
INVOCATION_KEYS = (
    "trigger", "agent_id", "agent_name", "workspace", "archive", "time", "run_id",
    "idempotency_key", "payload",
)
STEP_KEYS = ("output", "status")
_WHOLE = re.compile(r"^\s*\{\{(?P<expr>.*)\}\}\s*$", re.DOTALL)


def is_whole_expression(text: str) -> str | None:
    """The inner expression when `text` is exactly one ``{{ expr }}``, else None."""
    match = _WHOLE.match(text)
    if not match:
        return None
    expr = match.group("expr")
    if "{{" in expr or "}}" in expr or "{%" in text or "{#" in text:
        return None
    return expr


def _folder_loader(folder: Path) -> Any:
    from jinja2 import FileSystemLoader, TemplateNotFound

    class FolderLoader(FileSystemLoader):
        """A FileSystemLoader that refuses anything resolving outside `folder`."""

        def get_source(self, environment: Any, template: str) -> Any:
            root = folder.resolve()
            candidate = (root / template).resolve()
            if os.path.isabs(template) or (candidate != root and root not in candidate.parents):
                raise TemplateNotFound(f"{template} (outside the blueprint folder)")
            return super().get_source(environment, template)

    return FolderLoader(str(folder))


class TemplateEngine:
    """Compile-once Jinja2 sandbox for one blueprint folder.

    Args:
        folder: the blueprint's folder; templates may include/import files inside it only.
    """

    def __init__(self, folder: Path) -> None:
        from jinja2 import StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment

        from wardian.blueprints import template_bounds as bounds

        class Env(SandboxedEnvironment):
            """Mapping keys win over methods: ``output.items`` is the key, not dict.items.
            Sizes are bounded as `template_bounds` describes."""

            intercepted_binops = frozenset(["*", "**", "%", "+"])
            code_generator_class = _code_generator()
            concat = staticmethod(bounds.bounded_join)
            bounded_concat = staticmethod(bounds.bounded_concat)

            def getattr(self, obj: Any, attribute: str) -> Any:
                if isinstance(obj, dict) and attribute in obj:
                    return obj[attribute]
                return super().getattr(obj, attribute)

            def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
                _check_binop(operator, left, right)
                return super().call_binop(context, operator, left, right)

            def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
                args = bounds.check_call(obj, args, kwargs)
                result = super().call(context, obj, *args, **kwargs)
                bounds.check_result(f"{getattr(obj, '__name__', 'a call')}()", result,
                                    getattr(obj, "__self__", None))
                return result

            @staticmethod
            def sliced(obj: Any, part: slice) -> Any:
                if isinstance(obj, str | bytes | list | tuple):
                    bounds.spend(len(range(*part.indices(len(obj)))))
                return obj[part]

            def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
                return _bounded_format(self, value)

            def finalize_output(self, value: Any) -> Any:
                bounds.check_text("the text of a value", value)
                return value

        self.folder = folder
        self.env = Env(
            undefined=StrictUndefined, loader=_folder_loader(folder),
            keep_trailing_newline=True, autoescape=False,
        )
        self.env.finalize = self.env.finalize_output
        self.env.filters.setdefault("tojson_compact", _tojson)
        self.env.filters.update(
            {name: bounds.bounded_filter(name, func) for name, func in self.env.filters.items()})
        self.env.globals["lipsum"] = bounds.bounded_lipsum(self.env.globals["lipsum"])
        self._templates: dict[str, Any] = {}
        self._expressions: dict[str, Callable[..., Any]] = {}

    def template(self, source: str) -> Any:
        """Compile (cached) a template string. Raises jinja2.TemplateSyntaxError."""
        compiled = self._templates.get(source)
        if compiled is None:
            compiled = self._templates[source] = self.env.from_string(source)
        return compiled

    def file_template(self, name: str) -> Any:
        """Load a template file from the blueprint folder. Raises jinja2 errors."""
        return self.env.get_template(name)

    def expression(self, source: str) -> Callable[..., Any]:
        """Compile (cached) an expression. Raises jinja2.TemplateSyntaxError."""
        compiled = self._expressions.get(source)
        if compiled is None:
            compiled = self._expressions[source] = self.env.compile_expression(
                source, undefined_to_none=False
            )
        return compiled

    def render_text(self, source: str, context: dict[str, Any]) -> str:
        """Render a template string to text (bounded, see the module docstring).

        Raises:
            TemplateLimitError: past `MAX_RENDER_CHARS` or `MAX_RENDER_SECONDS`.
        """
        return _bounded_render(self.template(source), context)

    def render_file(self, name: str, context: dict[str, Any]) -> str:
        """Render a template file of the blueprint folder (bounded like `render_text`)."""
        return _bounded_render(self.file_template(name), context)

    def evaluate(self, source: str, context: dict[str, Any]) -> Any:
        """Evaluate an expression (e.g. a `when`) to its native value (time-bounded).

        Raises:
            TemplateLimitError: past `MAX_RENDER_SECONDS`, or a ``*``/``**`` too large.
        """
        compiled = self.expression(source)
        with _deadline():
            value = compiled(**context)
        return _unwrap(value)

    def render_value(self, value: Any, context: dict[str, Any]) -> Any:
        """Render `with:`/`payload:` values: recurse into lists and mappings; a whole
        ``{{ expr }}`` string becomes the native value; other strings render to text."""
        if isinstance(value, str):
            if "{" not in value:
                return value
            expr = is_whole_expression(value)
            if expr is not None:
                return self.evaluate(expr, context)
            return self.render_text(value, context)
        if isinstance(value, dict):
            return {k: self.render_value(v, context) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render_value(v, context) for v in value]
        return value


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``, ``**``, ``%`` and ``+`` whose result would be too large, before
    computing it."""
    from wardian.blueprints import template_bounds as bounds

    if operator == "%":
        if isinstance(left, str | bytes):
            bounds.check_percent(left, right)
        return
    if operator == "+":
        if isinstance(left, str | bytes | list | tuple) and isinstance(right, type(left)):
            bounds.check("'+'", len(left) + len(right))
            bounds.spend(len(left) + len(right))
        return
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if (isinstance(seq, str | list | tuple) and isinstance(times, int)
                    and len(seq) * max(times, 0) > MAX_RENDER_CHARS):
                raise TemplateLimitError(
                    f"template result too large: {len(seq):,} × {times:,} is over "
                    f"{MAX_RENDER_CHARS:,} items")
            if isinstance(seq, str | list | tuple) and isinstance(times, int):
                bounds.spend(len(seq) * max(times, 0))
        return
    if (isinstance(left, int) and isinstance(right, int) and right > 0
            and abs(left) > 1 and abs(left).bit_length() * right > _MAX_POWER_BITS):
        raise TemplateLimitError(
            f"template result too large: {left} ** {right} needs over {_MAX_POWER_BITS:,} bits")


def _code_generator() -> Any:
    """Jinja's code generator with ``~`` going through `template_bounds.bounded_concat` and
    slices (``s[1:]``) through ``environment.sliced`` (counted as built)."""
    from jinja2 import nodes
    from jinja2.compiler import CodeGenerator

    class Generator(CodeGenerator):
        def visit_Getitem(self, node: Any, frame: Any) -> None:
            if not isinstance(node.arg, nodes.Slice):
                super().visit_Getitem(node, frame)
                return
            self.write("environment.sliced(")
            self.visit(node.node, frame)
            self.write(", slice(")
            for part in (node.arg.start, node.arg.stop, node.arg.step):
                if part is None:
                    self.write("None")
                else:
                    self.visit(part, frame)
                self.write(", ")
            self.write("))")

        def visit_Concat(self, node: Any, frame: Any) -> None:
            join = "(markup_join if context.eval_ctx.autoescape else str_join)"
            self.write(f"{join}(environment.bounded_concat((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write(")))")

    return Generator


def _bounded_format(env: Any, value: Any) -> Callable[..., str] | None:
    """The sandbox's ``str.format``/``format_map`` wrapper with each field's width and
    precision, and the running result, bounded (see `template_bounds`)."""
    import types
    from functools import update_wrapper

    from jinja2.sandbox import SandboxedFormatter
    from markupsafe import EscapeFormatter, Markup

    from wardian.blueprints import template_bounds as bounds

    if not isinstance(value, types.MethodType | types.BuiltinMethodType) \
            or value.__name__ not in ("format", "format_map") \
            or not isinstance(value.__self__, str):
        return None
    owner: str = value.__self__
    is_format_map = value.__name__ == "format_map"

    class Formatter(SandboxedFormatter):
        size = 0

        def format_field(self, field: Any, format_spec: str) -> Any:
            for digits in re.findall(r"\d+", format_spec):
                bounds.check("a format width or precision",
                             MAX_RENDER_CHARS + 1 if len(digits) > 9 else int(digits))
            bounds.check_text("a formatted value", field)
            text = super().format_field(field, format_spec)
            self.size += len(text)
            bounds.check("str.format", self.size)
            return text

    class EscapingFormatter(Formatter, EscapeFormatter):
        pass

    formatter = (EscapingFormatter(env, escape=owner.escape) if isinstance(owner, Markup)
                 else Formatter(env))

    def wrapper(*args: Any, **kwargs: Any) -> str:
        if is_format_map:
            if kwargs or len(args) != 1:
                raise TypeError("format_map() takes exactly one positional argument")
            kwargs, args = args[0], ()
        formatter.size = 0
        return type(owner)(formatter.vformat(owner, args, kwargs))

    return update_wrapper(wrapper, value)


def _bounded_render(template: Any, context: dict[str, Any]) -> str:
    """Render `template` streaming, stopping past the output size or the time budget."""
    parts: list[str] = []
    size = 0
    with _deadline():
        for chunk in template.generate(context):
            size += len(chunk)
            if size > MAX_RENDER_CHARS:
                raise TemplateLimitError(
                    f"template output is over {MAX_RENDER_CHARS:,} characters")
            parts.append(chunk)
    return "".join(parts)


class _deadline:
    """Raise `TemplateLimitError` inside template code once `MAX_RENDER_SECONDS` pass.

    A trace function (this thread only) checks the clock on each line of compiled template
    code — a loop body with no output runs no other hook — and on each call made from it;
    other frames are not traced line by line. The previous trace function (a debugger,
    coverage) is restored afterwards.
    """

    def __enter__(self) -> None:
        import sys
        import time

        from wardian.blueprints import template_bounds as bounds

        self._budget = bounds.start_budget()
        limit = time.monotonic() + MAX_RENDER_SECONDS
        clock = time.monotonic

        def local(frame: Any, event: str, arg: Any) -> Any:
            if clock() > limit:
                raise TemplateLimitError(
                    f"template render took over {MAX_RENDER_SECONDS:g} s (loops too large?)")
            return local

        def trace(frame: Any, event: str, arg: Any) -> Any:
            if clock() > limit:
                raise TemplateLimitError(
                    f"template render took over {MAX_RENDER_SECONDS:g} s (loops too large?)")
            return local if "environment" in frame.f_globals and \
                "__jinja_template__" in frame.f_globals else None

        self._previous = sys.gettrace()
        sys.settrace(trace)

    def __exit__(self, *exc: object) -> None:
        import sys

        from wardian.blueprints import template_bounds as bounds

        sys.settrace(self._previous)
        bounds.end_budget(self._budget)


def _unwrap(value: Any) -> Any:
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return value


def _tojson(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
