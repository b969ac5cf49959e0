"""The hot path (`wardian.cli.hot`) answers exactly as the Typer app does (issue 19).

`wardian memory save/recall`, `wardian hooks HOST EVENT` and `wardian agent exec` skip
Typer when their argument line is unambiguous. Each case here runs as two real processes
on two identical copies of one data dir: the installed entry point (``python -m wardian``,
hot path) and the Typer app itself (`wardian.cli.main.main`); exit code, stdout and stderr
must be the same (ids and timestamps, random per process, are normalised). The parser's
own choice — run hot or hand over — is tested on made-up argument lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.cli.hot import plan

TYPER = "import sys; from wardian.cli.main import main; sys.argv[0] = 'wardian'; main()"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def _normalise(text: str, ids: list[str]) -> str:
    for full in ids:  # the records that existed before: keep them recognisable
        text = text.replace(full, f"<{ids.index(full)}>").replace(full[:8],
                                                                  f"<{ids.index(full)}:8>")
    text = _UUID.sub("<new-id>", text)
    text = re.sub(r"\b[0-9a-f]{8}\b", "<new-id8>", text)
    return _ISO.sub("<time>", text)


def _run(argv: list[str], *, typer: bool, env: dict[str, str], cwd: Path,
         stdin: str = "") -> tuple[int, str, str]:
    program = ["-c", TYPER] if typer else ["-m", "wardian"]
    done = subprocess.run([sys.executable, *program, *argv], env=env, cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


def _both(argv: list[str], home: Path, env: dict[str, str], cwd: Path, ids: list[str],
          stdin: str = "") -> tuple[int, str, str]:
    """Run `argv` on the typer path and on the hot path, each on its own copy of `home`;
    assert the same answer and return it (normalised)."""
    answers = []
    for typer in (True, False):
        copy = home.parent / f"{home.name}-{'typer' if typer else 'hot'}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(home, copy)
        code, out, err = _run(argv, typer=typer, env={**env, "WARDIAN_HOME": str(copy)},
                              cwd=cwd, stdin=stdin)
        answers.append((code, _normalise(out, ids), _normalise(err, ids).replace(
            str(copy), "<home>")))
    assert answers[0] == answers[1], argv
    return answers[0]


@dataclass(frozen=True)
class World:
    """The data dir, its agent and records, a work tree, and an operator's environment."""

    home: Path
    agent: str
    ids: list[str]
    work: Path
    env: dict[str, str]


@pytest.fixture
def world(cli: CliRunner, wardian_home: Path, tmp_path: Path) -> World:
    """An agent with memory enabled, three records, and a git work tree to run in."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    agent_id = json.loads(invoke(cli, "agent", "add", "ada", "--provider", "claude",
                                 "--workspace", str(work), "--json").stdout)["id"]
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    store = MemoryStore(open_memory_db())
    ids = [store.save(agent_id, text, evidence="the user said so", kind="stable",
                      scope=Scope.agent(), actor="test").id
           for text in ("Deploys go through the blue pipeline",
                        "The staging database is called heron",
                        "Use red only for errors in the dashboard")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    return World(wardian_home, agent_id, ids, work.resolve(), env)


def _holding(world: World) -> dict[str, str]:
    """The environment of a managed process whose launch is this (live) test process."""
    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    me = current()
    store = MemoryStore(open_memory_db())
    token = CapabilityStore(store.conn).mint(world.agent, pid=me.pid,
                                             started_at=me.started_at, workspace=None)
    return {**world.env, "WARDIAN_AGENT_ID": world.agent, "WARDIAN_CAPABILITY": token}


MEMORY_CASES = [
    ["memory", "save", "Prefer rebase over merge here", "--evidence", "user: rebase"],
    ["memory", "save", "--evidence=user said", "--kind", "current", "--scope", "agent",
     "--source", "file:notes.md#L3", "--source", "url:https://example.test/x", "--json",
     "Release freeze until Friday"],
    ["memory", "save", "Deploys go through the blue pipeline", "--evidence", "again",
     "--scope", "agent"],  # unchanged: the same record, a revision with the new evidence
    ["memory", "save", "token ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5", "--evidence",
     "e"],  # a secret: exit 2
    ["memory", "save", "x", "--evidence", "e", "--kind", "forever"],  # bad kind: exit 2
    ["memory", "save", "", "--evidence", "e"],
    ["memory", "recall", "heron database"],
    ["memory", "save", "Use \x1b[31mred\x1b[0m", "--evidence", "e"],  # control chars: 2
    ["memory", "recall", "dashboard colours", "--json"],
    ["memory", "recall", "pipeline", "--limit", "1"],
    ["memory", "recall", "nothing like this zebra quokka"],
    ["memory", "recall"],
    ["memory", "recall", "--json"],
]


@pytest.mark.parametrize("argv", MEMORY_CASES, ids=lambda a: " ".join(a)[:60])
def test_memory_commands_answer_as_the_typer_app(world: World,
                                                 argv: list[str]) -> None:
    assert plan(argv) is not None  # the hot path takes these
    _both(argv, world.home, _holding(world), world.work,
          world.ids)


def test_memory_commands_fail_closed_the_same_without_a_capability(
        world: World) -> None:
    for argv in (MEMORY_CASES[0], MEMORY_CASES[6]):
        code, out, err = _both(argv, world.home, world.env,
                               world.work, world.ids)
        assert code == 3 and out == "" and err.startswith("Error: "), err


def test_hooks_answer_as_the_typer_app(world: World) -> None:
    env = {**world.env, "WARDIAN_HOOK_DRY_RUN": "1"}
    payload = json.dumps({"session_id": "s1", "cwd": str(world.work),
                          "hook_event_name": "SessionStart"})
    for argv, stdin in ((["hooks", "claude-code", "session-start", "--agent", "ada"], payload),
                        (["hooks", "gemini", "session-end", "--agent=ada"], "not json"),
                        (["hooks", "claude-code", "session-end", "--agent", "nobody"], "{}"),
                        (["hooks", "codex", "session-start"], payload)):
        assert plan(argv) is not None
        _both(argv, world.home, env, world.work, world.ids,
              stdin=stdin)


def test_agent_exec_answers_as_the_typer_app(world: World) -> None:
    for argv in (["agent", "exec", "ada", "--", sys.executable, "-c", "print('hi')"],
                 ["agent", "exec", "ada", "--", "sh", "-c", "echo out; echo err >&2; exit 7"],
                 ["agent", "exec", "ada", "--workspace", str(world.work), "--", "true"],
                 ["agent", "exec", "nobody", "--", "true"],
                 ["agent", "exec", "ada", "--", "no-such-program-here"]):
        assert plan(argv) is not None
        _both(argv, world.home, world.env, world.work,
              world.ids)
    code, _, err = _both(["agent", "exec", "ada", "--", "true"], world.home,
                         _holding(world), world.work,
                         world.ids)
    assert code == 3 and "operator command refused" in err  # inside a managed process


@pytest.mark.parametrize("argv", [
    ["memory", "save", "-starts with a dash", "--evidence", "e"],
    ["memory", "save", "t", "--evidence", "-e"],
    ["memory", "save", "t", "--evidence", "e", "--evidence", "f"],
    ["memory", "save", "t"],
    ["memory", "save", "t", "u", "--evidence", "e"],
    ["memory", "save", "--", "t", "--evidence", "e"],
    ["memory", "save", "t", "--evidence", "e", "--json=yes"],
    ["memory", "save", "t", "--evidence", "e", "--jso"],
    ["memory", "save", "--help"],
    ["memory", "recall", "-h"],
    ["memory", "recall", "q", "--limit", "0"],
    ["memory", "recall", "q", "--limit", "two"],
    ["memory", "recall", "q", "--limit"],
    ["memory", "recall", "a", "b"],
    ["memory", "list"],
    ["memory"],
    ["hooks", "codex", "session-stop"],
    ["hooks", "install", "claude-code"],
    ["hooks", "claude-code", "session-start", "--home", "/x"],
    ["agent", "exec", "--workspace", "/x", "ada", "--", "true"],
    ["agent", "exec", "ada"],
    ["agent", "list"],
    ["--version"],
    ["memory", "save", "bad \udcff bytes", "--evidence", "e"],
], ids=lambda a: " ".join(a)[:60])
def test_the_typer_app_answers_whatever_is_not_certain(argv: list[str]) -> None:
    assert plan(argv) is None


def test_shell_completion_goes_to_the_typer_app(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["memory", "recall", "q"]
    assert plan(argv) is not None
    monkeypatch.setenv("_WARDIAN_COMPLETE", "bash_complete")
    assert plan(argv) is None


def test_usage_errors_are_the_typer_apps(world: World) -> None:
    code, _, err = _run(["memory", "recall", "q", "--limit", "0"], typer=False,
                        env=_holding(world), cwd=world.work)
    assert code == 2 and "--limit" in err


def test_hook_events_are_the_hook_groups() -> None:
    from wardian.cli.hooks import _HOSTS
    from wardian.runtime.hook_argv import EVENTS_BY_HOST

    assert {h: set(events) for h, (_, events, _) in _HOSTS.items()} == {
        h: set(events) for h, events in EVENTS_BY_HOST.items()}
