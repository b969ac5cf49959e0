"""Memory consolidation end to end through the real CLI and real subprocesses (issue 9
acceptance): a session close with a real transcript → exactly one run → records saved with
evidence found in the transcript → a second delivery of the same event changes nothing → a
later session of the same agent consolidates only the new part of the archive; review mode
produces a plan that ``garden maintain preview/apply`` accepts (answered on a
terminal).

The corpus transcripts are read from ../shared/corpus/transcripts (never copied here); the
tests skip with a reason where that folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._support import BUILTIN, W, corpus_params, write_claude_session
from tests.terminal import on_terminal
from wardian.memory.consolidation import normalise_whitespace
from wardian.transcripts import load_transcript

PROVIDER_OF_FOLDER = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
"""The agent's provider for each corpus folder (the session close names it, and the archive
picks the transcript parser from it)."""


def _text_of(path: Path) -> str:
    """The normalised text of a transcript as the archive holds it (whitespace collapsed)."""
    conversation = load_transcript(path)
    return normalise_whitespace("\n".join(m.text for m in conversation.messages))


def _revisions(records: list[dict[str, Any]]) -> dict[str, str]:
    return {r["id"]: r["current_revision_id"] for r in records}


def _history_actors(record_id: str) -> list[str]:
    """Who wrote each revision of the record (read from memory.db)."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return [revision.actor for revision in store.history(record_id)]


@pytest.mark.parametrize("transcript", corpus_params())
def test_session_close_consolidates_once_then_only_the_new_part(
    w: W, transcript: Path, later_transcript: Path
) -> None:
    provider = PROVIDER_OF_FOLDER[transcript.parent.name]
    _, invoker = w.setup_agent("dev", provider=provider)
    text = _text_of(transcript)

    # 1. session close with a real transcript -> exactly one run, succeeded
    event = w.close("dev", "session-1", transcript)
    runs = w.wait_runs(invoker, 1)
    assert len(runs) == 1, runs
    first = runs[0]
    assert first["status"] == "succeeded", (first, w.drain_log())
    steps = w.steps(first["run_id"])
    archive, commit = steps["archive"]["output"], steps["commit"]["output"]
    assert archive["source"] == "archive" and archive["after_seq"] is None
    assert archive["count"] > 0 and archive["first_seq"] == 1
    assert archive["last_seq"] == archive["cursor"] and commit["cursor"] == archive["cursor"]
    assert steps["review"]["status"] == "skipped"

    # 2. records saved, each with evidence found in the transcript, revisioned by the run
    records = w.records("dev")
    applied = {a["memory_id"] for a in commit["applied"] if a["op"] == "save"}
    assert {r["id"] for r in records} == applied
    for record in records:
        assert normalise_whitespace(record["evidence"]) in text, record
        assert _history_actors(record["id"]) == [f"run:{first['run_id']}"]
    for dropped in commit["dropped"]:
        assert dropped["code"] and dropped["reason"]

    # 3. a second delivery of the same event changes nothing
    assert w.close("dev", "session-1", transcript) == event
    w.wait_quiet()
    assert len(w.history(invoker)) == 1
    assert _revisions(w.records("dev", include_removed=True)) == _revisions(records)

    # 4. a later session consolidates only the new part of the archive
    w.close("dev", "session-2", later_transcript, provider="claude")
    runs = w.wait_runs(invoker, 2)
    assert len(runs) == 2
    second = next(r for r in runs if r["run_id"] != first["run_id"])
    assert second["status"] == "succeeded", (second, w.drain_log())
    later = w.steps(second["run_id"])["archive"]["output"]
    assert later["after_seq"] == archive["cursor"]
    assert later["first_seq"] == archive["cursor"] + 1
    new_text = _text_of(later_transcript)
    assert later["count"] == len(load_transcript(later_transcript).messages)
    after = w.records("dev", include_removed=True)
    later_saved = [r for r in after if r["id"] not in applied]
    assert later_saved, w.steps(second["run_id"])["commit"]["output"]  # session 2 has rules
    for record in later_saved:  # saved by the later run: evidence from session 2 only
        assert normalise_whitespace(record["evidence"]) in new_text, record


def test_review_mode_drafts_a_plan_garden_accepts(w: W, tmp_path: Path) -> None:
    transcript = write_claude_session(tmp_path / "review.jsonl", "review-session", [
        ("user", "Please always use pnpm instead of npm in this repository."),
        ("assistant", "Will do: pnpm from now on."),
        ("user", "We decided to pin Node 22 for this project because of the native addons."),
        ("assistant", "Pinned Node 22."),
    ])
    _, invoker = w.setup_agent("reviewer", inputs=("mode=review",))
    w.close("reviewer", "review-1", transcript)
    (run,) = w.wait_runs(invoker, 1)
    assert run["status"] == "succeeded", (run, w.drain_log())
    steps = w.steps(run["run_id"])
    assert steps["commit"]["status"] == "skipped"
    review = steps["review"]["output"]
    assert w.records("reviewer") == []  # review mode writes nothing to memory
    assert review["path"] is not None, review  # the session states a preference: a plan
    plan = Path(review["path"])
    assert plan.parent == w.home / "plans"
    preview = w.json("garden", "maintain", "preview", str(plan), "--agent", "reviewer")
    digest = str(preview.get("preview_digest") or preview.get("digest"))
    assert digest.startswith("sha256:")
    applied = on_terminal("garden", "maintain", "apply", str(plan), "--agent", "reviewer",
                          "--confirm", digest[:19], answer="yes", env=w.env)
    assert applied.returncode == 0, applied.stderr
    records = w.records("reviewer")
    assert len(records) == review["operations"]
    text = _text_of(transcript)
    for record in records:
        assert normalise_whitespace(record["evidence"]) in text


def test_manual_run_with_an_archive_file_leaves_the_cursor(w: W, tmp_path: Path) -> None:
    transcript = write_claude_session(tmp_path / "manual.jsonl", "manual", [
        ("user", "From now on, always write commit messages in English in this project."),
        ("assistant", "Understood."),
    ])
    w.setup_agent("manual", invoker=False)
    run = w.json("automation", "run", "start", "memory-consolidation", "--agent", "manual",
                 "--assignments", json.dumps(BUILTIN), "--archive", str(transcript),
                 "--wait")
    assert run["status"] == "succeeded", run
    steps = w.steps(run["id"])
    archive = steps["archive"]["output"]
    assert archive["source"] == "file" and archive["cursor"] is None
    assert archive["path"] == str(transcript)
    commit = steps["commit"]["output"]
    assert commit["cursor"] is None and commit["idempotency_key"] == f"run:{run['id']}"
    text = _text_of(transcript)
    for record in w.records("manual"):
        assert normalise_whitespace(record["evidence"]) in text
