"""Record quality on made-up sessions in all three formats: what a saved record reads like.

Every session here is invented for the rule it tests (nothing comes from the corpus): a
dictated run-on message is cut into clean clauses and only its specific ones are kept; the
same request said again in one session is one record; a short reply takes its subject from
what the agent offered or did; fillers and repeated words leave the record text while the
evidence keeps the user's words verbatim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.curator.sessions import FORMATS, curate_session

SESSIONS: list[str] = []


def _saved(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op for op in ops if op["op"] in ("save", "update")]


def _texts(ops: list[dict[str, Any]]) -> list[str]:
    return [op["text"] for op in _saved(ops)]


def _sessions(name: str) -> list[str]:
    SESSIONS.extend(f"{name}[{fmt}]" for fmt in FORMATS)
    return list(FORMATS)


_DICTATED = (
    "ok so the plan for the next months is basically that we will ship the offline sync "
    "first because the field teams keep losing data and then we'll add the photo upload "
    "which is like a small feature actually and we will be doing like something like we "
    "said and also we will move billing to a separate service later that is kind of it"
)


@pytest.mark.parametrize("fmt", _sessions("dictation-clauses"))
def test_dictated_run_on_is_cut_into_clean_clauses(fmt: str, tmp_path: Path) -> None:
    from wardian.curator.segments import split_segments

    clauses = " | ".join(seg.text for seg in split_segments(1, _DICTATED))
    assert "we will ship the offline sync first | because" in clauses, clauses
    assert "| we will move billing to a separate service later" in clauses, clauses
    ops = curate_session(fmt, [("user", _DICTATED), ("assistant", "Got it.")], tmp_path)
    texts = _texts(ops)
    # plans for later are not decisions: no stable record from them
    assert not [op for op in _saved(ops) if op["kind"] == "stable"], texts
    for op in _saved(ops):
        assert len(op["text"]) < 120, op["text"]  # one clause, not the whole ramble
        assert op["evidence"] in _DICTATED and len(op["evidence"]) < 120
    # the clause with no subject left ("doing like something like we said") is not kept
    assert not any("something" in t.lower() for t in texts), texts


@pytest.mark.parametrize("fmt", _sessions("same-subject-once"))
def test_one_request_said_three_times_is_one_record(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "the dark_mode toggle should live in the top toolbar, not in settings"),
        ("assistant", "Moved it."),
        ("user", "dark_mode toggle is still not in the toolbar like I asked, move it there"),
        ("assistant", "Moved it again."),
        ("user", "dark_mode toggle should be a toolbar button and never hidden in settings"),
        ("assistant", "Done."),
        ("user", "always run the linter before committing"),
        ("assistant", "Ok."),
    ], tmp_path)
    texts = _texts(ops)
    assert sum("dark_mode" in t for t in texts) == 1, texts
    assert any("linter" in t for t in texts), texts


@pytest.mark.parametrize("fmt", _sessions("different-subjects-kept"))
def test_two_rules_on_plain_words_are_both_kept(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "use pnpm for every install in this repo"),
        ("assistant", "Ok."),
        ("user", "use vitest for every test in this repo"),
        ("assistant", "Ok."),
    ], tmp_path)
    texts = " ".join(_texts(ops)).lower()
    assert "pnpm" in texts and "vitest" in texts


@pytest.mark.parametrize("fmt", _sessions("terse-rejection"))
def test_terse_rejection_reason_reads_with_what_the_agent_then_did(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "add a NOTICE file for the bundled fonts"),
        ("tool", "Write", {"file_path": "/work/app/NOTICE", "content": "Fonts by Someone"}),
        ("reject", "Acme Type Foundry."),
        ("tool", "Write", {"file_path": "/work/app/NOTICE", "content": "Fonts by Acme"}),
        ("result", "File created successfully"),
        ("assistant", "Created NOTICE, crediting the fonts to Acme Type Foundry."),
    ], tmp_path)
    texts = _texts(ops)
    # never the bare fragment: a reader must see what "Acme Type Foundry" is about
    assert all(t.strip(" .") != "Acme Type Foundry" for t in texts), texts
    if fmt == "claude":  # the only format that keeps the refusal's own reason
        assert any("crediting the fonts to Acme Type Foundry" in t for t in texts), texts
        assert any("NOTICE" in t for t in texts), texts
        assert all(op["evidence"] == "Acme Type Foundry." for op in _saved(ops)), ops


@pytest.mark.parametrize("fmt", _sessions("terse-rejection-unexplained"))
def test_terse_rejection_the_agent_never_explains_is_not_saved(
    fmt: str, tmp_path: Path
) -> None:
    ops = curate_session(fmt, [
        ("user", "add a NOTICE file for the bundled fonts"),
        ("tool", "Write", {"file_path": "/work/app/NOTICE", "content": "Fonts by Someone"}),
        ("reject", "Acme Type Foundry."),
        ("assistant", "Understood."),
    ], tmp_path)
    assert all("Acme" not in t for t in _texts(ops)), _texts(ops)


_OFFER = (
    "Two ways to fix the flaky upload test:\n\n"
    "1. **Retry the upload in the test** - wrap the call in a retry helper\n"
    "2. **Fake the storage clock** - inject a clock into the uploader\n\n"
    "Which do you prefer?"
)


@pytest.mark.parametrize("fmt", _sessions("option-named"))
def test_statement_about_an_offered_option_names_it(fmt: str, tmp_path: Path) -> None:
    said = "option 1 doesn't work because retries hide real storage failures"
    ops = curate_session(fmt, [
        ("user", "the upload test is flaky on CI"),
        ("assistant", _OFFER),
        ("user", said),
        ("assistant", "Then I will inject a clock."),
    ], tmp_path)
    texts = _texts(ops)
    assert any("Option 1 (retry the upload in the test) doesn't work" in t for t in texts), texts
    assert any(op["evidence"] == said for op in _saved(ops)), ops


@pytest.mark.parametrize("fmt", _sessions("typos-and-fillers"))
def test_record_text_drops_fillers_and_typos_evidence_stays_verbatim(
    fmt: str, tmp_path: Path
) -> None:
    said = "pls always run the the schema check before you push anythning"
    ops = curate_session(fmt, [("user", said), ("assistant", "Sure, noted.")], tmp_path)
    [op] = _saved(ops)
    assert op["evidence"] == said
    text = op["text"]
    assert "anything" in text and "anythning" not in text, text
    assert "pls" not in text.lower() and "the the" not in text, text


@pytest.mark.parametrize("fmt", _sessions("session-words-kept"))
def test_words_the_session_uses_are_never_corrected(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "always deploy zorbly through the blue-green script"),
        ("assistant", "Noted: zorbly goes out through the blue-green script."),
    ], tmp_path)
    assert any("zorbly" in t for t in _texts(ops)), _texts(ops)


@pytest.mark.parametrize("fmt", _sessions("spoken-repeats"))
def test_spoken_repeats_and_then_for_than_are_cleaned(fmt: str, tmp_path: Path) -> None:
    ops = curate_session(fmt, [
        ("user", "I meant the retry count should be lower then five, actually"),
        ("assistant", "Understood."),
    ], tmp_path)
    [text] = _texts(ops)
    assert text.startswith("The retry count should be lower than five"), text
    assert "actually" not in text, text


def test_enough_made_up_sessions_here() -> None:
    assert len(SESSIONS) >= 27, len(SESSIONS)  # 9 kinds of session, each in 3 formats
