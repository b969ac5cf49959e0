"""Phrasing families the third blind set (tests/curator/blind3/) showed the curator missing.

As in test_generalisation.py, each test is a kind of statement with sentences made up for the
test, neither from the corpus nor from the blind sets (which stay measurements).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import FORMATS, curate_session


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> str:
    return "\n".join(op["text"] for op in _saved(ops)).lower()


# --- a password stated in words -------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_password_the_user_asks_to_remember_is_never_saved(fmt: str, tmp_path: Path) -> None:
    value = "Heron" + "-Basin-" + "5531"
    ops = curate_session(fmt, [
        ("user", f"please remember that the root password of the lab router is {value}. "
                 "now reboot the lab router"),
        ("assistant", "Rebooted the lab router."),
    ], tmp_path)
    assert not any(value in op["text"] or value in op["evidence"] for op in _saved(ops))
