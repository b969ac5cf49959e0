"""Size bounds of the blueprint template sandbox (used by `templates.TemplateEngine`).

Contract: no string or list a template builds may be longer than `MAX_RENDER_CHARS`
(characters or items), and the check runs *before* the string or list is built, from the
arguments: a width, a count, a fill, join or replacement string, a format width or
precision. Past the bound the render raises `TemplateLimitError` ("template result too
large: …"). Covered:

* ``str``/``bytes`` methods: ``ljust``, ``rjust``, ``center``, ``zfill`` (width),
  ``expandtabs`` (tabs × tab size), ``replace`` (occurrences × new text), ``join`` (the
  parts), ``translate`` (length × longest replacement); ``list.extend``. Any call's
  ``str``/``bytes``/``list``/``tuple`` result is checked too, so a chain of other growing
  methods stops at the bound.
* ``str.format``/``format_map``: every field's width and precision, and the running result.
* Operators: ``%`` on a string (widths, precisions, ``*`` arguments, the argument texts),
  ``+`` and ``~`` (the operands together).
* Filters: ``center``, ``indent``, ``replace``, ``join``, ``format``, ``wordwrap``,
  ``urlize``, ``batch``, ``slice`` and ``sum`` check their arguments; a text filter refuses a
  container whose text would be over the bound; every filter's result is checked.
* ``{{ value }}`` of a container, captured blocks (``{% set %}…``, macros, ``{% filter %}``,
  ``{% call %}``) and ``lipsum``.

A string that is already longer (an input) may still be read, sliced and shortened.

All strings and lists one render builds (results of the above, of every call and filter,
and slices) together may hold at most `MAX_RENDER_BUILT` characters or items, so a loop
cannot keep many large copies ("template built over … characters or items in one render").
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar, Token
from typing import Any

from wardian.blueprints.templates import MAX_RENDER_BUILT, MAX_RENDER_CHARS, TemplateLimitError

_BUILT: ContextVar[list[int] | None] = ContextVar("wardian_template_built", default=None)

_TEXT = (str, bytes, bytearray)
_CONTAINERS = (list, tuple, dict, set, frozenset)
_SIZED = (str, bytes, bytearray, list, tuple)
_NOT_TEXT_FILTERS = frozenset({
    "abs", "attr", "batch", "count", "d", "default", "dictsort", "first", "float", "groupby",
    "int", "items", "join", "last", "length", "list", "map", "max", "min", "random", "reject",
    "rejectattr", "reverse", "round", "select", "selectattr", "slice", "sort", "sum",
    "unique", "filesizeformat",
})
"""Filters that do not turn their value into text (every other filter does)."""
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0 +-]*(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?[hlL]?"
    r"(?P<kind>[a-zA-Z%])")
_DIGITS = re.compile(r"\d+")


def check(what: str, size: int) -> None:
    """Raise `TemplateLimitError` when `size` is over `MAX_RENDER_CHARS`."""
    if size > MAX_RENDER_CHARS:
        raise TemplateLimitError(
            f"template result too large: {what} would be {size:,} characters or items, "
            f"over {MAX_RENDER_CHARS:,}")


def start_budget() -> Token[list[int] | None]:
    """Start counting what one render builds (`spend`); pass the token to `end_budget`."""
    return _BUILT.set([0])


def end_budget(token: Token[list[int] | None]) -> None:
    """Stop the count `start_budget` began."""
    _BUILT.reset(token)


def spend(size: int) -> None:
    """Count `size` characters or items built; past `MAX_RENDER_BUILT` raise
    `TemplateLimitError`. Outside a render (compile-time folding) nothing is counted."""
    built = _BUILT.get()
    if built is None:
        return
    built[0] += size
    if built[0] > MAX_RENDER_BUILT:
        raise TemplateLimitError(
            f"template result too large: one render built over {MAX_RENDER_BUILT:,} "
            "characters or items")


def _number(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _digits(text: str) -> int:
    """The number `text` spells, or a number past the bound when it is very long."""
    return MAX_RENDER_CHARS + 1 if len(text) > 9 else int(text)


def text_size(value: Any) -> int:
    """A lower bound of ``len(str(value))`` (exact for strings), counted without building
    the text; counting stops once past `MAX_RENDER_CHARS`."""
    if isinstance(value, _TEXT):
        return len(value)
    if not isinstance(value, _CONTAINERS):
        return 1
    size = 0
    stack = [value]
    while stack and size <= MAX_RENDER_CHARS:
        item = stack.pop()
        if isinstance(item, _TEXT):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2 + 4 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, _CONTAINERS):
            size += 2 + 2 * len(item)
            stack.extend(item)
        else:
            size += 1
    return size


def check_text(what: str, value: Any) -> None:
    """Refuse a container whose text would be over the bound."""
    if not isinstance(value, _TEXT):
        check(what, text_size(value))


def check_result(what: str, result: Any, before: Any = None) -> None:
    """Refuse a result over the bound, unless it is no longer than `before` (the input);
    count it as built unless it is `before` itself (a list counts its items, not the texts it
    refers to: those were counted where they were built)."""
    if isinstance(result, _SIZED) and result is not before:
        spend(len(result))
    if (isinstance(result, _SIZED) and len(result) > MAX_RENDER_CHARS
            and not (isinstance(before, _SIZED) and len(result) <= len(before))):
        check(what, len(result))


def check_percent(fmt: Any, values: Any) -> None:
    """Bound ``fmt % values`` (printf-style) before it is formatted."""
    text = fmt.decode("latin-1") if isinstance(fmt, bytes | bytearray) else str(fmt)
    args = values if isinstance(values, tuple) else (values,)
    index = 0
    size = len(text)
    for match in _PERCENT.finditer(text):
        if match["kind"] == "%":
            continue
        size -= len(match[0])
        numbers = []
        for group in ("width", "prec"):
            spec = match[group]
            if spec == "*":
                numbers.append(_number(args[index]) if index < len(args) else 0)
                index += 1
            elif spec:
                numbers.append(_digits(spec) if group == "width" or match["kind"] not in "sra"
                               else 0)
        if match["key"] is not None:
            arg = values.get(match["key"]) if isinstance(values, Mapping) else None
        else:
            arg = args[index] if index < len(args) else None
            index += 1
        size += max([*numbers, text_size(arg) if match["kind"] in "sra" else 0])
        check("a '%' format", size)
    spend(size)


def _replace_size(text: Any, old: Any, new: Any, count: Any = -1) -> int:
    if not (isinstance(text, _TEXT) and isinstance(old, _TEXT) and isinstance(new, _TEXT)):
        return 0
    found = text.count(old) if old else len(text) + 1  # type: ignore[arg-type]
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def _join_size(separator: Any, items: list[Any]) -> int:
    size = max(len(items) - 1, 0) * text_size(separator)
    for item in items:
        size += text_size(item)
        if size > MAX_RENDER_CHARS:
            break
    return size


def check_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Bound a call of a ``str``/``bytes``/``list`` method; returns the arguments to call
    with (a ``join`` argument is read once into a list)."""
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    if isinstance(owner, list) and name == "extend" and args:
        if not isinstance(args[0], (*_SIZED, dict, set, frozenset, range)):
            args = (list(args[0]), *args[1:])
        check("list.extend", len(owner) + len(args[0]))
        return args
    if not isinstance(owner, _TEXT):
        return args
    where = f"{type(owner).__name__}.{name}"
    if name in ("ljust", "rjust", "center", "zfill"):
        check(where, _number(args[0] if args else kwargs.get("width")))
    elif name == "expandtabs":
        tabsize = _number(args[0] if args else kwargs.get("tabsize", 8))
        tab = "\t" if isinstance(owner, str) else b"\t"
        check(where, len(owner) + owner.count(tab) * max(tabsize, 0))  # type: ignore[arg-type]
    elif name == "replace" and len(args) >= 2:
        check(where, _replace_size(owner, args[0], args[1], args[2] if len(args) > 2
                                   else kwargs.get("count", -1)))
    elif name == "join" and args:
        items = list(args[0])
        check(where, _join_size(owner, items))
        args = (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, _TEXT)), default=1)
        check(where, len(owner) * longest)
    return args


def bounded_concat(values: Iterable[Any]) -> list[Any]:
    """The operands of ``~`` as a list, refused when their text together is over the bound."""
    items = list(values)
    size = _join_size("", items)
    check("'~'", size)
    spend(size)
    return items


def bounded_join(parts: Iterable[str]) -> str:
    """``"".join(parts)`` for captured output, stopping once past the bound."""
    out: list[str] = []
    size = 0
    for part in parts:
        size += len(part)
        check("a captured block", size)
        out.append(part)
    spend(size)
    return "".join(out)


def bounded_lipsum(func: Any) -> Callable[..., str]:
    """``lipsum`` refusing more paragraphs × words than the bound could hold."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def lipsum(*args: Any, **kwargs: Any) -> str:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        paragraphs, words = bound.arguments["n"], bound.arguments["max"]
        check("lipsum", _number(paragraphs) * (_number(words) * 13 + 20))
        text: str = func(*args, **kwargs)
        return text

    return lipsum


def _filter_checks(name: str, a: dict[str, Any]) -> None:
    """The argument checks of one filter, on its bound arguments `a` (may rewrite them)."""
    if name == "center":
        check("center", _number(a["width"]))
    elif name == "indent":
        width = a["width"]
        step = len(width) if isinstance(width, str) else _number(width)
        check("indent", step)
        text = a["s"] if isinstance(a["s"], str) else ""
        check("indent", len(text) + (text.count("\n") + 1) * step)
    elif name == "replace":
        check("replace", _replace_size(a["s"], a["old"], a["new"], a["count"]))
    elif name == "join":
        a["value"] = items = list(a["value"])
        check("join", _join_size(a["d"], items))
    elif name == "format":
        check_percent(a["value"], a["kwargs"] or a["args"])
    elif name == "wordwrap":
        text = a["s"] if isinstance(a["s"], str) else ""
        lines = len(text) // max(_number(a["width"]), 1) + len(text.split()) + 1
        check("wordwrap", len(text) + lines * text_size(a["wrapstring"] or "\n"))
    elif name == "urlize":
        text = a["value"] if isinstance(a["value"], str) else ""
        extra = text_size(a["target"] or "") + text_size(a["rel"] or "") + 40
        check("urlize", 3 * len(text) + len(text.split()) * extra)
    elif name == "batch" and a["fill_with"] is not None:
        check("batch", _number(a["linecount"]))
    elif name == "slice":
        check("slice", _number(a["slices"]))
    elif name == "sum" and isinstance(a["start"], _SIZED):
        a["iterable"] = items = list(a["iterable"])
        check("sum", len(a["start"]) + sum(len(i) for i in items if isinstance(i, _SIZED)))


_CHECKED_FILTERS = frozenset({
    "center", "indent", "replace", "join", "format", "wordwrap", "urlize", "batch", "slice",
    "sum",
})


def bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` (the filter `name`) with the checks above: its arguments, a container value
    of a text filter, and its result."""
    offset = 1 if hasattr(func, "jinja_pass_arg") else 0
    signature = inspect.signature(func) if name in _CHECKED_FILTERS else None
    text_filter = name not in _NOT_TEXT_FILTERS

    @functools.wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        value = args[offset] if len(args) > offset else None
        if text_filter:
            check_text(f"|{name} of a container", value)
        if signature is not None:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            _filter_checks(name, bound.arguments)
            args, kwargs = bound.args, bound.kwargs
        result = func(*args, **kwargs)
        check_result(f"|{name}", result, value)
        return result

    return bounded
