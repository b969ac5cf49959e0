"""The application layer reads our own types as typed attributes (issue 13 "typed seams"):
no ``getattr``/``hasattr`` and no signature sniffing anywhere in `wardian.app`, like the
executor/drain seams pinned in tests/engine/test_surface.py."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

import wardian.app

NEEDLES = ("getattr(", "hasattr(", "inspect.signature")
THIRD_PARTY = {("mcp_config.py", "hasattr(")}
"""Probes of other libraries' objects, not ours: tomlkit items (`unwrap` or a plain value)."""

MODULES = sorted(f"{m.name}.py" for m in pkgutil.iter_modules(wardian.app.__path__))


@pytest.mark.parametrize("module", MODULES)
def test_app_modules_read_our_types_as_typed_attributes(module: str) -> None:
    source = (Path(wardian.app.__path__[0]) / module).read_text(encoding="utf-8")
    found = [needle for needle in NEEDLES
             if needle in source and (module, needle) not in THIRD_PARTY]
    assert found == [], f"wardian.app {module}: {found}"


def test_the_third_party_exemptions_are_still_needed() -> None:
    # An exemption whose probe is gone would hide a new one on our own types.
    root = Path(wardian.app.__path__[0])
    for module, needle in THIRD_PARTY:
        assert needle in (root / module).read_text(encoding="utf-8"), (module, needle)
