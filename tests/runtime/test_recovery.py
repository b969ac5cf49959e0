"""Recovery: sessions no hook reported become one `recovered` session-close event each, for
Claude Code, Codex and Gemini transcript layouts; exactly once with hooks; never in a hook."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.recovery import claude_project_dir, has_requests, sweep
from wardian.runtime.session_events import SessionEventQueue, drain_lock


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner) -> dict[str, Path]:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gem"))
    work = (tmp_path / "work").resolve()
    work.mkdir()
    AgentRegistry(open_state_db()).add("ada", "claude", workspace=str(work))
    assert invoke(cli, "settings", "set", "conversation_logging.enabled", "true").exit_code == 0
    return {"work": work, "tmp": tmp_path}


def _claude_copy(corpus_dir: Path, work: Path, name: str = "entire-mit-license-entire-inc",
                 session: str = "11111111-2222-4333-8444-555555555555") -> Path:
    folder = claude_project_dir(str(work))
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{session}.jsonl"
    shutil.copyfile(corpus_dir / "claude-code" / f"{name}.jsonl", target)  # temp copy only
    return target


def _recovered() -> list[str]:
    return [e.session_id for e in SessionEventQueue(open_state_db()).list()
            if e.boundary == "recovered"]


def _drain() -> None:
    from wardian.invokers.drain import drain_once

    drain_once()


def test_an_unreported_claude_session_is_recovered_once(setup: dict[str, Path],
                                                        corpus_dir: Path,
                                                        cli: CliRunner) -> None:
    path = _claude_copy(corpus_dir, setup["work"])
    res = invoke(cli, "session", "recover", "--json")
    assert res.exit_code == 0, res.output
    (item,) = json.loads(res.stdout)["recorded"]
    assert item["host"] == "claude-code" and item["transcript_path"] == str(path)
    (event,) = SessionEventQueue(open_state_db()).list()
    assert event.boundary == "recovered" and event.source == "recovery"
    assert event.session_id == f"11111111-2222-4333-8444-555555555555@{item['messages']}"
    _drain()
    from wardian.runtime.archives import ArchiveStore

    (conv,) = ArchiveStore(open_state_db()).list()
    assert conv.message_count == item["messages"]
    assert sweep().recorded == []  # unchanged: nothing
    path.touch()  # a new mtime but no new message: still nothing
    assert sweep().recorded == []
    assert len(_recovered()) == 1


def test_a_session_that_grew_is_recovered_for_its_new_part(setup: dict[str, Path],
                                                           corpus_dir: Path) -> None:
    path = _claude_copy(corpus_dir, setup["work"])
    (first,) = sweep().recorded
    _drain()
    text = path.read_text(encoding="utf-8")
    last = json.loads(text.splitlines()[-1])
    extra = {"type": "user", "uuid": "new-uuid-1", "parentUuid": last.get("uuid"),
             "sessionId": last.get("sessionId"), "timestamp": "2027-01-01T00:00:00.000Z",
             "message": {"role": "user", "content": "One more thing: keep the changelog tidy."}}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(("" if text.endswith("\n") else "\n") + json.dumps(extra) + "\n")
    (second,) = sweep().recorded
    assert second["already_archived"] == first["messages"]
    assert second["messages"] > first["messages"]
    assert len(_recovered()) == 2


def test_a_session_closed_by_its_hook_is_one_event(setup: dict[str, Path], corpus_dir: Path,
                                                   cli: CliRunner) -> None:
    path = _claude_copy(corpus_dir, setup["work"])
    payload = {"session_id": "11111111-2222-4333-8444-555555555555",
               "transcript_path": str(path), "cwd": str(setup["work"]),
               "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    lock = drain_lock()
    assert lock.acquire()
    try:  # no detached worker races the test
        res = invoke(cli, "hooks", "claude-code", "session-end", "--agent", "ada",
                     input=json.dumps(payload))
        assert res.exit_code == 0, res.output
        assert sweep().recorded == []  # its event is still pending: it will archive it
    finally:
        lock.release()
    _drain()
    assert sweep().recorded == []  # archived by the hook's event
    assert [e.boundary for e in SessionEventQueue(open_state_db()).list()] == ["shutdown"]


def test_session_start_hook_only_queues_the_sweep(setup: dict[str, Path], corpus_dir: Path,
                                                  cli: CliRunner) -> None:
    _claude_copy(corpus_dir, setup["work"])
    live = _claude_copy(corpus_dir, setup["work"], session="99999999-2222-4333-8444-555555555555")
    payload = {"session_id": "99999999-2222-4333-8444-555555555555",
               "transcript_path": str(live), "cwd": str(setup["work"]),
               "hook_event_name": "SessionStart", "source": "resume"}
    lock = drain_lock()
    assert lock.acquire()
    try:
        res = invoke(cli, "hooks", "claude-code", "session-start", "--agent", "ada",
                     input=json.dumps(payload))
        assert res.exit_code == 0, res.output
        # nothing swept in-hook
        assert SessionEventQueue(open_state_db()).list() == [] and has_requests(open_state_db())
    finally:
        lock.release()
    _drain()
    # the earlier session is recovered; the live one (the hook's own transcript) is not
    assert [s.split("@")[0] for s in _recovered()] == ["11111111-2222-4333-8444-555555555555"]
    assert not has_requests(open_state_db())


def _first_line(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        return handle.readline()


def test_codex_and_gemini_layouts(setup: dict[str, Path], corpus_dir: Path) -> None:
    work, tmp = setup["work"], setup["tmp"]
    codex_src = next(p for p in sorted((corpus_dir / "codex").glob("*.jsonl"))
                     if json.loads(_first_line(p)).get("type") == "session_meta")
    lines = codex_src.read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])
    assert meta["type"] == "session_meta"
    meta["payload"]["cwd"] = str(work / "sub")  # a session started inside the workspace
    rollout = tmp / "codex" / "sessions" / "2026" / "02" / "14" / "rollout-2026-x.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", encoding="utf-8")
    other = rollout.with_name("rollout-2026-y.jsonl")  # another project's session
    meta["payload"]["cwd"] = str(tmp / "elsewhere")
    other.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", encoding="utf-8")
    gemini_src = sorted((corpus_dir / "gemini").glob("*.json*"))[0]
    chats = (tmp / "gem" / ".gemini" / "tmp" / hashlib.sha256(str(work).encode()).hexdigest()
             / "chats")
    chats.mkdir(parents=True)
    shutil.copyfile(gemini_src, chats / f"session-1{gemini_src.suffix}")
    report = sweep()
    assert sorted(r["host"] for r in report.recorded) == ["codex", "gemini"]
    assert str(other) not in {r["transcript_path"] for r in report.recorded}


def test_no_recovery_without_conversation_logging(setup: dict[str, Path], corpus_dir: Path,
                                                  cli: CliRunner) -> None:
    _claude_copy(corpus_dir, setup["work"])
    assert invoke(cli, "settings", "set", "conversation_logging.enabled", "false").exit_code == 0
    report = sweep()
    assert report.recorded == [] and report.skipped == {"conversation logging disabled": 1}


def test_recovered_boundary_is_an_invoker_choice(setup: dict[str, Path], cli: CliRunner) -> None:
    from tests.app.test_doctor import write_tick

    write_tick()
    res = invoke(cli, "automation", "session-close", "add", "--blueprint", "tick", "--name", "r",
                 "--agent", "ada", "--assignments", "{}", "--boundary", "recovered")
    assert res.exit_code == 0, res.output
    doc = json.loads(invoke(cli, "automation", "session-close", "show", res.stdout.strip(),
                            "--json").stdout)
    assert doc["boundaries"] == ["recovered"]


def _gemini_jsonl(path: Path, session: str, texts: list[str]) -> Path:
    """A Gemini CLI 0.61 session JSONL (metadata line, messages, `$set` updates)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [{"sessionId": session, "projectHash": "0" * 64, "kind": "main",
              "startTime": "2026-12-05T12:00:00.000Z"}]
    for i, text in enumerate(texts):
        lines.append({"id": f"m{i}", "timestamp": "2026-12-05T12:00:01.000Z",
                      "type": "user" if i % 2 == 0 else "gemini",
                      "content": [{"text": text}] if i % 2 == 0 else text})
        lines.append({"$set": {"lastUpdated": "2026-12-05T12:00:02.000Z"}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_gemini_project_registry_layout(setup: dict[str, Path]) -> None:
    """Gemini CLI 0.61 names a project's folder through ~/.gemini/projects.json and a
    `.project_root` marker (not the path's SHA-256) and writes `session-*.jsonl`: recovery
    finds those sessions, and only the workspace's."""
    work, tmp = setup["work"], setup["tmp"]
    gem = tmp / "gem" / ".gemini"
    (gem / "tmp" / "work").mkdir(parents=True)
    (gem / "tmp" / "work" / ".project_root").write_text(str(work))
    (gem / "tmp" / "sub").mkdir()
    (gem / "tmp" / "sub" / ".project_root").write_text(str(work / "sub"))  # inside it
    (gem / "tmp" / "other").mkdir()
    (gem / "tmp" / "other" / ".project_root").write_text(str(tmp / "elsewhere"))
    (gem / "projects.json").write_text(json.dumps({"projects": {
        str(work): "work", str(work / "sub"): "sub", str(tmp / "elsewhere"): "other"}}))
    ours = _gemini_jsonl(gem / "tmp" / "work" / "chats" / "session-2026-12-05T12-00-aaaa.jsonl",
                         "aaaa-1", ["keep docs in docs/", "Noted."])
    inside = _gemini_jsonl(gem / "tmp" / "sub" / "chats" / "session-2026-12-05T12-01-bbbb.jsonl",
                           "bbbb-1", ["use tabs", "OK."])
    _gemini_jsonl(gem / "tmp" / "other" / "chats" / "session-2026-12-05T12-02-cccc.jsonl",
                  "cccc-1", ["not this project", "Right."])
    resumed = gem / "tmp" / "work" / "chats" / "session-2026-12-05T12-03-dddd.json"
    resumed.write_text(json.dumps({"sessionId": "dddd-1", "projectHash": "0" * 64,
                                   "messages": [{"id": "m0", "type": "user",
                                                 "content": "old"}]}))
    continued = _gemini_jsonl(resumed.with_suffix(".jsonl"), "dddd-1", ["old", "new"])
    report = sweep()
    got = {r["transcript_path"]: r["messages"] for r in report.recorded}
    assert got == {str(ours): 2, str(inside): 2, str(continued): 2}
    assert all(r["host"] == "gemini" for r in report.recorded)
    assert sorted(_recovered()) == ["aaaa-1@2", "bbbb-1@2", "dddd-1@2"]
