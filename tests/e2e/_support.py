"""End-to-end helpers: the real ``wardian`` CLI as subprocesses in the test's WARDIAN_HOME.

`W` runs ``python -m wardian …`` (the same interpreter, the autouse temp ``WARDIAN_HOME``
inherited through the environment; the scenario's setup commands run the same CLI app in
this process, `W.setup`) and waits for the detached drain worker by polling the
durable state (`tests.waits.wait_until`, its safety cap naming what did not happen) — never
by sleeping a fixed time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.waits import wait_until

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "transcripts"
BUILTIN = {"curator": {"target_type": "temporary_provider", "provider": "builtin",
                       "model": "curator-rules"}}
FINAL = {"succeeded", "failed", "cancelled", "interrupted", "skipped"}


def corpus_transcripts() -> list[Path]:
    """Every transcript file in the shared corpus (empty when the corpus is absent)."""
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in {".jsonl", ".json"}
                  and p.is_file())


def corpus_params() -> list[Any]:
    """pytest params over the corpus, or one skipped param saying why.

    The first transcript of each format folder runs in the fast suite; the rest of the sweep
    is marked ``slow`` (``make test-all`` runs it).
    """
    files = corpus_transcripts()
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"transcript corpus not found at {CORPUS} (it lives in ../shared/corpus)"))]
    seen: set[str] = set()
    params = []
    for p in files:
        fast = p.parent.name not in seen
        seen.add(p.parent.name)
        params.append(pytest.param(p, id=f"{p.parent.name}/{p.stem}",
                                   marks=() if fast else pytest.mark.slow))
    return params


class W:
    """The real CLI in subprocesses, plus read-only looks at the durable state."""

    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.env = dict(os.environ)
        self.env["WARDIAN_HOME"] = str(home)
        if env:
            self.env.update(env)

    def run(self, *args: str, check: bool = True, input: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
        """``wardian ARGS``; fails the test (showing stderr) when `check` and it fails."""
        proc = subprocess.run(
            [sys.executable, "-m", "wardian", *args], env=self.env, text=True,
            capture_output=True, timeout=120, input=input, check=False,
        )
        if check and proc.returncode != 0:
            pytest.fail(f"`wardian {' '.join(args)}` exited {proc.returncode}:\n"
                        f"{proc.stdout}\n{proc.stderr}")
        return proc

    def json(self, *args: str) -> Any:
        """``wardian ARGS --json`` parsed."""
        return json.loads(self.run(*args, "--json").stdout)

    # --- setup ----------------------------------------------------------------------------

    def setup(self, *args: str) -> str:
        """``wardian ARGS`` for building a scenario: the same CLI app run in this process
        (Typer's runner, this W's environment), sparing a child interpreter for commands
        the test is not about; returns stdout, fails the test when the command fails."""
        from typer.testing import CliRunner

        from tests.conftest import invoke

        env = {k: v for k, v in self.env.items() if os.environ.get(k) != v}
        result = invoke(CliRunner(), *args, env=env)
        if result.exit_code != 0:
            pytest.fail(f"`wardian {' '.join(args)}` exited {result.exit_code}:\n"
                        f"{result.stdout}\n{result.stderr}")
        return result.stdout

    def setup_agent(self, name: str, *, assignments: dict[str, Any] | None = None,
                    inputs: tuple[str, ...] = (), provider: str = "claude",
                    refresh: tuple[str, ...] = (), invoker: bool = True,
                    ) -> tuple[str, str]:
        """Enable memory + logging, add agent `name` and (unless `invoker` is false) an
        enabled session-close invoker bound to memory-consolidation; returns (agent id,
        invoker id or ""). Through `setup`: what the scenarios then do runs in children."""
        self.setup("settings", "set", "agent_memory.enabled", "true")
        self.setup("settings", "set", "conversation_logging.enabled", "true")
        workspace = self.home / f"ws-{name}"
        workspace.mkdir(exist_ok=True)
        agent = json.loads(self.setup("agent", "add", name, "--provider", provider,
                                      "--workspace", str(workspace), "--json"))
        for provider_name in refresh:
            self.setup("agent", "models", "--provider", provider_name, "--refresh")
        if not invoker:
            return agent["id"], ""
        args = ["automation", "session-close", "add", "--blueprint", "memory-consolidation",
                "--name", f"consolidate {name}", "--agent", name, "--require-archive",
                "--assignments", json.dumps(assignments or BUILTIN)]
        for item in inputs:
            args += ["--input", item]
        created = json.loads(self.setup(*args, "--json"))
        self.setup("automation", "session-close", "enable", created["id"])
        return agent["id"], created["id"]

    def close(self, agent: str, session_id: str, transcript: Path,
              boundary: str = "shutdown", provider: str | None = None) -> str:
        """``wardian session close`` with a transcript; returns the event id."""
        extra = ["--provider", provider] if provider else []
        out = self.json("session", "close", "--agent", agent, "--boundary", boundary,
                        "--session-id", session_id, "--transcript", str(transcript), *extra)
        return str(out["event_id"])

    # --- waiting and looking ----------------------------------------------------------------

    def history(self, invoker_id: str) -> list[dict[str, Any]]:
        """The invoker's runs (newest first) from ``session-close history --json``."""
        return list(self.json("automation", "session-close", "history", invoker_id)["runs"])

    def wait_runs(self, invoker_id: str, count: int) -> list[dict[str, Any]]:
        """Poll the run store until the invoker has `count` runs, all final, and the drain
        is quiet; then return ``session-close history --json`` (the CLI's view)."""
        from wardian.config import open_state_db
        from wardian.engine.runs import Run, RunStore

        seen: list[Run] = []

        def done() -> bool:
            store = RunStore(open_state_db())
            seen[:] = store.list(invoker_id=invoker_id)
            return len(seen) >= count and all(r.status in FINAL for r in seen) and self.quiet()

        wait_until(done, what=f"{count} finished run(s) of invoker {invoker_id[:8]}",
                   detail=lambda: f"runs {[(r.id, r.status) for r in seen]}; drain log: "
                                  f"{self.drain_log()}", poll_s=0.1)
        return self.history(invoker_id)

    def quiet(self) -> bool:
        """No pending session event and no queued/running run (the drain has done its work;
        events are marked processed only after their runs exist)."""
        from wardian.config import open_state_db
        from wardian.engine.runs import RunStore
        from wardian.runtime.session_events import SessionEventQueue

        # (Not probing the drain lock: a probe holds it for microseconds, and a worker
        # starting at that instant would exit, leaving its event pending.)
        queue = SessionEventQueue(open_state_db())
        if queue.has_pending():
            return False
        runs = RunStore(open_state_db())
        return not runs.list(status="queued", limit=1) and \
            not runs.list(status="running", limit=1)

    def wait_quiet(self) -> None:
        """Poll until `quiet` (a re-delivered event has nothing to do, but a drain worker
        was started for it)."""
        wait_until(self.quiet, what="the drain gone quiet (no pending event or live run)",
                   detail=self.drain_log, poll_s=0.1)

    def drain_log(self) -> str:
        log = self.home / "logs" / "drain.log"
        return log.read_text(errors="replace")[-4000:] if log.exists() else "(no drain log)"

    def steps(self, run_id: str) -> dict[str, Any]:
        """step id -> the last attempt's output, read from the run store."""
        from wardian.config import open_state_db
        from wardian.engine.runs import RunStore

        store = RunStore(open_state_db())
        attempts = store.attempts(run_id)
        out: dict[str, Any] = {}
        for attempt in attempts:
            out[attempt.step_id] = {"status": attempt.status, "output": attempt.output,
                                    "error": attempt.error, "input": attempt.input}
        return out

    def records(self, agent: str, *, include_removed: bool = False) -> list[dict[str, Any]]:
        """The agent's records via ``garden memory list --json``."""
        args = ["garden", "memory", "list", "--agent", agent]
        if include_removed:
            args.append("--all")
        doc = self.json(*args)
        return list(doc["records"] if isinstance(doc, dict) else doc)


@pytest.fixture
def w(wardian_home: Path) -> Iterator[W]:
    """The CLI driver for this test's WARDIAN_HOME; waits for the drain to finish at the end
    so no worker outlives the temp dir."""
    driver = W(wardian_home)
    yield driver
    driver.wait_quiet()


@pytest.fixture
def later_transcript(tmp_path: Path) -> Path:
    """A short Claude Code session written for these tests (not from the corpus)."""
    return write_claude_session(tmp_path / "later.jsonl", "later-session", [
        ("user", "From now on, always run make lint before you commit in this repository."),
        ("assistant", "Understood: I will run make lint before every commit."),
        ("user", "We decided to keep the changelog in docs/CHANGES.md, not in the README."),
        ("assistant", "Noted, the changelog lives in docs/CHANGES.md."),
    ])


def write_claude_session(path: Path, session_id: str, turns: list[tuple[str, str]],
                         cwd: str = "/home/user/project") -> Path:
    """Write `turns` as a Claude Code JSONL session (the real record shapes)."""
    lines = []
    parent: str | None = None
    for index, (role, text) in enumerate(turns):
        uuid = f"{session_id}-{index:04d}"
        message: dict[str, Any]
        if role == "user":
            message = {"role": "user", "content": text}
        else:
            message = {"id": f"msg_{index}", "type": "message", "role": "assistant",
                       "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
                       "stop_reason": "end_turn"}
        lines.append(json.dumps({
            "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
            "sessionId": session_id, "version": "2.0.76", "gitBranch": "main", "type": role,
            "message": message, "uuid": uuid,
            "timestamp": f"2026-11-29T10:{index // 60:02d}:{index % 60:02d}.000Z",
        }))
        parent = uuid
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


FAKE_PROVIDER = Path(__file__).resolve().parents[1] / "fakes" / "fake_provider.py"
"""The providers helper's fake provider CLI (records argv, prints the tool's real shapes)."""


def install_fake_codex(w: W, tmp_path: Path, *, scenario: str, answer: str) -> Path:
    """Put the fake ``codex`` (and only it) on the PATH of every command `w` runs — and of
    the drain worker they start; returns the file where each call's argv is recorded."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    launcher = bin_dir / "codex"
    launcher.write_text(
        f"#!{sys.executable}\n"
        "import runpy\n"
        f"runpy.run_path({str(FAKE_PROVIDER)!r}, init_globals={{'FAKE_TOOL': 'codex'}}, "
        "run_name='__main__')\n"
    )
    launcher.chmod(0o755)
    state = tmp_path / "fake-state"
    state.mkdir(exist_ok=True)
    record = tmp_path / "codex-calls.jsonl"
    w.env.update({
        "PATH": str(bin_dir),
        "FAKE_PROVIDER_SCENARIO": scenario,
        "FAKE_PROVIDER_ANSWER": answer,
        "FAKE_PROVIDER_RECORD": str(record),
        "FAKE_PROVIDER_STATE": str(state),
        "CODEX_HOME": str(tmp_path / "codex-home"),
    })
    for key in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        w.env.pop(key, None)
    return record


def recorded_calls(record: Path) -> list[dict[str, Any]]:
    """The fake provider's recorded calls (argv, stdin, cwd, …)."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
