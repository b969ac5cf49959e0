"""`wardian agent launch`: the provider CLI gets model, effort, capability and startup recall the
way it accepts instructions; its exit records a session-close event with its transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wardian.config import SettingsStore, open_state_db
from wardian.errors import UsageError
from wardian.memory.db import open_memory_db
from wardian.memory.loaded import LoadedEvents
from wardian.memory.models import Scope
from wardian.memory.store import MemoryStore
from wardian.runtime.agents import AgentRegistry
from wardian.runtime.provider_launch import provider_argv
from wardian.runtime.session_events import SessionEventQueue

FAKE_CLAUDE = """#!{python}
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
env = {{k: v for k, v in os.environ.items() if k.startswith("WARDIAN_")}}
Path(os.environ["FAKE_OUT"]).write_text(json.dumps({{"argv": args, "env": env,
                                                     "pid": os.getpid()}}))
session = args[args.index("--session-id") + 1] if "--session-id" in args else "none"
project = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-work-demo"
project.mkdir(parents=True, exist_ok=True)
(project / (session + ".jsonl")).write_text(json.dumps({{
    "type": "user", "sessionId": session, "uuid": "u1", "parentUuid": None,
    "timestamp": "2026-11-29T20:00:00.000Z", "cwd": "/work/demo",
    "message": {{"role": "user", "content": "from now on use pnpm, not npm"}}}}) + "\\n")
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""


@pytest.fixture
def fake_claude(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(FAKE_CLAUDE.format(python=sys.executable))
    exe.chmod(0o755)
    env = dict(os.environ)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
               FAKE_OUT=str(tmp_path / "out.json"),
               CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"))
    return env


def _launch(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wardian", "agent", "launch", *args],
                          env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)


def test_claude_launch_passes_selection_context_and_records_close(
    fake_claude: dict[str, str], tmp_path: Path
) -> None:
    agent = AgentRegistry(open_state_db()).add("coder", "claude", model="claude-sonnet-5",
                                               effort="high")
    SettingsStore(open_state_db()).set("agent_memory.enabled", "true")
    MemoryStore(open_memory_db()).save(
        agent.id, "Prefer small commits", evidence="user: small commits please", kind="stable",
        scope=Scope.agent(), actor="test")
    res = _launch(fake_claude, "coder", "--", "--verbose", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    seen = json.loads((tmp_path / "out.json").read_text())
    argv = seen["argv"]
    assert argv[:4] == ["--model", "claude-sonnet-5", "--effort", "high"]
    context = argv[argv.index("--append-system-prompt") + 1]
    assert "Prefer small commits" in context
    launch_id = argv[argv.index("--session-id") + 1]
    assert argv[-1] == "--verbose"
    assert seen["env"]["WARDIAN_AGENT_ID"] == agent.id
    assert seen["env"]["WARDIAN_LAUNCH_ID"] == launch_id and seen["env"]["WARDIAN_CAPABILITY"]
    (loaded,) = LoadedEvents(MemoryStore(open_memory_db()).conn).list(agent.id)
    assert loaded.pid == seen["pid"] and loaded.context == context  # exec kept the pid
    assert loaded.source == "launch"  # `garden memory loaded` tells launch from exec
    (event,) = SessionEventQueue(open_state_db()).list()
    assert (event.agent_id, event.boundary, event.session_id, event.source) == (
        agent.id, "shutdown", launch_id, "launch")
    assert event.provider == "claude-code"
    assert event.transcript_path and event.transcript_path.endswith(f"{launch_id}.jsonl")


def test_exit_code_passes_through_and_resume_keeps_its_session(
    fake_claude: dict[str, str], tmp_path: Path
) -> None:
    AgentRegistry(open_state_db()).add("coder", "claude")
    env = dict(fake_claude, FAKE_EXIT="3")
    res = _launch(env, "coder", "--", "--resume", "abc", cwd=tmp_path)
    assert res.returncode == 3, res.stderr
    argv = json.loads((tmp_path / "out.json").read_text())["argv"]
    assert "--session-id" not in argv and "--append-system-prompt" not in argv
    (event,) = SessionEventQueue(open_state_db()).list()
    assert event.transcript_path is None  # nothing named after the launch id


def test_missing_cli_and_unlaunchable_provider(tmp_path: Path) -> None:
    AgentRegistry(open_state_db()).add("coder", "claude")
    AgentRegistry(open_state_db()).add("bot", "builtin")
    env = dict(os.environ, PATH=str(tmp_path))
    res = _launch(env, "coder", cwd=tmp_path)
    assert res.returncode != 0 and "claude" in res.stderr
    res = _launch(env, "bot", cwd=tmp_path)
    assert res.returncode == 2 and "cannot start provider" in res.stderr
    assert SessionEventQueue(open_state_db()).list() == []


def test_provider_argv_shapes() -> None:
    codex = provider_argv("codex", model="gpt-5.2-codex", effort="low", context='say "hi"\n',
                          launch_id="L", args=["--full-auto"])
    assert codex == ["codex", "-m", "gpt-5.2-codex", "-c", 'model_reasoning_effort="low"',
                     "-c", 'developer_instructions="say \\"hi\\"\\n"', "--full-auto"]
    gemini = provider_argv("gemini", model="gemini-2.5-pro", effort=None, context="ctx",
                           launch_id="L", args=[])
    assert gemini == ["gemini", "-m", "gemini-2.5-pro", "-i", "ctx"]
    assert "-i" not in provider_argv("gemini", model=None, effort=None, context="ctx",
                                     launch_id=None, args=["-p", "x"])[:-2]
    with pytest.raises(UsageError, match="effort"):
        provider_argv("gemini", model=None, effort="high", context=None, launch_id=None)
    opencode = provider_argv("opencode", model="anthropic/claude-sonnet-4-6", effort=None,
                             context="ctx", launch_id="L", args=[])
    assert opencode == ["opencode", "-m", "anthropic/claude-sonnet-4-6", "--prompt", "ctx"]
    assert "--prompt" not in provider_argv("opencode", model=None, effort=None, context="ctx",
                                           launch_id=None, args=["--prompt", "x"])[:-2]
    with pytest.raises(UsageError, match="effort"):
        provider_argv("opencode", model=None, effort="high", context=None, launch_id=None)
    with pytest.raises(UsageError):
        provider_argv("builtin", model=None, effort=None, context=None, launch_id=None)


def test_agent_exec_exit_records_shutdown_event(tmp_path: Path) -> None:
    agent = AgentRegistry(open_state_db()).add("coder", "codex")
    out = tmp_path / "launch-id"
    res = subprocess.run(
        [sys.executable, "-m", "wardian", "agent", "exec", "coder", "--", sys.executable, "-c",
         f"import os; open({str(out)!r}, 'w').write(os.environ['WARDIAN_LAUNCH_ID'])"],
        env=dict(os.environ), cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    (event,) = SessionEventQueue(open_state_db()).list()
    assert (event.agent_id, event.boundary, event.session_id, event.source, event.provider) == (
        agent.id, "shutdown", out.read_text(), "exec", "codex")
    assert event.workspace == str(tmp_path)


WRITE_ROLLOUT = """
import json, os, sys
from datetime import UTC, datetime
from pathlib import Path
now = datetime.now(UTC)
day = Path(os.environ["CODEX_HOME"]) / "sessions" / f"{now:%Y}" / f"{now:%m}" / f"{now:%d}"
day.mkdir(parents=True, exist_ok=True)
for name, cwd in (("rollout-mine.jsonl", os.getcwd()), ("rollout-other.jsonl", "/elsewhere")):
    meta = {"timestamp": now.isoformat(), "type": "session_meta",
            "payload": {"id": name, "cwd": cwd, "originator": "codex-tui"}}
    msg = {"timestamp": now.isoformat(), "type": "response_item",
           "payload": {"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "use tabs"}]}}
    (day / name).write_text(json.dumps(meta) + "\\n" + json.dumps(msg) + "\\n")
"""


def test_codex_exec_attaches_its_rollout(tmp_path: Path) -> None:
    AgentRegistry(open_state_db()).add("coder", "codex")
    codex_home = tmp_path / "codex-home"
    old = codex_home / "sessions" / "2020" / "01" / "01"
    old.mkdir(parents=True)
    (old / "rollout-old.jsonl").write_text("{}\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    res = subprocess.run(
        [sys.executable, "-m", "wardian", "agent", "exec", "coder", "--", sys.executable, "-c",
         WRITE_ROLLOUT],
        env=dict(os.environ, CODEX_HOME=str(codex_home)), cwd=workspace,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    (event,) = SessionEventQueue(open_state_db()).list()
    assert event.provider == "codex"
    assert event.transcript_path and event.transcript_path.endswith("rollout-mine.jsonl")


def test_find_transcript_skips_odd_rollouts_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import time
    from datetime import UTC, datetime

    from wardian.runtime.provider_launch import find_transcript

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    now = datetime.now(UTC)
    day = tmp_path / "codex" / "sessions" / f"{now:%Y}" / f"{now:%m}" / f"{now:%d}"
    day.mkdir(parents=True)
    workspace = str(tmp_path / "ws")
    (day / "rollout-a.jsonl").write_text("[1, 2]\n")
    (day / "rollout-b.jsonl").write_text(json.dumps({"payload": "text"}) + "\n")
    (day / "rollout-c.jsonl").write_text(json.dumps({"payload": {"cwd": 7}}) + "\n")
    assert find_transcript("launch", provider="codex", started_at=time.time() - 60,
                           workspace=workspace) == (None, None)
    good = day / "rollout-d.jsonl"
    good.write_text(json.dumps({"payload": {"cwd": workspace}}) + "\n")
    assert find_transcript("launch", provider="codex", started_at=time.time() - 60,
                           workspace=workspace) == (str(good), "codex")


def test_a_failed_revocation_does_not_mask_the_runtime_exit(
    tmp_path: Path, wardian_home: Path
) -> None:
    """The child breaks memory.db before exiting: revoking fails, yet `agent exec` still
    returns the child's exit code and the session close is recorded."""
    agent = AgentRegistry(open_state_db()).add("coder", "claude")
    db = wardian_home / "memory.db"
    breaker = (f"import os; p = {str(db)!r}\n"
               "for s in ('', '-wal', '-shm'):\n"
               "    os.path.exists(p + s) and os.remove(p + s)\n"
               "os.mkdir(p); raise SystemExit(3)")
    res = subprocess.run(
        [sys.executable, "-m", "wardian", "agent", "exec", "coder", "--", sys.executable, "-c",
         breaker], env=dict(os.environ), cwd=tmp_path, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 3, res.stderr
    assert "capability not revoked" in res.stderr and "Traceback" not in res.stderr
    (event,) = SessionEventQueue(open_state_db()).list()
    assert (event.agent_id, event.boundary) == (agent.id, "shutdown")
