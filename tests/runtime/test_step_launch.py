"""A role step assigned to an agent runs that agent's provider with a launch-scoped
capability of its own (spec "Save and inspect memory": concurrent interactive and automation
processes receive independent capabilities; issue 20).

Real parts throughout: the engine executes a real run whose role step starts the fake
``claude`` CLI (tests/fakes/fake_provider.py) as a child process; that child runs the real
``wardian memory …`` commands as an agent's tool calls would, and an interactive launch of
the same agent runs beside it (`wardian agent exec`). Synchronisation is on pipes and FIFOs,
never on sleeps.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.conftest import invoke
from tests.engine.helpers import create_run, hung_provider_run, start_engine, write_blueprint
from tests.providers.conftest import FakeCli, fake_cli  # noqa: F401 - a fixture
from tests.runtime.test_launch import Managed, child, db_rows, enable  # noqa: F401
from typer.testing import CliRunner

from wardian.config import open_state_db
from wardian.engine.executor import execute_run
from wardian.engine.runs import RunStore

BLUEPRINT = """\
blueprint: {id: step-capability, name: Step capability, version: 1}
roles:
  worker: You do the work.
steps:
  - id: work
    role: worker
    prompt: Remember what matters.
    timeout: %s
    output: {type: object}
"""
PY = sys.executable
ASSIGN = {"worker": {"target_type": "agent", "agent": "ada"}}


def wardian(*argv: str) -> list[str]:
    return [PY, "-m", "wardian", *argv]


@pytest.fixture
def agents(cli: CliRunner) -> dict[str, str]:
    ids = {}
    for name in ("ada", "bob"):
        result = invoke(cli, "agent", "add", name, "--provider", "claude", "--json")
        assert result.exit_code == 0, result.output
        ids[name] = str(json.loads(result.stdout)["id"])
    enable(cli)
    return ids


@pytest.fixture
def launches() -> Iterator[list[Managed]]:
    started: list[Managed] = []
    yield started
    for managed in started:
        managed.kill()
        for pipe in (managed.proc.stdin, managed.proc.stdout, managed.proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


def _run_step(tmp_path: Path, *, timeout: str = "120s",
              assignments: dict[str, Any] | None = None) -> Any:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    path = write_blueprint(tmp_path / "bp", BLUEPRINT % timeout)
    store = RunStore(open_state_db())
    run = create_run(store, path, assignments=assignments or ASSIGN,
                     workspace=str(workspace))
    return execute_run(run.id, store=store)


def _tool_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _as_step(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """Replay a step's managed variables from this (operator) process."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")
            or k == "WARDIAN_HOME"}
    full.update({k: v for k, v in env.items() if k in (
        "WARDIAN_AGENT_ID", "WARDIAN_CAPABILITY", "WARDIAN_LAUNCH_ID")})
    return subprocess.run(wardian(*argv), capture_output=True, text=True, env=full,
                          timeout=120)


def test_agent_step_has_its_own_capability_beside_an_interactive_launch(
    cli: CliRunner, agents: dict[str, str], fake_cli: FakeCli,  # noqa: F811
    child: Path, launches: list[Managed], tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch, wardian_home: Path,
) -> None:
    bob = Managed("bob", child)
    launches.append(bob)
    saved = bob.run("memory", "save", "Bob keeps his notes in Norwegian",
                    "--evidence", "bob said so", "--scope", "agent", "--json")
    assert saved["rc"] == 0, saved
    bob_record = json.loads(saved["out"])["id"]
    interactive = Managed("ada", child)
    launches.append(interactive)
    assert interactive.run("memory", "save", "Ada reviews on Tuesdays", "--evidence",
                           "ada said so", "--scope", "agent")["rc"] == 0

    log = tmp_path / "tools.jsonl"
    monkeypatch.setenv("FAKE_PROVIDER_TOOLS_LOG", str(log))
    monkeypatch.setenv("FAKE_PROVIDER_TOOLS", json.dumps([
        wardian("memory", "save", "The release branch is cut on Fridays", "--evidence",
                "cut on Fridays", "--scope", "agent", "--json"),
        wardian("memory", "list", "--json"),
        wardian("memory", "show", bob_record),
        wardian("agent", "list"),  # an operator command: refused inside the step
    ]))
    run = _run_step(tmp_path)
    assert run.status == "succeeded", run.error

    save, listed, show_bob, operator = _tool_log(log)
    step_env = save["env"]
    assert step_env["WARDIAN_AGENT_ID"] == agents["ada"]
    token = step_env["WARDIAN_CAPABILITY"]
    assert token and token != interactive.hello["WARDIAN_CAPABILITY"]
    assert step_env["WARDIAN_LAUNCH_ID"] != interactive.hello["WARDIAN_LAUNCH_ID"]
    # The step's process saves and reads its own agent's memory, interactive records too.
    assert save["rc"] == 0, save["err"]
    texts = {r["text"] for r in json.loads(listed["out"])}
    assert texts == {"The release branch is cut on Fridays", "Ada reviews on Tuesdays"}
    # Another agent's records stay unreachable; operator commands are refused.
    assert show_bob["rc"] != 0 and "Norwegian" not in show_bob["out"]
    assert operator["rc"] == 3, operator

    # After the step its capability is refused; the interactive one still works.
    replay = _as_step(step_env, "memory", "list")
    assert replay.returncode == 3
    assert "expired" in replay.stderr and "step 'work'" in replay.stderr
    assert interactive.run("memory", "list")["rc"] == 0
    (row,) = db_rows(wardian_home, "SELECT revoked_reason FROM capabilities WHERE pid = "
                     f"{save['pid']}")
    assert row[0].startswith("step 'work' of run")
    steps = [e for e in RunStore(open_state_db()).events(run.id) if e["kind"] == "step.succeeded"]
    assert steps and steps[0]["data"]["launch_id"] == step_env["WARDIAN_LAUNCH_ID"]
    assert interactive.finish(0) == 0 and bob.finish(0) == 0


def test_a_temporary_provider_step_gets_no_capability(
    agents: dict[str, str], fake_cli: FakeCli, tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = tmp_path / "tools.jsonl"
    monkeypatch.setenv("FAKE_PROVIDER_TOOLS_LOG", str(log))
    monkeypatch.setenv("FAKE_PROVIDER_TOOLS", json.dumps([wardian("memory", "list")]))
    run = _run_step(tmp_path, assignments={
        "worker": {"target_type": "temporary_provider", "provider": "claude"}})
    assert run.status == "succeeded", run.error
    (listed,) = _tool_log(log)
    assert listed["rc"] == 3 and "no memory capability" in listed["err"]
    assert "WARDIAN_CAPABILITY" not in listed["env"]


def test_a_timed_out_step_revokes_its_capability_and_kills_the_provider(
    agents: dict[str, str], fake_cli: FakeCli, tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch, wardian_home: Path,
) -> None:
    fake_cli.scenario("hang")
    run = _run_step(tmp_path, timeout="3s")
    assert run.status == "failed"
    assert "did not finish within 3 s" in (run.error or "")
    assert "`claude`" in (run.error or "")  # the CLI is named, not the holder
    rows = db_rows(wardian_home, "SELECT * FROM capabilities WHERE agent_id = "
                   f"'{agents['ada']}'")
    assert len(rows) == 1 and rows[0]["revoked_at"] is not None


def test_an_engine_crash_leaves_the_step_capability_expired(
    agents: dict[str, str], fake_cli: FakeCli, tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux only (docs/threat-model.md)")
    run, ready = hung_provider_run(tmp_path, monkeypatch, fake_cli, BLUEPRINT % "600s", ASSIGN,
                                   ready_env="FAKE_PROVIDER_READY")
    engine = start_engine(run.id, stderr=subprocess.PIPE)
    provider: psutil.Process | None = None
    try:
        with open(ready, encoding="utf-8") as fh:
            hello = json.loads(fh.readline())
        provider = psutil.Process(hello["pid"])
        assert _as_step(hello["env"], "memory", "list").returncode == 3  # not in its tree
        engine.send_signal(signal.SIGKILL)
        engine.wait(timeout=60)
        provider.wait(timeout=60)  # the kernel ends it with the engine
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait(timeout=60)
        if engine.stderr is not None:
            engine.stderr.close()
        if provider is not None and provider.is_running():  # the check failed: clean up
            with contextlib.suppress(psutil.NoSuchProcess):
                provider.kill()
    replay = _as_step(hello["env"], "memory", "list")
    assert replay.returncode == 3
    assert "expired" in replay.stderr
