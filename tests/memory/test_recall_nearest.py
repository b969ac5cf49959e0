"""When nothing clears recall's relevance floor, the nearest records below it come back
*as such* (`wardian.memory.ranking.nearest`, `RecallIndex.recall_with_nearest`), through
the real CLI and the real MCP server: the floor still answers "nothing fits", and the
agent sees what came closest (issue 19: the floor also refuses paraphrases whose answer
the ranking put first). Made-up records; none of the recall suites' sentences."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from tests.mcp.conftest import add_agent, base_env, capability_env, session, structured, text_of

from wardian.memory.db import open_memory_db
from wardian.memory.embedding import model_files
from wardian.memory.models import Scope
from wardian.memory.ranking import Candidate, nearest
from wardian.memory.store import MemoryStore

AGENT = "aaaaaaaa-0000-4000-8000-0000000000a1"
OTHER = "bbbbbbbb-0000-4000-8000-0000000000b2"
WS = "/src/gull"
GARDEN = (
    "The greenhouse sensors report humidity every ninety seconds",
    "Irrigation valves are driven over a Modbus link from the pump shed",
    "Seedling trays are photographed at dawn for the growth dashboard",
    "Frost alerts page the night gardener by SMS",
    "Compost temperatures are logged by hand on Fridays",
    "The tomato beds rotate with beans every second season",
    "Pollinator boxes are cleaned in early March",
    "Rainwater tanks overflow into the pond, never into the drains",
)
NOTHING_FITS = "frost blanket supplier contract"
"""Shares one word with one record ("frost"), and asks about something never stored."""


def _candidate(rowid: int, *, coverage: float = 0.0, cosine: float = 0.0,
               updated_at: str = "2026-01-01", held: dict[str, float] | None = None
               ) -> Candidate:
    return Candidate(rowid, coverage=coverage, cosine=cosine, updated_at=updated_at,
                     held=held)


def test_nearest_orders_as_fuse_does_and_drops_candidates_with_no_tie() -> None:
    pool = [
        _candidate(1, coverage=0.2, cosine=0.1, held={"frost": 1.0}),
        _candidate(2, cosine=0.35),
        _candidate(3, cosine=-0.05),  # nothing in common: neither a word nor a direction
        _candidate(4, coverage=0.2, cosine=0.1, updated_at="2026-02-01",
                   held={"frost": 1.0}),
        _candidate(5, cosine=0.32),  # fused 0.16: above 4 and 1 (0.15 each)
    ]
    assert [c.rowid for c in nearest(pool, semantic=True)] == [2, 5, 4]
    assert [c.rowid for c in nearest(pool, semantic=True, count=5)] == [2, 5, 4, 1]
    # Lexical only: coverage alone orders, newest first among equals.
    assert [c.rowid for c in nearest(pool, semantic=False, count=2)] == [4, 1]
    assert nearest(pool, semantic=True, count=0) == []
    assert nearest([], semantic=True) == []


@pytest.fixture
def garden(backend: str) -> MemoryStore:
    """A store on each backend with the made-up garden workspace, another agent's record
    on the same words, another workspace's, and a removed one."""
    store = MemoryStore(open_memory_db())
    for text in GARDEN:
        store.save(AGENT, text, evidence="e", scope=Scope.workspace(WS), actor="t")
    store.save(OTHER, "Frost alerts page the orchard keeper", evidence="e",
               scope=Scope.workspace(WS), actor="t")
    store.save(AGENT, "Frost cloth is stored in the blue shed", evidence="e",
               scope=Scope.workspace("/src/other"), actor="t")
    gone = store.save(AGENT, "Frost blanket orders go through the co-op", evidence="e",
                      scope=Scope.workspace(WS), actor="t")
    store.remove(AGENT, gone.id, actor="t", reason="superseded")
    held = store.save(AGENT, "Frost blanket supplier portal login is kept by the co-op",
                      evidence="e", scope=Scope.workspace(WS), actor="t")
    from wardian._db import atomic

    with atomic(store.conn):  # as the secret-scan migration sets a record aside
        store.conn.execute("UPDATE records SET flagged = ? WHERE id = ?",
                           ("secret_detected: Secret Keyword in text", held.id))
    return store


def test_nothing_fits_gives_the_nearest_in_scope_and_never_as_matches(
        garden: MemoryStore) -> None:
    found = garden.index.recall_with_nearest(AGENT, NOTHING_FITS, workspace=WS)
    assert found.records == [] == garden.index.recall(AGENT, NOTHING_FITS, workspace=WS)
    texts = [r.text for r in found.nearest]
    assert texts[0] == "Frost alerts page the night gardener by SMS"
    # With the embedding model every record of the scope has some direction in common
    # with the question, so the nearest are a full three; without it, only the one above.
    assert len(texts) == (3 if garden.index.embedder() is not None else 1)
    # Only what recall itself may return: the agent's own active records in scope, none
    # set aside as holding a secret (that one shares three of the four words).
    assert all(r.agent_id == AGENT and r.status == "active" and r.scope.path == WS
               and r.flagged is None for r in found.nearest)
    assert garden.index.recall_with_nearest(AGENT, NOTHING_FITS, workspace=WS,
                                      nearest=0).nearest == []
    assert len(garden.index.recall_with_nearest(AGENT, NOTHING_FITS, workspace=WS,
                                          nearest=1).nearest) == 1


def test_lexical_only_names_just_the_records_sharing_a_word(
        garden: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the optional embedding model only records holding a word of the question
    # are candidates: here one (the removed, flagged, other-workspace and other-agent
    # records share "frost" too).
    monkeypatch.setattr(garden.index, "embedder", lambda: None)
    found = garden.index.recall_with_nearest(AGENT, NOTHING_FITS, workspace=WS)
    assert found.records == []
    assert [r.text for r in found.nearest] == ["Frost alerts page the night gardener by SMS"]


def test_a_match_or_an_empty_question_gives_no_nearest(garden: MemoryStore) -> None:
    matched = garden.index.recall_with_nearest(AGENT, "frost alerts", workspace=WS)
    assert matched.records and matched.nearest == []
    assert garden.index.recall_with_nearest(AGENT, "what is the", workspace=WS) == ([], [])
    # Another agent is shown only its own record, near or not.
    theirs = garden.index.recall_with_nearest(OTHER, NOTHING_FITS, workspace=WS).nearest
    assert [r.text for r in theirs] == ["Frost alerts page the orchard keeper"]


def test_the_last_read_fails_closed_on_a_record_changed_since_it_was_considered(
        garden: MemoryStore) -> None:
    # Candidates are gathered, then read: a record another process removed, set aside or
    # that belongs to someone else in between is not shown, as a match or as nearest.
    rows = {str(r[1]): int(r[0]) for r in garden.conn.execute(
        "SELECT rowid, text FROM records")}
    mine = rows["Frost alerts page the night gardener by SMS"]
    others = [rows["Frost alerts page the orchard keeper"],
              rows["Frost blanket orders go through the co-op"],
              rows["Frost blanket supplier portal login is kept by the co-op"]]
    read = garden.index._records_by_rowid(AGENT, [*others, mine])
    assert [r.text for r in read] == ["Frost alerts page the night gardener by SMS"]


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wardian", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, check=False)


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "gull"
    (root / ".git").mkdir(parents=True)
    return root.resolve()


def _env(agent_id: str) -> dict[str, str]:
    return {**os.environ, **capability_env(agent_id)}


def _fill(env: dict[str, str], cwd: Path) -> None:
    for text in GARDEN:
        done = _cli(env, cwd, "memory", "save", text, "--evidence", "made up")
        assert done.returncode == 0, done.stderr


def test_cli_prints_nothing_fits_then_the_nearest_under_their_heading(
        tmp_path: Path, wardian_home: Path) -> None:
    cwd = _workspace(tmp_path)
    env = _env(add_agent("ada"))
    _fill(env, cwd)
    done = _cli(env, cwd, "memory", "recall", NOTHING_FITS)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"(no memory matches {NOTHING_FITS!r})"
    assert lines[1] == "Nearest records, below the relevance floor (they may not answer it):"
    assert "Frost alerts page the night gardener" in lines[2]
    assert len(lines) == 2 + (3 if model_files() is not None else 1)
    assert all(line.startswith("- [") for line in lines[2:])
    # The query as typed, not Python's repr of it.
    quoted = _cli(env, cwd, "memory", "recall", f"don't\t{NOTHING_FITS}").stdout
    assert quoted.splitlines()[0] == f"(no memory matches 'don't {NOTHING_FITS}')"

    as_json = json.loads(_cli(env, cwd, "memory", "recall", NOTHING_FITS, "--json").stdout)
    assert as_json["records"] == [] and len(as_json["nearest"]) == len(lines) - 2
    capped = _cli(env, cwd, "memory", "recall", NOTHING_FITS, "--limit", "1").stdout
    assert len(capped.splitlines()) == 3  # --limit caps the nearest too

    matched = _cli(env, cwd, "memory", "recall", "frost alerts").stdout.splitlines()
    assert matched and all(line.startswith("- [") for line in matched)
    assert json.loads(_cli(env, cwd, "memory", "recall", "frost alerts", "--json").stdout
                      )["nearest"] == []
    startup = json.loads(_cli(env, cwd, "memory", "recall", "--json").stdout)
    assert "nearest" not in startup  # the startup set has no query to be near


def test_mcp_recall_returns_the_nearest_beside_an_empty_records_list(
        tmp_path: Path, wardian_home: Path) -> None:
    cwd = _workspace(tmp_path)
    agent_id = add_agent("ada")
    _fill(_env(agent_id), cwd)
    env = {**base_env(), **capability_env(agent_id)}

    async def main() -> None:
        async with session(env, cwd) as client:
            result = await client.call_tool("memory_recall", {"query": NOTHING_FITS})
            assert not result.is_error, text_of(result)
            doc = structured(result)
            assert doc["records"] == [] and doc["lines"] == []
            assert doc["nearest"][0]["text"] == "Frost alerts page the night gardener by SMS"
            text = text_of(result)
            assert text.startswith(f"(no memory matches {NOTHING_FITS!r})\nNearest records")
            matched = await client.call_tool("memory_recall", {"query": "frost alerts"})
            assert structured(matched)["records"] and structured(matched)["nearest"] == []

    anyio.run(main)
