"""The real opencode inside ``wardian agent exec A``: a scripted call of its shell tool
running ``wardian memory save …`` saves into A's memory with the launch's capability and
into no other agent's; the same command from opencode outside a launch is refused."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent

MODEL = "scripted/scripted-model"
SAVE = ("wardian memory save --evidence 'the user: refunds need two approvals' "
        "-- 'Refunds need two approvals'")


def _opencode(host: Host, prompt: str, *, launch: str | None = None) -> None:
    args = ["run", "--model", MODEL, prompt]
    argv = ([sys.executable, "-m", "wardian", "agent", "exec", "--workspace",
             str(host.workspace), launch, "--", str(host.exe), *args] if launch
            else host.argv(*args))
    proc = host.run(argv=argv)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_a_shell_save_inside_a_launch_goes_to_its_agent_only(opencode_host: Host,
                                                            wardian_home: Path) -> None:
    agent = setup_agent(opencode_host, wardian_home, hooks=False, seed=())
    agent.w.json("agent", "add", "bob", "--provider", "builtin", "--workspace",
                 str(opencode_host.workspace))
    opencode_host.endpoint.script(Reply(Shell(SAVE)), Reply("Saved."))
    _opencode(opencode_host, "Remember the refund rule.", launch=agent.name)
    (result,) = opencode_host.endpoint.main_requests[-1].tool_results
    assert "Error" not in result, result
    assert [r["text"] for r in agent.w.records(agent.name)] == ["Refunds need two approvals"]
    assert agent.w.records("bob") == []


def test_a_shell_save_outside_a_launch_is_refused(opencode_host: Host,
                                                 wardian_home: Path) -> None:
    agent = setup_agent(opencode_host, wardian_home, hooks=False, seed=())
    opencode_host.endpoint.script(Reply(Shell(SAVE)), Reply("Could not save."))
    _opencode(opencode_host, "Remember the refund rule.")
    (result,) = opencode_host.endpoint.main_requests[-1].tool_results
    assert "wardian agent launch" in result, result
    assert agent.w.records(agent.name) == []
