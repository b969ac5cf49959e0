"""``wardian automation trial`` (issue 12): a curator replayed on an agent's own archived
sessions in a scratch copy of its memory, through the real CLI and real SQLite files.

The sessions are made up here. Every test compares a logical dump of the real ``state.db``
and ``memory.db`` (and the data directory's file names) before and after: a trial that
writes one row, a run, a log or a plan to the real data directory fails.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._support import BUILTIN, W, install_fake_codex, write_claude_session
from tests.waits import wait_until

SESSIONS = [
    ("s-one", "From now on, always run make lint before you commit in this repository."),
    ("s-two", "We decided to keep the changelog in docs/CHANGES.md, not in the README."),
    ("s-three", "no, use pnpm, never npm"),
]


def _dump(path: Path) -> list[str]:
    """Every schema statement and row of the database at `path`, read-only."""
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _state(home: Path) -> dict[str, Any]:
    """What must not change: both databases' content and the data directory's files."""
    names = sorted(str(p.relative_to(home)) for p in home.rglob("*")
                   if not p.name.endswith(("-wal", "-shm")))
    return {"files": names, "state": _dump(home / "state.db"),
            "memory": _dump(home / "memory.db")}


def _wait_archived(w: W, count: int) -> None:
    wait_until(lambda: len(w.json("conversation", "list")) >= count,
               what=f"{count} archived conversations", poll_s=0.1)


def _cwd(tmp_path: Path) -> str:
    """The sessions' working directory (a model curator's CLI runs there, so it exists)."""
    folder = tmp_path / "checkout" / "shop"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)


def _setup(w: W, tmp_path: Path, *, refresh: tuple[str, ...] = ()) -> str:
    """Agent `dev` with one record saved for real ("Use npm …", by a manual run) and the
    three `SESSIONS` archived by `session close` (no invoker: nothing consolidated them),
    all in `_cwd`. Returns the real record's id."""
    w.setup_agent("dev", invoker=False, refresh=refresh)
    cwd = _cwd(tmp_path)
    seed = write_claude_session(tmp_path / "seed.jsonl", "seed", [
        ("user", "Use npm for installs in this repo."), ("assistant", "Understood.")], cwd=cwd)
    w.run("automation", "run", "start", "memory-consolidation", "--agent", "dev",
          "--assignments", json.dumps(BUILTIN), "--archive", str(seed), "--wait")
    records = w.records("dev")
    assert [r["text"] for r in records] == ["Use npm for installs in this repo."], records
    for session_id, text in SESSIONS:
        path = write_claude_session(tmp_path / f"{session_id}.jsonl", session_id, [
            ("user", text), ("assistant", "Understood.")], cwd=cwd)
        w.close("dev", session_id, path)
    _wait_archived(w, len(SESSIONS))
    w.wait_quiet()
    return str(records[0]["id"])


def _trial(w: W, *extra: str, check: bool = True) -> Any:
    return w.run("automation", "trial", "--blueprint", "memory-consolidation",
                 "--agent", "dev", "--assignments", json.dumps(BUILTIN), *extra, check=check)


def test_trial_shows_each_sessions_changes_and_writes_nothing(
    w: W, tmp_path: Path, wardian_home: Path
) -> None:
    real_id = _setup(w, tmp_path)
    cwd = _cwd(tmp_path)
    before = _state(wardian_home)
    doc = json.loads(_trial(w, "--json").stdout)
    assert _state(wardian_home) == before

    assert doc["schema"] == "wardian.trial/v1" and doc["blueprint"] == "memory-consolidation"
    assert doc["agent"]["name"] == "dev" and doc["last"] == 5
    sessions = doc["sessions"]
    assert [s["session_id"] for s in sessions] == ["s-one", "s-two", "s-three"]
    assert all(s["run_status"] == "succeeded" and s["workspace"] == cwd for s in sessions)
    one, two, three = (s["changes"] for s in sessions)
    assert [c["op"] for c in one] == ["save"] and "make lint" in one[0]["text"]
    assert one[0]["evidence"] in SESSIONS[0][1]
    assert one[0]["scope"] == {"kind": "workspace", "path": cwd}
    assert one[0]["kind"] == "stable"
    assert [c["op"] for c in two] == ["save"] and "CHANGES.md" in two[0]["text"]
    # the contradiction updates the record the agent really has (in the scratch copy)
    assert [c["op"] for c in three] == ["update"], three
    assert three[0]["memory_id"] == real_id and "pnpm" in three[0]["text"].lower()
    assert three[0]["previous_text"] == "Use npm for installs in this repo."
    assert doc["totals"] == {"sessions": 3, "save": 2, "update": 1, "remove": 0,
                             "dropped": 0, "failed": 0}
    # the scratch memory carried over from session to session: the update saw 2 saves
    assert [s["active_before"] for s in sessions] == [1, 2, 3]
    assert [r["text"] for r in w.records("dev")] == ["Use npm for installs in this repo."]


@pytest.mark.slow
def test_trial_text_reads_in_100_columns_and_last_limits(
    w: W, tmp_path: Path, wardian_home: Path
) -> None:
    _setup(w, tmp_path)
    cwd = _cwd(tmp_path)
    before = _state(wardian_home)
    out = _trial(w).stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, out
    assert "session 3/3  s-three" in out and "in " in out and cwd[-20:] in out
    assert "+ save" in out and "~ update" in out
    assert 'was: Use npm for installs in this repo.' in out
    assert 'evidence: "no, use pnpm, never npm"' in out
    assert "would save 2, update 1, remove 0" in out

    last = json.loads(_trial(w, "--last", "1", "--json").stdout)
    assert [s["session_id"] for s in last["sessions"]] == ["s-three"]
    assert _state(wardian_home) == before


@pytest.mark.slow
def test_compare_same_assignments_is_all_both(
    w: W, tmp_path: Path, wardian_home: Path
) -> None:
    _setup(w, tmp_path)
    before = _state(wardian_home)
    doc = json.loads(_trial(w, "--compare", json.dumps(BUILTIN), "--json").stdout)
    assert _state(wardian_home) == before
    assert doc["schema"] == "wardian.trial-compare/v1"
    assert doc["totals"] == {"only_a": 0, "only_b": 0, "both": 3}
    assert [len(s["both"]) for s in doc["sessions"]] == [1, 1, 1]


ANSWER = json.dumps({"operations": [
    {"op": "save", "text": "Install packages with pnpm, never npm", "kind": "stable",
     "scope": "workspace", "evidence": "use pnpm, never npm"},
]})


@pytest.mark.slow
def test_compare_two_curators_side_by_side(w: W, tmp_path: Path, wardian_home: Path) -> None:
    install_fake_codex(w, tmp_path, scenario="ok", answer=ANSWER)
    _setup(w, tmp_path, refresh=("codex",))
    codex = {"curator": {"target_type": "temporary_provider", "provider": "codex",
                         "model": "gpt-5.2-codex", "effort": "low"}}
    before = _state(wardian_home)
    doc = json.loads(_trial(w, "--compare", json.dumps(codex), "--json").stdout)
    assert _state(wardian_home) == before
    one, two, three = doc["sessions"]
    # B's one answer quotes session three only: elsewhere its evidence is not in the slice
    assert [len(s["only_a"]) for s in (one, two)] == [1, 1]
    assert not one["only_b"] and not two["only_b"] and not three["both"]
    assert [c["op"] for c in three["only_a"]] == ["update"]
    assert [c["text"] for c in three["only_b"]] == ["Install packages with pnpm, never npm"]
    assert doc["b"]["totals"]["dropped"] == 2
    # the cost the host reported (the fake codex: 2476 in, 122 out a turn); builtin: none
    assert (doc["b"]["totals"]["input_tokens"], doc["b"]["totals"]["output_tokens"]) == (
        3 * 2476, 3 * 122)
    assert doc["b"]["totals"]["sessions_with_tokens"] == 3
    assert "input_tokens" not in doc["a"]["totals"]

    text = _trial(w, "--compare", json.dumps(codex)).stdout
    assert max(len(line) for line in text.splitlines()) <= 100, text
    assert "only in A:" in text and "only in B:" in text
    assert "A tokens: none reported" in text
    assert "B tokens: 7428 in, 366 out (reported for 3 of 3 runs)" in text
    row = next(line for line in text.splitlines() if "Install packages with pnpm" in line)
    assert row.startswith(" " * 48 + " | "), row  # B's change in the right half
    assert _state(wardian_home) == before


_SLOW = pytest.mark.slow


@pytest.mark.parametrize(("args", "code", "message"), [
    pytest.param(("--agent", "nobody"), 1, "no agent", id="unknown-agent"),
    pytest.param(("--assignments", "{not json"), 2, "assignments", id="bad-json",
                 marks=_SLOW),
    pytest.param(("--assignments", json.dumps({"critic": BUILTIN["curator"]})), 2, "critic",
                 id="unknown-role", marks=_SLOW),
    pytest.param(("--compare", json.dumps({"curator": {"target_type": "temporary_provider",
                                                       "provider": "nope"}})), 2,
                 "Error: --compare: curator", id="bad-compare"),  # names the option it is in
    pytest.param(("--last", "0"), 2, "--last", id="last-zero", marks=_SLOW),
])
def test_bad_input_is_refused_and_writes_nothing(
    w: W, tmp_path: Path, wardian_home: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    _setup(w, tmp_path)
    before = _state(wardian_home)
    base = {"--agent": "dev", "--assignments": json.dumps(BUILTIN)}
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    argv = ["automation", "trial", "--blueprint", "memory-consolidation"]
    for key, value in {**base, **pairs}.items():
        argv += [key, value]
    proc = w.run(*argv, check=False)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert _state(wardian_home) == before


def test_no_archived_sessions_says_how_to_get_some(w: W, wardian_home: Path) -> None:
    w.setup_agent("dev", invoker=False)
    before = _state(wardian_home)
    proc = _trial(w, check=False)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "no archived sessions" in proc.stderr
    assert "conversation_logging.enabled" in proc.stderr
    assert _state(wardian_home) == before
