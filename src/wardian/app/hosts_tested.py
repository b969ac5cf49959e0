"""The host CLI versions Wardian's real-host tests ran (``tests/hosts/pins.txt``, which a
test keeps equal to `TESTED`): `wardian doctor` says whether the installed host is one of
them. Commands are the executables' names.
"""

from __future__ import annotations

import re

__all__ = ["TESTED", "parse_version", "tested_note"]

TESTED: dict[str, str] = {
    "claude": "2.1.332",
    "codex": "0.171.0",
    "gemini": "0.61.0",
    "opencode": "1.18.33",
}
"""Command -> the version the host tests ran."""

_VERSION = re.compile(r"(?<![\d.])(\d+\.\d+\.\d+)")


def parse_version(text: str) -> str | None:
    """The first ``X.Y.Z`` in `text` (a ``--version`` line), or None."""
    found = _VERSION.search(text)
    return found.group(1) if found else None


def tested_note(command: str, version_line: str) -> tuple[bool, str] | None:
    """(tested?, what to say) for `command` printing `version_line`; None for a command
    the host tests do not run."""
    tested = TESTED.get(command)
    if tested is None:
        return None
    version = parse_version(version_line)
    if version == tested:
        return True, "tested"
    seen = f"version {version}" if version else "this version"
    return False, f"not tested with {seen} (tested: {tested})"
