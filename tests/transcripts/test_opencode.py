"""opencode sessions read from a made-up database (invented sessions, messages and parts)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from wardian.runtime.archives import transcript_format
from wardian.transcripts import TranscriptFormatError, TranscriptNotFound, load_transcript
from wardian.transcripts import opencode as oc
from wardian.transcripts.loader import detect_text_format, parse_text

_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
  slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""
T0 = 1_800_000_000_000
SID = "ses_aaa1"


class _Db:
    """A made-up opencode database: sessions, messages and parts with increasing ids/times."""

    def __init__(self, path: Path, *, wal: bool = False) -> None:
        self.path = path
        self.conn = sqlite3.connect(path)
        if wal:
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(_SCHEMA)
        self.n = 0

    def _next(self) -> int:
        self.n += 1
        return self.n

    def session(self, sid: str, directory: str, *, parent: str | None = None,
                archived: int | None = None, updated: int = T0) -> None:
        self.conn.execute(
            "INSERT INTO session VALUES (?, 'proj', ?, 'slug', ?, 'A title', '1.18.33', ?, ?, ?)",
            (sid, parent, directory, T0, updated, archived))

    def message(self, sid: str, role: str, **data: Any) -> str:
        n = self._next()
        mid = f"msg_{n:04d}"
        body = {"role": role, "time": {"created": T0 + n * 1000}, **data}
        if role == "assistant":
            body.setdefault("modelID", "invented-model")
        self.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                          (mid, sid, T0 + n * 1000, T0 + n * 1000, json.dumps(body)))
        return mid

    def part(self, sid: str, mid: str, data: dict[str, Any] | str) -> None:
        n = self._next()
        raw = data if isinstance(data, str) else json.dumps(data)
        self.conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                          (f"prt_{n:04d}", mid, sid, T0 + n * 1000, T0 + n * 1000, raw))

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()


def _tool(name: str, status: str, inp: Any, **state: Any) -> dict[str, Any]:
    return {"type": "tool", "tool": name, "callID": f"call_{name}",
            "state": {"status": status, "input": inp, **state}}


def _sample(path: Path, *, wal: bool = False) -> Path:
    db = _Db(path, wal=wal)
    db.session(SID, "/work/orchard", updated=T0 + 50_000)
    db.session("ses_aaa2", "/work/orchard", parent=SID, updated=T0 + 60_000)
    db.session("ses_aaa3", "/work/elsewhere", updated=T0 + 40_000)
    db.session("ses_aaa4", "/work/orchard", archived=T0 + 70_000)
    u1 = db.message(SID, "user", agent="build",
                    model={"providerID": "p", "modelID": "invented-model"})
    db.part(SID, u1, {"type": "text", "text": "Sort the pear crates by weight, please."})
    db.part(SID, u1, {"type": "text", "synthetic": True,
                      "text": "Called the Read tool with the following input: crates.txt"})
    db.part(SID, u1, {"type": "file", "filename": "crates.txt", "mime": "text/plain"})
    a1 = db.message(SID, "assistant", agent="build")
    db.part(SID, a1, {"type": "step-start"})
    db.part(SID, a1, {"type": "reasoning", "text": "thinking about crates"})
    db.part(SID, a1, {"type": "text", "text": "I will look at the crates first."})
    db.part(SID, a1, _tool("bash", "completed", {"command": "sort -n crates.txt",
                                                   "description": "Sort crates"},
                           output="3 light\n9 heavy\n", metadata={"exit": 0}))
    db.part(SID, a1, _tool("todowrite", "completed",
                           {"todos": [{"content": "weigh crates", "status": "completed"},
                                      {"content": "label crates", "status": "pending"}]},
                           output="[]"))
    db.part(SID, a1, _tool("question", "completed",
                           {"questions": [{"question": "Heaviest first?",
                                           "options": [{"label": "Yes"}, {"label": "No"}]}]},
                           output='User has answered your questions: "Heaviest first?"="Yes".'))
    db.part(SID, a1, _tool("edit", "error", {"filePath": "/work/orchard/crates.txt"},
                           error="The user rejected permission to use this specific tool call."))
    db.part(SID, a1, _tool("read", "error", {"filePath": "/nope"}, error="File not found"))
    db.part(SID, a1, {"type": "step-finish", "reason": "tool-calls"})
    db.part(SID, a1, "{not json")
    a2 = db.message(SID, "assistant", agent="build", modelID="other-model")
    db.part(SID, a2, {"type": "text", "text": "The crates are sorted, heaviest first."})
    u2 = db.message(SID, "user", agent="build")
    db.part(SID, u2, {"type": "text", "text": "Thanks, that is all."})
    # a part of another session never leaks in
    other = db.message("ses_aaa3", "user")
    db.part("ses_aaa3", other, {"type": "text", "text": "Unrelated plum question."})
    db.close()
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_export_then_parse(tmp_path: Path) -> None:
    db = _sample(tmp_path / "opencode.db")
    text = oc.export_session(db, SID)
    lines = text.splitlines()
    head = json.loads(lines[0])["opencode_session"]
    assert head["id"] == SID and head["directory"] == "/work/orchard"
    assert head["parts_omitted"] == 0 and head["version"] == "1.18.33"
    assert detect_text_format(text) == "opencode"
    conv = parse_text(text, "opencode")
    assert conv.provider == "opencode"
    assert conv.session_id == SID and conv.cwd == "/work/orchard"
    assert conv.malformed_lines == 1  # the part that is not JSON
    assert conv.meta["models"] == ["invented-model", "other-model"]
    got = [(m.role, m.kind, m.text) for m in conv.messages]
    assert got[:3] == [
        ("user", "text", "Sort the pear crates by weight, please."),
        ("user", "injected", "Called the Read tool with the following input: crates.txt"),
        ("user", "injected", "[file crates.txt]"),
    ]
    assert got[3] == ("assistant", "text", "I will look at the crates first.")
    assert got[4] == ("assistant", "tool_call", "bash(sort -n crates.txt)")
    assert got[5] == ("tool", "tool_result", "3 light\n9 heavy\n")
    assert got[6] == ("assistant", "tool_call",
                      "todowrite:\n- [completed] weigh crates\n- [pending] label crates")
    assert got[7] == ("tool", "tool_result", "[]")
    assert got[8] == ("assistant", "tool_call", "question:\n- Heaviest first?\n  - Yes\n  - No")
    assert got[9][:2] == ("user", "answer") and '="Yes"' in got[9][2]
    assert got[10] == ("assistant", "tool_call", "edit(/work/orchard/crates.txt)")
    assert got[11][:2] == ("tool", "tool_rejection")
    assert got[12] == ("assistant", "tool_call", "read(/nope)")
    assert got[13] == ("tool", "tool_result", "File not found")
    assert got[14:] == [("assistant", "text", "The crates are sorted, heaviest first."),
                        ("user", "text", "Thanks, that is all.")]
    assert "thinking about crates" not in text or all(
        "thinking" not in m.text for m in conv.messages)
    assert all("plum" not in m.text for m in conv.messages)
    call, result = conv.messages[4], conv.messages[5]
    assert call.meta["tool"] == "bash" and call.meta["call_id"] == "call_bash"
    assert result.meta["call_id"] == "call_bash"
    assert conv.messages[13].meta["is_error"] is True
    assert conv.messages[0].timestamp is not None and conv.messages[0].timestamp.endswith("Z")
    assert [m.seq for m in conv.messages] == list(range(len(conv.messages)))


def test_load_transcript_detects_an_exported_file(tmp_path: Path) -> None:
    db = _sample(tmp_path / "opencode.db")
    path = tmp_path / "session.jsonl"
    path.write_text(oc.export_session(db, SID), encoding="utf-8")
    conv = load_transcript(path)
    assert conv.provider == "opencode" and conv.source_sha256 == _sha(path)
    assert transcript_format("opencode") == "opencode"
    assert load_transcript(path, fmt=transcript_format("opencode")).messages == conv.messages


def test_missing_db_or_session(tmp_path: Path) -> None:
    missing = tmp_path / "absent" / "opencode.db"
    with pytest.raises(TranscriptNotFound):
        oc.export_session(missing, SID)
    with pytest.raises(TranscriptNotFound):
        oc.list_sessions(missing)
    assert not missing.exists() and not missing.parent.exists()
    db = _sample(tmp_path / "opencode.db")
    with pytest.raises(TranscriptNotFound, match="ses_nope"):
        oc.export_session(db, "ses_nope")


def test_not_an_opencode_db(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    with pytest.raises(TranscriptFormatError):
        oc.export_session(other, SID)
    junk = tmp_path / "junk.db"
    junk.write_text("just some words, not a database\n")
    with pytest.raises((TranscriptFormatError, TranscriptNotFound)):
        oc.list_sessions(junk)


@pytest.mark.parametrize("wal", [False, True], ids=["rollback", "wal"])
def test_read_only(tmp_path: Path, wal: bool) -> None:
    db = _sample(tmp_path / "opencode.db", wal=wal)
    before = sorted(p.name for p in tmp_path.iterdir())
    digest = _sha(db)
    oc.export_session(db, SID)
    oc.list_sessions(db)
    assert _sha(db) == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no -wal / -shm / journal


def test_wal_with_uncheckpointed_writes_is_read(tmp_path: Path) -> None:
    """A live opencode keeps recent writes in the -wal file: they are seen."""
    path = tmp_path / "opencode.db"
    db = _Db(path, wal=True)
    db.conn.execute("PRAGMA wal_autocheckpoint=0")
    db.session(SID, "/work/orchard")
    mid = db.message(SID, "user")
    db.part(SID, mid, {"type": "text", "text": "Count the apricots."})
    db.conn.commit()  # still open: the rows live in the -wal file only
    try:
        assert Path(f"{path}-wal").stat().st_size > 0
        conv = parse_text(oc.export_session(path, SID), "opencode")
        assert [m.text for m in conv.messages] == ["Count the apricots."]
    finally:
        db.close()


def test_list_sessions(tmp_path: Path) -> None:
    db = _sample(tmp_path / "opencode.db")
    found = oc.list_sessions(db)
    assert [s.id for s in found] == ["ses_aaa3", SID, "ses_aaa2"]  # archived one left out
    assert found[2] == oc.OpencodeSession("ses_aaa2", "/work/orchard", SID, T0 + 60_000)
    assert [s.id for s in oc.list_sessions(db, directory="/work/orchard")] == [SID, "ses_aaa2"]


def test_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "opencode.db"
    db = _Db(path)
    db.session(SID, "/work/orchard")
    a = db.message(SID, "assistant")
    big = "x" * (oc.MAX_PART_BYTES + 10)
    db.part(SID, a, _tool("bash", "completed", {"command": "cat big.log"},
                          output="start of log\n" + big + "\nend of log"))
    db.part(SID, a, _tool("write", "completed", {"filePath": "/w/f.txt", "content": big},
                          output="written"))
    db.part(SID, a, {"type": "text", "text": "Short closing words."})
    db.close()
    conv = parse_text(oc.export_session(path, SID), "opencode")
    kinds = [(m.kind, m.text[:20]) for m in conv.messages]
    assert kinds[0] == ("tool_call", "bash(cat big.log)")
    assert conv.messages[1].text.startswith("start of log")
    assert conv.messages[1].text.endswith("end of log")
    assert conv.messages[1].meta["oversized_bytes"] > oc.MAX_PART_BYTES
    assert conv.messages[2].text == "write(/w/f.txt)"
    assert conv.messages[3].text == "written"
    assert conv.messages[4].text == "Short closing words."
    monkeypatch.setattr(oc, "_PARTS_SQL", oc._PARTS_SQL.replace(
        f"LIMIT {oc.MAX_PARTS}", "LIMIT 2"))
    text = oc.export_session(path, SID)
    assert json.loads(text.splitlines()[0])["opencode_session"]["parts_omitted"] == 1
    assert len(text.splitlines()) == 3


def test_default_db_path() -> None:
    assert oc.default_db_path({"XDG_DATA_HOME": "/x/data", "HOME": "/h"}) == Path(
        "/x/data/opencode/opencode.db")
    assert oc.default_db_path({"HOME": "/h"}) == Path("/h/.local/share/opencode/opencode.db")
    assert oc.default_db_path({"XDG_DATA_HOME": "rel", "HOME": "/h"}) == Path(
        "/h/.local/share/opencode/opencode.db")
