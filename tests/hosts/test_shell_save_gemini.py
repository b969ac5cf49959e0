"""The real Gemini CLI inside ``wardian agent exec A``: a scripted call of its shell tool
(``run_shell_command``) running ``wardian memory save …`` saves into A's memory with the
launch's capability and into no other agent's; the same command from Gemini outside a
launch is refused."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent

MODEL = "gemini-2.5-pro"
SAVE = ("wardian memory save --evidence 'the user: refunds need two approvals' "
        "-- 'Refunds need two approvals'")


def _gemini(host: Host, prompt: str, *, launch: str | None = None) -> None:
    args = ["-m", MODEL, "--yolo", "-p", prompt]
    argv = ([sys.executable, "-m", "wardian", "agent", "exec", "--workspace",
             str(host.workspace), launch, "--", str(host.exe), *args] if launch
            else host.argv(*args))
    proc = host.run(argv=argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not host.endpoint.errors, host.endpoint.errors


def test_a_shell_save_inside_a_launch_goes_to_its_agent_only(gemini_host: Host,
                                                            wardian_home: Path) -> None:
    agent = setup_agent(gemini_host, wardian_home, hooks=False, seed=())
    agent.w.json("agent", "add", "bob", "--provider", "builtin", "--workspace",
                 str(gemini_host.workspace))
    gemini_host.endpoint.script(Reply(Shell(SAVE)), Reply("Saved."))
    _gemini(gemini_host, "Remember the refund rule.", launch=agent.name)
    (result,) = gemini_host.endpoint.main_requests[-1].tool_results
    assert "Memory saved" in result and "Exit Code" not in result, result
    assert [r["text"] for r in agent.w.records(agent.name)] == ["Refunds need two approvals"]
    assert agent.w.records("bob") == []


def test_a_shell_save_outside_a_launch_is_refused(gemini_host: Host,
                                                 wardian_home: Path) -> None:
    agent = setup_agent(gemini_host, wardian_home, hooks=False, seed=())
    gemini_host.endpoint.script(Reply(Shell(SAVE)), Reply("Could not save."))
    _gemini(gemini_host, "Remember the refund rule.")
    (result,) = gemini_host.endpoint.main_requests[-1].tool_results
    assert "wardian agent launch" in result and "Exit Code: 3" in result, result
    assert agent.w.records(agent.name) == []
