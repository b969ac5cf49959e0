"""Helpers for the real-host session tests (`test_sessions_*.py`): an agent bound to the
host's workspace with memory, logging and a builtin-curator consolidation invoker; Wardian's
hooks installed into the host's isolated home through the real CLI; and looks at what the
drain made of a session (events, archive, records).

Everything runs for real: ``wardian`` as a child process (`tests.e2e._support.W`), the
host's own hooks calling the installed hook command, the detached drain worker those hooks
start. Waiting polls durable state (`tests.waits.wait_until`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import building_home
from tests.e2e._support import BUILTIN, W
from tests.hosts.conftest import require_host
from tests.hosts.endpoint import ScriptedEndpoint
from tests.hosts.hostcli import Host
from tests.waits import wait_until

__all__ = ["HOOK_HOST", "RULE", "SEEDED", "Agent", "archived", "events", "install",
           "opencode_exports", "refreshed_catalog", "saved_from", "setup_agent", "wait_closed",
           "wardian"]

HOOK_HOST = {"claude": "claude-code", "codex": "codex", "gemini": "gemini",
             "opencode": "opencode"}
"""`wardian hooks install` host name of each host command."""

SEEDED = ("Prefer ruff over flake8 in this repository",
          "Run the tests with -n 2 on this two-core machine")
"""The records the agent starts with (what SessionStart must load)."""

RULE = "From now on always run the linter with ruff before committing"
"""What the user says in a session: the builtin curator keeps it as a record."""


def wardian(host: Host, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``wardian ARGS`` in the host's environment (its HOME, so `hooks install` writes the
    host's own settings file) and workspace."""
    proc = subprocess.run([sys.executable, "-m", "wardian", *args], env=host.env,
                          cwd=host.workspace, text=True, capture_output=True, timeout=120,
                          check=False)
    if check and proc.returncode != 0:
        pytest.fail(f"`wardian {' '.join(args)}` exited {proc.returncode}:\n"
                    f"{proc.stdout}\n{proc.stderr}")
    return proc


@dataclass
class Agent:
    """The test's agent: ids, and the `W` helper over its data directory."""

    id: str
    name: str
    invoker: str
    w: W


def setup_agent(host: Host, home: Path, *, name: str = "ada", hooks: bool = True,
                seed: tuple[str, ...] = SEEDED) -> Agent:
    """Enable agent memory and conversation logging, add agent `name` with the host's
    workspace, save `seed` as its records, add an enabled session-close invoker of
    memory-consolidation with the builtin curator and (when `hooks`) install Wardian's
    hooks for the host into its home (through the real CLI, as a user does).

    The rest goes through the app layer, in this process: these tests are about the host
    and its hooks, and each of those commands has its real-CLI test (`tests.e2e._support.W`
    sets up the e2e scenarios through them)."""
    from wardian.app.agents import add_agent
    from wardian.app.session_close import add_session_close, set_enabled
    from wardian.config import SettingsStore, open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    settings = SettingsStore(open_state_db())
    settings.set("agent_memory.enabled", "true")
    settings.set("conversation_logging.enabled", "true")
    agent = add_agent(open_state_db(), name, "builtin", workspace=str(host.workspace))
    store = MemoryStore(open_memory_db())
    for text in seed:
        store.save(agent.id, text, evidence="the user said so", kind="stable",
                   scope=Scope.agent(), actor="test")
    created = add_session_close(open_state_db(), blueprint="memory-consolidation",
                                name=f"consolidate {name}", agent=name, boundaries=[],
                                require_archive=True, assignments=json.dumps(BUILTIN))
    set_enabled(open_state_db(), created.id, True)
    if hooks:
        install(host, name)
    return Agent(agent.id, name, created.id, W(home, env=host.env))


def install(host: Host, name: str) -> subprocess.CompletedProcess[str]:
    """``wardian hooks install HOST --agent NAME`` into the host's own settings."""
    return wardian(host, "hooks", "install", HOOK_HOST[host.name], "--agent", name)


def opencode_exports(home: Path) -> list[Path]:
    """The opencode session exports in Wardian's data dir `home` (the transcripts its
    archive reads for opencode, `wardian.runtime.opencode_sessions`), oldest first."""
    folder = home / "transcripts" / "opencode"
    return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns) if (
        folder.is_dir()) else []


def events(agent: Agent) -> list[Any]:
    """The agent's session-close events, oldest first."""
    from wardian.config import open_state_db
    from wardian.runtime.session_events import SessionEventQueue

    queue = SessionEventQueue(open_state_db())
    return [e for e in queue.list() if e.agent_id == agent.id]


def wait_closed(agent: Agent, transcript: Path, *, boundary: str | None = None) -> Any:
    """Wait until an event of the agent names `transcript`, is processed and its runs are
    done (the detached drain worker the host's hook started); returns the event."""
    found: list[Any] = []

    def done() -> bool:
        found[:] = [e for e in events(agent) if e.transcript_path == str(transcript)
                    and (boundary is None or e.boundary == boundary)]
        return bool(found) and all(e.status == "processed" for e in found) and agent.w.quiet()

    wait_until(done, what=f"the close of {transcript.name} processed",
               detail=lambda: f"events {[(e.boundary, e.status) for e in events(agent)]}; "
                              f"{agent.w.drain_log()}", poll_s=0.1)
    return found[-1]


def archived(agent: Agent, transcript: Path) -> list[Any]:
    """The agent's archived conversations imported from `transcript`."""
    from wardian.config import open_state_db
    from wardian.runtime.archives import ArchiveStore

    store = ArchiveStore(open_state_db())
    return [c for c in store.list(agent_id=agent.id) if c.source_path == str(transcript)]


def saved_from(agent: Agent, transcript: Path) -> list[dict[str, Any]]:
    """The agent's records (not the seeded ones) whose evidence is text of `transcript`,
    as Wardian's reader gives its messages."""
    from wardian.transcripts import load_transcript

    text = " ".join(" ".join(m.text for m in load_transcript(transcript).messages).split())
    return [r for r in agent.w.records(agent.name)
            if r["text"] not in SEEDED and " ".join(r["evidence"].split()) in text]


def refreshed_catalog(root: Path, name: str, *, prepare: Callable[[Host], None] | None = None,
                      keyless: Collection[str] = ()) -> Path:
    """A data directory (``root/wardian-home``) holding host `name`'s model catalog,
    refreshed by the real CLI (``wardian agent models --provider NAME --refresh``) from a
    host set up as each test's is: the host's folder first on PATH, then `prepare`. The
    variables `keyless` are left out of the refresh's environment (an operator without that
    API key refreshing). A module builds it once; each test copies it into its own data
    directory (`tests.conftest.copy_home`) before its setup."""
    with ScriptedEndpoint() as endpoint, building_home(root) as home:
        host = Host.create(name, require_host(name), root / name, endpoint)
        host.env["PATH"] = f"{host.exe.parent}:{host.env['PATH']}"
        if prepare is not None:
            prepare(host)
        env = {k: v for k, v in host.env.items() if k not in keyless}
        done = subprocess.run([sys.executable, "-m", "wardian", "agent", "models",
                               "--provider", name, "--refresh"],
                              env={**env, "WARDIAN_HOME": str(home)}, cwd=host.workspace,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    return home
