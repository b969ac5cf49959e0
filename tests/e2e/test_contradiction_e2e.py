"""Contradictions become updates, end to end through `wardian session close` (issue 12).

Two made-up Claude Code sessions of one agent, consolidated by the builtin curator: the
second contradicts what the first saved. The result must be one active record holding the
new statement, with the old text kept as a revision, never a second active record; a
plain repeat changes nothing; a "Do not …" rule is saved, not dropped as a question.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import building_home, copy_home
from tests.e2e._support import W, write_claude_session


def _history_texts(record_id: str) -> list[str]:
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return [str(revision.snapshot["text"]) for revision in store.history(record_id)]


TABS = "Use tabs, not spaces, in the Go files."
"""The first session of two tests (a contradiction, a repeat): consolidated once."""


def _first_session(w: W, tmp_path: Path, first: str) -> str:
    """Agent ``dev`` whose first session, saying `first`, was closed and consolidated into
    one record; returns the invoker id."""
    _, invoker = w.setup_agent("dev")
    one = write_claude_session(tmp_path / "one.jsonl", "session-one", [
        ("user", first), ("assistant", "Understood."),
    ])
    w.close("dev", "session-one", one)
    w.wait_runs(invoker, 1)
    assert len(w.records("dev")) == 1, w.records("dev")
    return invoker


@pytest.fixture(scope="module")
def tabs_first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data directory after `_first_session` with `TABS` (the real CLI's close and
    drain), built once for the module; (the directory, the invoker id)."""
    root = tmp_path_factory.mktemp("tabs")
    with building_home(root) as home:
        w = W(home)
        invoker = _first_session(w, root, TABS)
        w.wait_quiet()
    return home, invoker


def _two_sessions(w: W, tmp_path: Path, first: str, second: str,
                  request: pytest.FixtureRequest) -> list[dict[str, object]]:
    if first == TABS:
        home, invoker = request.getfixturevalue("tabs_first")
        copy_home(home, w.home)
    else:
        invoker = _first_session(w, tmp_path, first)
    two = write_claude_session(tmp_path / "two.jsonl", "session-two", [
        ("user", second), ("assistant", "Understood."),
    ])
    w.close("dev", "session-two", two)
    w.wait_runs(invoker, 2)
    return w.records("dev")


@pytest.mark.parametrize(
    ("first", "second", "new_word", "old_text"),
    [
        ("Use npm for installs in this repo.", "no, use pnpm, never npm", "pnpm", "npm"),
        (TABS, "Use spaces, not tabs, in the Go files.",
         "spaces, not tabs", "tabs, not spaces"),
        ("Always squash commits before merging.", "Never squash commits before merging.",
         "never", "always"),
    ],
    ids=["npm-then-pnpm", "tabs-then-spaces", "always-then-never"],
)
def test_contradiction_updates_the_record(
    w: W, tmp_path: Path, request: pytest.FixtureRequest, first: str, second: str,
    new_word: str, old_text: str
) -> None:
    records = _two_sessions(w, tmp_path, first, second, request)
    assert len(records) == 1, records  # an update, not a second active record
    record = records[0]
    assert new_word in str(record["text"]).lower(), record
    history = [t.lower() for t in _history_texts(str(record["id"]))]
    assert len(history) == 2 and old_text in history[0], history


def test_repeat_changes_nothing(w: W, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    records = _two_sessions(w, tmp_path, TABS, "use tabs, not spaces, in the go files", request)
    assert len(records) == 1
    assert len(_history_texts(str(records[0]["id"]))) == 1


def test_do_not_rule_is_saved_with_the_transcripts_cwd(w: W, tmp_path: Path) -> None:
    _, invoker = w.setup_agent("dev")
    one = write_claude_session(tmp_path / "one.jsonl", "session-one", [
        ("user", "Do not edit the generated client under api/gen by hand."),
        ("assistant", "Understood."),
    ], cwd="/srv/checkout/app")
    w.close("dev", "session-one", one)
    w.wait_runs(invoker, 1)
    records = w.records("dev")
    assert len(records) == 1 and "api/gen" in str(records[0]["text"]), records
