"""Server-side rendering: one sandboxed, autoescaping Jinja2 environment for every page.

Records, plans and transcripts are untrusted text (an agent wrote them), so templates run
in Jinja2's `SandboxedEnvironment` with autoescape on for every template, and nothing is
marked safe. Templates live beside this module (``templates/*.html.j2``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

__all__ = ["TEMPLATES", "age", "exact_time", "home_relative", "render"]

TEMPLATES = Path(__file__).parent / "templates"


def _scope(scope: dict[str, Any] | None) -> str:
    if not scope:
        return "-"
    return "agent" if scope.get("kind") == "agent" else f"workspace:{scope.get('path')}"


def _moment(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _units(count: int, unit: str) -> str:
    return f"{count} {unit}{'' if count == 1 else 's'} ago"


def age(stamp: str | None, now: datetime | None = None) -> str:
    """A timestamp (ISO-8601, as the stores write them) as an age: ``just now`` (also for
    a time ahead of `now`), ``5 minutes ago``, ``3 hours ago``, ``3 days ago`` (days up to
    two months), ``4 months ago``, ``2 years ago``; ``never`` for None; the text itself when
    it is no timestamp. Pure (given `now`)."""
    if not stamp:
        return "never"
    moment = _moment(stamp)
    if moment is None:
        return stamp
    seconds = int(((now or datetime.now(UTC)) - moment).total_seconds())
    days = seconds // 86_400
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return _units(seconds // 60, "minute")
    if days < 1:
        return _units(seconds // 3600, "hour")
    if days < 60:  # days until two months: "30 days ago" reads better than "1 month ago"
        return _units(days, "day")
    if days < 365:
        return _units(days // 30, "month")
    return _units(days // 365, "year")


def exact_time(stamp: str | None) -> str:
    """The exact UTC time to show on hover: ``2026-12-07 01:21:57 UTC``. Pure."""
    moment = _moment(stamp) if stamp else None
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else (stamp or "")


def home_relative(path: str | None, home: str | None = None) -> str:
    """`path` with the operator's home directory shown as ``~`` (``~/src/app``). Pure
    (given `home`, default `Path.home()`)."""
    if not path:
        return ""
    base = (home if home is not None else str(Path.home())).rstrip("/")
    if base and (path == base or path.startswith(base + "/")):
        return "~" + path[len(base):]
    return path


def _scope_label(scope: Any) -> str:
    """A record's scope (a `Scope` or its JSON) as a badge's text: ``agent`` or
    ``workspace ~/src/app``."""
    if scope is None:
        return "-"
    kind = scope.get("kind") if isinstance(scope, dict) else getattr(scope, "kind", None)
    path = scope.get("path") if isinstance(scope, dict) else getattr(scope, "path", None)
    return "agent" if kind == "agent" else f"workspace {home_relative(path)}"


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
    env.filters["ago"] = age
    env.filters["exact"] = exact_time
    env.filters["home"] = home_relative
    env.filters["scope_label"] = _scope_label
    return env


def render(name: str, context: dict[str, Any]) -> str:
    """Render template `name` (e.g. ``agents.html.j2``) with `context`; returns HTML.

    Raises:
        jinja2.TemplateError: a template bug (never caused by the data: values are escaped).
    """
    return _environment().get_template(name).render(context)
