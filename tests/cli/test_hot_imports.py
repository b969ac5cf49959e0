"""What the hot whole-process paths import (issue 19: "hot paths import nothing they don't
use"): the installed SessionStart/SessionEnd hooks, ``wardian memory save`` / ``recall``,
``wardian --help`` and ``wardian agent exec A -- CMD`` run in real processes here, doing
their real work (startup recall of saved records, a recorded close, a saved and a recalled
record, a managed child), and must not have loaded the CLI framework, pydantic, psutil or
the dataclass machinery (dataclasses pulls in inspect, ast and dis: ~20 ms of CPU per
process, a fifth of a hook's budget); nor `hashlib` (it loads OpenSSL's
libcrypto, ~4 ms: a capability's digest uses the built-in SHA-256) or `secrets` (it
brings `random`, `hmac` and `hashlib`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.cli.test_hot_path import World, _holding, world

__all__ = ["world"]  # the fixture, re-used

NEVER = {"dataclasses", "inspect", "typer", "click", "rich", "pydantic", "psutil", "jinja2",
         "yaml", "httpx", "detect_secrets", "numpy", "hashlib", "secrets"}

_REPORT = ("print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})),"
           " file=sys.stderr)\n")
HOOK_PROBE = ("import json, sys\ntry:\n    from wardian.runtime.hooks import main\n"
              "    main()\nfinally:\n    " + _REPORT)
CLI_PROBE = ("import gc, json, runpy, sys\nsys.argv = ['wardian', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('wardian', run_name='__main__')\n"
             "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
             "finally:\n    print('collector on:', gc.isenabled(), file=sys.stderr)\n"
             "    " + _REPORT)


def _modules(done: subprocess.CompletedProcess[str]) -> set[str]:
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("event", ["session-start", "session-end"])
def test_the_installed_hooks_import_nothing_they_dont_use(world: World, event: str) -> None:
    work, env = world.work, {**world.env, "WARDIAN_HOME": str(world.home)}
    payload = json.dumps({"session_id": "s-1", "cwd": str(work),
                          "hook_event_name": "SessionStart" if event == "session-start"
                          else "SessionEnd", "transcript_path": str(work / "none.jsonl")})
    from wardian.runtime.session_events import drain_lock

    lock = drain_lock()
    assert lock.acquire()
    try:  # held: the drain worker a hook starts finds it taken and leaves at once
        done = subprocess.run([sys.executable, "-P", "-c", HOOK_PROBE, "claude-code", event,
                               "--agent", "ada"], input=payload, capture_output=True,
                              text=True, cwd=work, env=env, timeout=120,
                              check=False)
    finally:
        lock.release()
    assert done.returncode == 0, done.stderr
    if event == "session-start":  # it did its work: the context holds the records
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "heron" in context
    assert "Error" not in done.stderr, done.stderr
    loaded = NEVER & _modules(done)
    assert not loaded, sorted(loaded)


def test_agent_exec_imports_nothing_it_doesnt_use(world: World) -> None:
    child = [sys.executable, "-c", "import os; print(os.environ['WARDIAN_AGENT_ID'])"]
    done = subprocess.run([sys.executable, "-c", CLI_PROBE, "agent", "exec", "ada", "--",
                           *child],
                          capture_output=True, text=True, cwd=world.work,
                          env={**world.env, "WARDIAN_HOME": str(world.home)},
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), done.stderr  # the managed child ran, with its agent id
    # The hot path runs without the cyclic collector; a supervisor (it lives as long as
    # the agent's session) turns it back on.
    assert "collector on: True" in done.stderr
    loaded = NEVER & _modules(done)
    assert not loaded, sorted(loaded)


@pytest.mark.parametrize(("argv", "answer"), [
    (["memory", "save", "Prefer squash merges in this repo", "--evidence", "user: squash"],
     "Memory saved"),
    (["memory", "recall", "heron database"], "heron"),
    (["memory", "recall"], "Deploys go through the blue pipeline"),
    (["--help"], "memory"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_memory_commands_and_root_help_import_nothing_they_dont_use(
        world: World, argv: list[str], answer: str) -> None:
    env = {**_holding(world), "WARDIAN_HOME": str(world.home)}
    done = subprocess.run([sys.executable, "-c", CLI_PROBE, *argv], capture_output=True,
                          text=True, cwd=world.work, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert answer in done.stdout, done.stdout  # it did its work
    assert "collector on: False" in done.stderr  # (~3 ms of CPU in ~20 useless collections)
    loaded = NEVER & _modules(done)
    assert not loaded, sorted(loaded)
