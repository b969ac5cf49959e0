"""The one way a maintenance plan file is written, by every surface and step.

``garden memory stale --draft-plan``, ``garden memory retire|revise --output``,
``garden import``, the agent's ``memory draft-plan|import --output`` and the
``memory.draft_plan`` step all call `write_plan`: a plan quotes the agent's memory, so it is
private like the database, and it is written whole or not at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["plan_bytes", "write_plan"]


def plan_bytes(plan: dict[str, Any]) -> bytes:
    """The plan document as written to a file: indented UTF-8 JSON ending in a newline. Pure."""
    return json.dumps(plan, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"


def write_plan(plan: dict[str, Any], path: Path | None = None) -> Path:
    """Write a plan document (schema v1, `plan_bytes`) to `path`, default
    ``plans/<plan_id>.json`` in the data directory.

    The file is 0600 and replaced atomically (temp file + rename, so a reader never sees half
    a plan); missing directories are created 0700, existing ones are left as they are.
    Returns the path written.

    Raises:
        OSError: the file or its directory cannot be written.
    """
    from wardian._fs import private_dir, write_private
    from wardian.config import data_dir

    target = path or data_dir() / "plans" / f"{plan['plan_id']}.json"
    private_dir(target.parent)
    write_private(target, plan_bytes(plan))
    return target
