"""Each real host calling Wardian's MCP tools from the config `wardian mcp install HOST`
wrote: the host starts ``wardian mcp`` itself; a scripted ``memory_recall`` returns the
agent's record to the model; inside ``wardian agent exec A`` a ``memory_save`` saves into A
with the launch's capability and into no other agent; outside a launch the read-only
``memory_list`` answers and ``memory_save`` is refused with the reason.

The same host runs call the host's own shell tool (Claude Code ``Bash``, Codex
``exec_command``, Gemini ``run_shell_command``, opencode ``bash``) with ``wardian memory
save …``: inside the launch it saves into A only, outside it is refused with the way to
launch. Codex runs the command in a login shell, so ``wardian`` must be on the PATH the
user's profile sets (`tests.hosts.hostcli.Host` writes one, as a real install's
``~/.profile`` does). Each check rides on a run the others need: a host start costs
seconds.

Where each host keeps the server and what the tests must set for a scripted model to call
the tools on the first turn is in the per-host setup below (docs/hosts.md, row 4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import tomlkit

from tests.e2e._support import W
from tests.hosts.endpoint import Reply, Shell, ToolCall
from tests.hosts.hostcli import Host
from tests.hosts.sessions import HOOK_HOST, setup_agent, wardian

SEED = "The billing service reads its settings from config/billing.toml"
SHELL_SAVE = ("wardian memory save --evidence 'the user: refunds need two approvals' "
              "-- 'Refunds need two approvals'")


def _claude(host: Host) -> None:
    """The project's ``.mcp.json``, approved once by the user. Claude Code defers MCP
    tools behind its ToolSearch tool by default (a model searches first); the scripted
    model calls them directly, so they are offered as tools. In ``-p`` mode it sends the
    first turn after a short wait for MCP servers, whether or not they have connected (a
    cold ``wardian mcp`` on a loaded machine may take longer), so the test asks it to
    wait for them."""
    assert (host.workspace / ".mcp.json").is_file()
    settings = host.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text()) if settings.is_file() else {}
    data["enableAllProjectMcpServers"] = True
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(data))
    host.env["ENABLE_TOOL_SEARCH"] = "false"
    host.env["MCP_CONNECTION_NONBLOCKING"] = "false"


def _codex(host: Host) -> None:
    """The ``[mcp_servers.wardian]`` table in Codex's config, which offers the tools as a
    Responses ``namespace``. ``codex exec`` sends its first turn without waiting for
    servers that are not ``required``, so the test marks it required (Codex's own
    setting)."""
    path = host.home / ".codex" / "config.toml"
    config = tomlkit.parse(path.read_text())
    assert config["model_providers"]["scripted"], "the install kept the host's own settings"
    servers = config["mcp_servers"]
    assert isinstance(servers, dict) and "wardian" in servers, config
    servers["wardian"]["required"] = True
    path.write_text(tomlkit.dumps(config))


def _gemini(host: Host) -> None:
    """``mcpServers.wardian`` in the user's ``~/.gemini/settings.json``; Gemini waits for
    its servers before the first turn when not interactive and names the tools
    ``mcp_wardian_<tool>``."""
    settings = json.loads(host.gemini_settings.read_text())
    assert "wardian" in settings["mcpServers"], settings
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key", \
        "the install kept the host's own settings"


def _opencode(host: Host) -> None:
    """``mcp.wardian`` (a local server) in the user's ``opencode.json``. opencode's MCP
    client checks a tool error's structured content against the tool's output schema,
    which is why Wardian's errors carry their details in ``_meta``."""
    config = json.loads((host.home / ".config" / "opencode" / "opencode.json").read_text())
    assert config["mcp"]["wardian"]["type"] == "local", config
    assert config["provider"]["scripted"], "the install kept the host's own settings"


SETUP: dict[str, Callable[[Host], None]] = {
    "claude": _claude, "codex": _codex, "gemini": _gemini, "opencode": _opencode}
HOSTS = pytest.mark.parametrize("name", sorted(SETUP))


def _with_mcp(request: pytest.FixtureRequest, name: str, home: Path,
              agents: tuple[str, ...] = ("ada",)) -> tuple[Host, W]:
    """The host, agents `agents` (the first seeded with SEED) and Wardian's MCP server
    installed for them by the real CLI, merged into the host's own config."""
    from wardian.app.agents import add_agent
    from wardian.config import open_state_db

    host: Host = request.getfixturevalue(f"{name}_host")
    agent = setup_agent(host, home, name=agents[0], hooks=False, seed=(SEED,))
    for other in agents[1:]:
        add_agent(open_state_db(), other, "builtin", workspace=str(host.workspace))
    for agent_name in agents:
        wardian(host, "mcp", "install", HOOK_HOST[name], "--agent", agent_name)
    SETUP[name](host)
    return host, agent.w


def _turn(host: Host, prompt: str, *, launch: str | None = None) -> None:
    proc = host.run(argv=host.prompt_argv(prompt, launch=launch))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not host.endpoint.errors, host.endpoint.errors


@HOSTS
def test_inside_a_launch_recall_answers_and_saves_go_to_its_agent_only(
        name: str, request: pytest.FixtureRequest, wardian_home: Path) -> None:
    """Inside ``wardian agent exec ada``: the recall answers with ada's record, then the
    MCP save and the shell tool's ``wardian memory save`` go into ada and not into bob."""
    host, w = _with_mcp(request, name, wardian_home, agents=("ada", "bob"))
    host.endpoint.script(
        Reply(ToolCall("memory_recall", {"query": "where are the billing settings"},
                       suffix=True)),
        Reply(ToolCall("memory_save", {"text": "Invoices are cut on the 3rd of each month",
                                       "evidence": "the user said invoices go out on the 3rd"},
                       suffix=True)),
        Reply(Shell(SHELL_SAVE)),
        Reply("Saved."))
    _turn(host, "Where does billing read its settings? Then remember the invoice day and "
                "the refund rule.", launch="ada")
    first, recalled, saved, shell = host.endpoint.main_requests[:4]
    assert any(n.endswith("memory_recall") for n in first.tool_names), first.tool_names
    assert any(SEED in r for r in recalled.tool_results), recalled.tool_results
    result = " ".join(saved.tool_results[-1:])
    assert "Memory saved" in result and "error" not in result.lower(), saved.tool_results
    assert "Memory saved" in " ".join(shell.tool_results[-1:]), shell.tool_results
    assert sorted(r["text"] for r in w.records("ada")) == sorted(
        [SEED, "Invoices are cut on the 3rd of each month", "Refunds need two approvals"])
    assert w.records("bob") == []


@HOSTS
def test_outside_a_launch_reads_answer_and_saves_are_refused(
        name: str, request: pytest.FixtureRequest, wardian_home: Path) -> None:
    host, w = _with_mcp(request, name, wardian_home)
    host.endpoint.script(
        Reply(ToolCall("memory_list", {}, suffix=True)),
        Reply(ToolCall("memory_save", {"text": "Ship on Fridays", "evidence": "said so"},
                       suffix=True)),
        Reply(Shell(SHELL_SAVE)),
        Reply("Done."))
    _turn(host, "List my memory, then remember to ship on Fridays and the refund rule.")
    listed, refused, shell = host.endpoint.main_requests[1:4]
    assert any(SEED in r and "read-only" in r for r in listed.tool_results), \
        listed.tool_results
    assert any("wardian agent launch" in r for r in refused.tool_results[-1:]), \
        refused.tool_results
    assert any("wardian agent launch" in r for r in shell.tool_results[-1:]), \
        shell.tool_results
    assert [r["text"] for r in w.records("ada")] == [SEED]
