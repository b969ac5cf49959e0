"""The real opencode writes a session into its SQLite store; Wardian finds it by workspace,
exports it read-only and reads back the prompt, the shell call with its output and the
final answer. The same run is opencode's smoke round trip (`tests.hosts.test_smoke`), and
it runs after Wardian's plugin was installed for two agents and uninstalled one agent at a
time (`wardian hooks install opencode --uninstall`): opencode still runs, with no memory
loaded. One opencode start checks all three (each costs seconds of CPU)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import SEEDED, setup_agent, wardian
from tests.hosts.test_smoke import assert_round_trip
from wardian.app.agents import add_agent
from wardian.config import open_state_db
from wardian.transcripts import load_transcript
from wardian.transcripts.opencode import default_db_path, export_session, list_sessions

PROMPT = "Tell me which lanterns on the jetty still need new wicks."


def _install_then_uninstall_one_by_one(host: Host, home: Path) -> None:
    """Wardian's plugin for ada and bob (the real CLI), then uninstalled for ada, then for
    everyone: each step leaves exactly the agents it should."""
    setup_agent(host, home)
    add_agent(open_state_db(), "bob", "builtin", workspace=str(host.workspace))
    wardian(host, "hooks", "install", "opencode", "--agent", "bob")
    plugin = host.home / ".config" / "opencode" / "plugins" / "wardian.js"
    assert "--agent ada --agent bob" in plugin.read_text()
    wardian(host, "hooks", "install", "opencode", "--uninstall", "--agent", "ada")
    text = plugin.read_text()
    assert "--agent bob" in text and "--agent ada" not in text
    wardian(host, "hooks", "install", "opencode", "--uninstall")
    assert not plugin.exists()


def test_after_uninstall_a_session_round_trips_and_is_exported_and_loaded(
        opencode_host: Host, wardian_home: Path, tmp_path: Path) -> None:
    _install_then_uninstall_one_by_one(opencode_host, wardian_home)
    opencode_host.endpoint.script(Reply(Shell("echo hi")), Reply("Done."))
    proc = opencode_host.run(argv=opencode_host.prompt_argv(PROMPT))
    assert_round_trip(opencode_host, proc, PROMPT, "hi", "Done.")
    # opencode still runs without the plugin, and nothing loads the agent's memory
    assert not any(t in opencode_host.endpoint.main_requests[0].system_text for t in SEEDED)
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
