"""The real Codex CLI inside ``wardian agent exec A``: a scripted call of its shell tool
running ``wardian memory save …`` saves into A's memory with the launch's capability and
into no other agent's; the same command from Codex outside a launch is refused."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent

MODEL = "gpt-5.1-codex"
SAVE = ("wardian memory save --evidence 'the user: refunds need two approvals' "
        "-- 'Refunds need two approvals'")


def _codex(host: Host, prompt: str, *, launch: str | None = None) -> None:
    args = ["exec", "--skip-git-repo-check", "--model", MODEL, prompt]
    argv = ([sys.executable, "-m", "wardian", "agent", "exec", "--workspace",
             str(host.workspace), launch, "--", str(host.exe), *args] if launch
            else host.argv(*args))
    proc = host.run(argv=argv)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_shell_save_inside_a_launch_goes_to_its_agent_only(codex_host: Host,
                                                            wardian_home: Path) -> None:
    agent = setup_agent(codex_host, wardian_home, hooks=False, seed=())
    agent.w.json("agent", "add", "bob", "--provider", "builtin", "--workspace",
                 str(codex_host.workspace))
    codex_host.endpoint.script(Reply(Shell(SAVE)), Reply("Saved."))
    _codex(codex_host, "Remember the refund rule.", launch=agent.name)
    (result,) = codex_host.endpoint.main_requests[-1].tool_results
    assert "Error" not in result, result
    assert [r["text"] for r in agent.w.records(agent.name)] == ["Refunds need two approvals"], \
        result
    assert agent.w.records("bob") == []


def test_a_shell_save_outside_a_launch_is_refused(codex_host: Host,
                                                 wardian_home: Path) -> None:
    agent = setup_agent(codex_host, wardian_home, hooks=False, seed=())
    codex_host.endpoint.script(Reply(Shell(SAVE)), Reply("Could not save."))
    _codex(codex_host, "Remember the refund rule.")
    (result,) = codex_host.endpoint.main_requests[-1].tool_results
    assert "wardian agent launch" in result, result
    assert agent.w.records(agent.name) == []
