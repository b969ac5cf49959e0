"""The real opencode writes a session into its SQLite store; Wardian finds it by workspace,
exports it read-only and reads back the prompt, the shell call with its output and the
final answer. The same run is opencode's smoke round trip (`tests.hosts.test_smoke`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.test_smoke import assert_round_trip
from wardian.transcripts import load_transcript
from wardian.transcripts.opencode import default_db_path, export_session, list_sessions

PROMPT = "Tell me which lanterns on the jetty still need new wicks."


def test_session_round_trips_and_is_exported_and_loaded(opencode_host: Host,
                                                        tmp_path: Path) -> None:
    opencode_host.endpoint.script(Reply(Shell("echo hi")), Reply("Done."))
    proc = opencode_host.run(argv=opencode_host.prompt_argv(PROMPT))
    assert_round_trip(opencode_host, proc, PROMPT, "hi", "Done.")
    db = opencode_host.home / ".local" / "share" / "opencode" / "opencode.db"
    assert default_db_path(opencode_host.env) == db
    store = sorted(db.parent.glob("opencode.db*"))
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in store
              if not p.name.endswith("-shm")}

    found = [s for s in list_sessions(db) if s.directory == str(opencode_host.workspace)]
    assert len(found) == 1, list_sessions(db)
    session = found[0]
    assert session.parent_id is None
    path = tmp_path / "opencode-session.jsonl"
    path.write_text(export_session(db, session.id), encoding="utf-8")
    conv = load_transcript(path)

    assert conv.provider == "opencode"
    assert conv.session_id == session.id and conv.cwd == str(opencode_host.workspace)
    got = [(m.role, m.kind, m.text) for m in conv.messages]
    users = [t for r, k, t in got if (r, k) == ("user", "text")]
    assert len(users) == 1 and PROMPT in users[0], got
    calls = [i for i, (r, k, t) in enumerate(got) if k == "tool_call"]
    assert len(calls) == 1, got
    call = conv.messages[calls[0]]
    assert call.text == "bash(echo hi)" and call.meta["tool"] == "bash"
    result = conv.messages[calls[0] + 1]
    assert (result.role, result.kind, result.text.strip()) == ("tool", "tool_result", "hi")
    assert result.meta["call_id"] == call.meta["call_id"]
    assert got[-1] == ("assistant", "text", "Done.")
    assert conv.meta["models"] == ["scripted-model"]
    # read-only: the store is as opencode left it, nothing added beside it
    assert sorted(db.parent.glob("opencode.db*")) == store
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in store
            if not p.name.endswith("-shm")} == before
