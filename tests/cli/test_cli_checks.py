"""Small refusals and shell completion (issue 20): bad input fails at the command, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import invoke
from tests.providers.conftest import FakeCli, fake_cli  # noqa: F401 - a fixture
from typer.testing import CliRunner


def test_agent_add_refuses_an_unknown_provider(cli: CliRunner) -> None:
    res = invoke(cli, "agent", "add", "xx", "--provider", "nosuch")
    assert res.exit_code == 2 and "unknown provider 'nosuch'" in res.stderr
    assert "builtin" in res.stderr  # the known ones are listed
    assert "xx" not in invoke(cli, "agent", "list").stdout
    res = invoke(cli, "agent", "add", "xx", "--provider", "claud")
    assert res.exit_code == 2 and "did you mean 'claude'" in res.stderr


@pytest.mark.parametrize("kind", ["missing", "directory", "unreadable"])
def test_session_close_refuses_a_bad_transcript(cli: CliRunner, tmp_path: Path,
                                                 kind: str) -> None:
    assert invoke(cli, "agent", "add", "ada", "--provider", "claude").exit_code == 0
    path = tmp_path / "t.jsonl"
    if kind == "directory":
        path.mkdir()
    elif kind == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads every file")
        path.write_text("{}\n")
        path.chmod(0)
    res = invoke(cli, "session", "close", "--agent", "ada", "--boundary", "shutdown",
                 "--transcript", str(path))
    assert res.exit_code == 2, res.output
    assert str(path) in res.stderr
    from wardian.config import open_state_db
    from wardian.runtime.session_events import SessionEventQueue

    assert SessionEventQueue(open_state_db()).list() == []  # nothing recorded


def _complete(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The installed console script: completion is keyed on the program's name.
    wardian = Path(sys.executable).with_name("wardian")
    return subprocess.run([str(wardian)], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("shell", "env", "needle"), [
    ("bash", {"COMP_WORDS": "wardian automation sess", "COMP_CWORD": "2"}, "session-close"),
    ("zsh", {"_TYPER_COMPLETE_ARGS": "wardian agent ad"}, "add"),
    ("fish", {"_TYPER_COMPLETE_ARGS": "wardian doc", "_TYPER_COMPLETE_FISH_ACTION": "get-args"},
     "doctor"),
])
def test_shell_completion_works(shell: str, env: dict[str, str], needle: str) -> None:
    source = _complete({"_WARDIAN_COMPLETE": f"source_{shell}"})
    assert source.returncode == 0 and "wardian" in source.stdout, source.stderr
    done = _complete({"_WARDIAN_COMPLETE": f"complete_{shell}", **env})
    assert done.returncode == 0, done.stderr
    assert needle in done.stdout


def test_completion_is_offered_once_on_the_root(cli: CliRunner) -> None:
    assert "--show-completion" in invoke(cli, "--help").stdout
    for group in ("agent", "automation", "hooks", "memory"):
        assert "completion" not in invoke(cli, group, "--help").stdout, group


def test_agent_set_changes_what_add_set_and_keeps_memory(cli: CliRunner, tmp_path: Path) -> None:
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    assert invoke(cli, "agent", "add", "ada", "--provider", "claude", "--effort", "high"
                  ).exit_code == 0
    agent = AgentRegistry(open_state_db()).get("ada")
    MemoryStore(open_memory_db()).save(
        agent.id, "Keep answers short", evidence="user", kind="stable", scope=Scope.agent(),
        actor="test")
    res = invoke(cli, "agent", "set", "ada", "--provider", "codex", "--model", "gpt-5.2-codex",
                 "--workspace", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["id"], doc["provider"], doc["model"], doc["effort"], doc["workspace"]) == (
        agent.id, "codex", "gpt-5.2-codex", "high", str(tmp_path.resolve()))
    assert MemoryStore(open_memory_db()).count(agent.id) == 1  # memory follows the agent
    assert invoke(cli, "agent", "set", "ada", "--effort", "").exit_code == 0
    assert AgentRegistry(open_state_db()).get("ada").effort is None
    for args, needle in [(("--provider", "nosuch"), "unknown provider 'nosuch'"),
                         (("--workspace", str(tmp_path / "missing")), "not a directory"),
                         ((), "nothing to change")]:
        res = invoke(cli, "agent", "set", "ada", *args)
        assert res.exit_code == 2 and needle in res.stderr, (args, res.stderr)
    assert AgentRegistry(open_state_db()).get("ada").provider == "codex"


def test_agent_exec_prints_the_collapsed_memory_loaded_line_first(cli: CliRunner,
                                                                  tmp_path: Path) -> None:
    from wardian.config import open_state_db
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    agent = AgentRegistry(open_state_db()).add("ada", "claude")
    assert invoke(cli, "settings", "set", "agent_memory.enabled", "true").exit_code == 0
    wardian = str(Path(sys.executable).with_name("wardian"))

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([wardian, "agent", "exec", "ada", "--", sys.executable, "-c",
                               "import sys; sys.stderr.write('provider started\\n')"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120,
                              env=dict(os.environ), stdin=subprocess.DEVNULL, check=False)

    first = run()
    assert first.returncode == 0 and "Memory loaded" not in first.stderr  # nothing loaded
    for text in ("Keep answers short", "Use ruff"):
        MemoryStore(open_memory_db()).save(agent.id, text, evidence="user", kind="stable",
                                           scope=Scope.agent(), actor="test")
    second = run()
    assert second.returncode == 0, second.stderr
    lines = second.stderr.splitlines()
    assert lines[0] == ("Memory loaded · 2 records · `wardian garden memory loaded --agent ada "
                        "--last` to expand")
    assert lines.index("provider started") > 0
    res = invoke(cli, "garden", "memory", "loaded", "--agent", "ada", "--last")
    assert res.exit_code == 0 and res.stdout.count("Memory loaded ·") == 1


def test_agent_add_and_set_check_the_model_against_the_catalog(cli: CliRunner) -> None:
    """As the run start does (same catalog code): an unknown model or effort is exit 2 with
    the known models and the refresh command; nothing is written."""
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry

    res = invoke(cli, "agent", "add", "xx", "--provider", "builtin", "--model", "nosuch")
    assert res.exit_code == 2, res.output
    assert "model 'nosuch' is not in the builtin catalog" in res.stderr
    assert "curator-rules" in res.stderr  # the known models
    assert "wardian agent models --provider builtin --refresh" in res.stderr
    assert "xx" not in invoke(cli, "agent", "list").stdout
    res = invoke(cli, "agent", "add", "xx", "--provider", "builtin", "--effort", "high")
    assert res.exit_code == 2 and "effort 'high'" in res.stderr, res.stderr
    res = invoke(cli, "agent", "add", "xx", "--provider", "builtin", "--model",
                 "curator-rules")
    assert res.exit_code == 0 and res.stderr == "", res.output
    res = invoke(cli, "agent", "set", "xx", "--model", "curator-rulez")
    assert res.exit_code == 2 and "known: curator-rules" in res.stderr, res.stderr
    assert AgentRegistry(open_state_db()).get("xx").model == "curator-rules"


def test_agent_model_checks_a_refreshed_catalog_and_warns_without_one(
    cli: CliRunner, fake_cli: FakeCli,  # noqa: F811
) -> None:
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry

    # never refreshed: accepted, with a warning that says the model was not checked and how
    res = invoke(cli, "agent", "add", "ada", "--provider", "codex", "--model", "gpt-9")
    assert res.exit_code == 0, res.output
    assert "Warning:" in res.stderr and "not checked" in res.stderr
    assert "wardian agent models --provider codex --refresh" in res.stderr
    assert invoke(cli, "agent", "models", "--provider", "codex", "--refresh").exit_code == 0
    res = invoke(cli, "agent", "set", "ada", "--model", "gpt-5.1-codex-mini",
                 "--effort", "xhigh")
    assert res.exit_code == 2 and "supported: medium, high" in res.stderr, res.stderr
    res = invoke(cli, "agent", "set", "ada", "--model", "gpt-5.1-codex-mini")
    assert res.exit_code == 0 and res.stderr == "", res.output
    res = invoke(cli, "agent", "set", "ada", "--provider", "builtin")  # keeps gpt-5.1-…
    assert res.exit_code == 2 and "not in the builtin catalog" in res.stderr, res.stderr
    assert "--model ''" in res.stderr
    res = invoke(cli, "agent", "set", "ada", "--provider", "builtin", "--model", "")
    assert res.exit_code == 0, res.output
    assert AgentRegistry(open_state_db()).get("ada").provider == "builtin"
