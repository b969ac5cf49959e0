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

Spec: issue 4 "Templates".
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
    "STEP_KEYS",
    "TemplateEngine",
    "is_whole_expression",
]

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

        class Env(SandboxedEnvironment):
            """Mapping keys win over methods: ``output.items`` is the key, not dict.items."""

            def getattr(self, obj: Any, attribute: str) -> Any:
                if isinstance(obj, dict) and attribute in obj:
                    return obj[attribute]
                return super().getattr(obj, attribute)

        self.folder = folder
        self.env = Env(
            undefined=StrictUndefined, loader=_folder_loader(folder),
            keep_trailing_newline=True, autoescape=False,
        )
        self.env.filters.setdefault("tojson_compact", _tojson)
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
        """Render a template string to text."""
        return str(self.template(source).render(context))

    def evaluate(self, source: str, context: dict[str, Any]) -> Any:
        """Evaluate an expression (e.g. a `when`) to its native value."""
        value = self.expression(source)(**context)
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


def _unwrap(value: Any) -> Any:
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return value


def _tojson(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
