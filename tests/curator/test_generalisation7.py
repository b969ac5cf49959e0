"""Kinds of statement the seventh unseen set (tests/curator/unseen7/) showed the curator
getting wrong.

As in test_generalisation6.py, each test is a kind of statement with sentences made up for
the test, neither from the corpus nor from any held-out set (which stay measurements).
"""

from __future__ import annotations

from typing import Any

import pytest

from wardian.curator import curate


def _ops(texts: list[str], records: list[dict[str, Any]] | None = None,
         done: str = "Done: switched over, and all 12 tests pass.") -> list[dict[str, Any]]:
    """Operations for a session whose user says each of `texts` in turn, the agent answering
    each one (the last answer is `done`)."""
    messages: list[dict[str, Any]] = []
    for k, text in enumerate(texts):
        messages.append({"seq": 2 * k, "role": "user", "kind": "text", "meta": {}, "text": text})
        reply = done if k == len(texts) - 1 else "Understood, I'll keep to that."
        messages.append({"seq": 2 * k + 1, "role": "assistant", "kind": "text", "meta": {},
                         "text": reply})
    payload = {"messages": messages, "records": records or [], "max_changes": 10}
    return list(curate(payload)["operations"])


def _texts(texts: list[str], records: list[dict[str, Any]] | None = None) -> list[str]:
    return [op["text"] for op in _ops(texts, records) if op["op"] in ("save", "update")]


# --- 1. a value the user changes later in the session: only the later one is kept ---------

SWITCHED = [
    # (the rule, the later message changing its value, old value, new value)
    ("Lint the shaders with glslang before every commit.",
     "actually switch the linter to shaderc, glslang chokes on our include guards",
     "glslang", "shaderc"),
    ("Always give the geocoder requests a timeout of 90 s.",
     "make the timeout 45 s instead, 90 s blocks the worker pool",
     "90 s", "45 s"),
    ("Build the Haskell parts with cabal, never with nix.",
     "change that to stack, cabal keeps rebuilding the world",
     "cabal", "stack"),
    ("Poll the weather station every 30 seconds.",
     "poll it every 120 seconds instead, 30 drains the solar battery",
     "30 seconds", "120 seconds"),
    ("Render the dose charts with matplotlib from now on.",
     "use plotnine instead of matplotlib for the charts, the PDFs need the grammar",
     "matplotlib", "plotnine"),
]


@pytest.mark.parametrize(("first", "second", "old", "new"), SWITCHED)
def test_a_value_changed_later_in_the_session_keeps_only_the_new_one(
    first: str, second: str, old: str, new: str
) -> None:
    texts = _texts([first, second])
    assert not any(old in t and new not in t for t in texts), texts
    assert any(new in t for t in texts), texts


def test_the_new_value_updates_the_record_an_earlier_session_saved() -> None:
    record = {"id": "mem-0001", "revision_id": "rev-0001", "kind": "stable", "scope": "workspace",
              "text": "Format the Lua scripts with stylua before each commit."}
    ops = _ops(["switch the formatter to lua-format, stylua mangles our table literals"],
               [record])
    changed = [op for op in ops if op["op"] in ("save", "update")]
    assert [op["op"] for op in changed] == ["update"], ops
    assert changed[0]["memory_id"] == "mem-0001"
    assert "lua-format" in changed[0]["text"] and "stylua" not in changed[0]["text"].split(
        "(")[0], changed


NOT_SWITCHES = [
    # a switch of something no earlier rule named: a task, not a changed rule
    (["Format the SQL with sqlfluff before each commit.",
      "switch the CI image to debian-slim, alpine breaks the wheels"],
     "sqlfluff", "debian-slim"),
    # the number it changes is not the earlier rule's (another unit)
    (["Run the 12 smoke tests before each push.",
      "make the font 14 px instead, 12 is tiny on the kiosk"],
     "12 smoke tests", "14 px"),
    # a one-off change with nothing said before
    (["add an export button to the report page",
      "make it green instead, red reads as an error"],
     None, "green"),
]


@pytest.mark.parametrize(("texts", "kept", "never"), NOT_SWITCHES)
def test_a_change_of_something_else_is_no_new_value(texts: list[str], kept: str | None,
                                                     never: str) -> None:
    saved = _texts(texts)
    assert not any(never in t for t in saved), saved
    if kept is not None:
        assert any(kept in t for t in saved), saved
