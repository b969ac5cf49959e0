"""Each real host inside ``wardian agent exec A``: a scripted call of its own shell tool
(Claude Code ``Bash``, Codex ``exec_command``, Gemini ``run_shell_command``, opencode
``bash``) running ``wardian memory save …`` saves into A's memory with the launch's
capability and into no other agent's; the same command from the host outside a launch is
refused with the way to launch. Codex runs the command in a login shell, so ``wardian``
must be on the PATH the user's profile sets (`tests.hosts.hostcli.Host` writes one, as a
real install's ``~/.profile`` does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hosts.endpoint import Reply, Shell
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent
from wardian.app.agents import add_agent
from wardian.config import open_state_db

SAVE = ("wardian memory save --evidence 'the user: refunds need two approvals' "
        "-- 'Refunds need two approvals'")
HOSTS = pytest.mark.parametrize("name", ["claude", "codex", "gemini", "opencode"])


def _turn(host: Host, *, launch: str | None = None) -> str:
    proc = host.run(argv=host.prompt_argv("Remember the refund rule.", launch=launch))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not host.endpoint.errors, host.endpoint.errors
    (result,) = host.endpoint.main_requests[-1].tool_results
    return result


@HOSTS
def test_a_shell_save_inside_a_launch_goes_to_its_agent_only(
        name: str, request: pytest.FixtureRequest, wardian_home: Path) -> None:
    host: Host = request.getfixturevalue(f"{name}_host")
    agent = setup_agent(host, wardian_home, hooks=False, seed=())
    add_agent(open_state_db(), "bob", "builtin", workspace=str(host.workspace))
    host.endpoint.script(Reply(Shell(SAVE)), Reply("Saved."))
    result = _turn(host, launch=agent.name)
    assert "Memory saved" in result, result
    assert [r["text"] for r in agent.w.records(agent.name)] == ["Refunds need two approvals"]
    assert agent.w.records("bob") == []


@HOSTS
def test_a_shell_save_outside_a_launch_is_refused(
        name: str, request: pytest.FixtureRequest, wardian_home: Path) -> None:
    host: Host = request.getfixturevalue(f"{name}_host")
    agent = setup_agent(host, wardian_home, hooks=False, seed=())
    host.endpoint.script(Reply(Shell(SAVE)), Reply("Could not save."))
    result = _turn(host)
    assert "wardian agent launch" in result, result
    assert agent.w.records(agent.name) == []
