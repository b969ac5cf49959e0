"""Server-side rendering: one sandboxed, autoescaping Jinja2 environment for every page.

Records, plans and transcripts are untrusted text (an agent wrote them), so templates run
in Jinja2's `SandboxedEnvironment` with autoescape on for every template, and nothing is
marked safe. Templates live beside this module (``templates/*.html.j2``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

__all__ = ["TEMPLATES", "render"]

TEMPLATES = Path(__file__).parent / "templates"


def _scope(scope: dict[str, Any] | None) -> str:
    if not scope:
        return "-"
    return "agent" if scope.get("kind") == "agent" else f"workspace:{scope.get('path')}"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


@lru_cache(maxsize=1)
def _environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["scope"] = _scope
    env.filters["pretty"] = _pretty
    return env


def render(name: str, context: dict[str, Any]) -> str:
    """Render template `name` (e.g. ``agents.html.j2``) with `context`; returns HTML.

    Raises:
        jinja2.TemplateError: a template bug (never caused by the data: values are escaped).
    """
    return _environment().get_template(name).render(context)
