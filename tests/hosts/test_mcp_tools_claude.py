"""The real Claude Code calling Wardian's MCP tools from the config `wardian mcp install
claude-code` wrote (the project's ``.mcp.json``): the host starts ``wardian mcp`` itself;
a scripted ``memory_recall`` returns the agent's record to the model; inside ``wardian
agent exec A`` a ``memory_save`` saves into A with the launch's capability, and so does a
Bash ``wardian memory save`` (into A only, never B); outside a launch the read-only
``memory_list`` answers and ``memory_save`` is refused with the reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e._support import W
from tests.hosts.endpoint import Reply, Shell, ToolCall
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent, wardian

MODEL = "claude-opus-4-5"
SEED = "The billing service reads its settings from config/billing.toml"


def _with_mcp(host: Host, home: Path, names: tuple[str, ...] = ("ada",)) -> W:
    """Agents `names` (the first seeded with SEED), Wardian's MCP server installed for
    them in the project's .mcp.json, and Claude Code told to use the project's servers."""
    agent = setup_agent(host, home, name=names[0], hooks=False, seed=(SEED,))
    for other in names[1:]:
        agent.w.json("agent", "add", other, "--provider", "builtin", "--workspace",
                     str(host.workspace))
    for name in names:
        wardian(host, "mcp", "install", "claude-code", "--agent", name)
    assert (host.workspace / ".mcp.json").is_file()
    settings = host.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text()) if settings.is_file() else {}
    data["enableAllProjectMcpServers"] = True  # the user's one-time approval
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(data))
    # Claude Code defers MCP tools behind its ToolSearch tool by default (a model searches
    # first); the scripted model calls them directly, so they are offered as tools.
    host.env["ENABLE_TOOL_SEARCH"] = "false"
    # -p mode sends the first turn after a short wait for MCP servers, whether or not they
    # have connected (on a loaded machine a cold `wardian mcp` may take longer): the test
    # asks Claude Code to wait for them, so the first turn offers the tools.
    host.env["MCP_CONNECTION_NONBLOCKING"] = "false"
    return agent.w


def _claude(host: Host, prompt: str, *, launch: str | None = None) -> str:
    args = ["-p", prompt, "--model", MODEL, "--allowedTools", "mcp__wardian,Bash",
            "--output-format", "json"]
    argv = ([sys.executable, "-m", "wardian", "agent", "exec", "--workspace",
             str(host.workspace), launch, "--", str(host.exe), *args] if launch
            else host.argv(*args))
    proc = host.run(argv=argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_memory_recall_reaches_the_model(claude_host: Host, wardian_home: Path) -> None:
    _with_mcp(claude_host, wardian_home)
    claude_host.endpoint.script(
        Reply(ToolCall("memory_recall", {"query": "where are the billing settings"},
                       suffix=True)),
        Reply("They are in config/billing.toml."))
    _claude(claude_host, "Where does billing read its settings?", launch="ada")
    first, second = claude_host.endpoint.main_requests[:2]
    assert any(n.endswith("memory_recall") for n in first.tool_names), first.tool_names
    assert any(SEED in r for r in second.tool_results), second.tool_results


def test_saves_inside_a_launch_go_to_its_agent_only(claude_host: Host,
                                                    wardian_home: Path) -> None:
    w = _with_mcp(claude_host, wardian_home, names=("ada", "bob"))
    claude_host.endpoint.script(
        Reply(ToolCall("memory_save", {"text": "Invoices are cut on the 3rd of each month",
                                       "evidence": "the user said invoices go out on the 3rd"},
                       suffix=True)),
        Reply(Shell("wardian memory save --evidence 'the user: refunds need two approvals' "
                    "-- 'Refunds need two approvals'")),
        Reply("Saved both."))
    _claude(claude_host, "Remember the invoice day and the refund rule.", launch="ada")
    results = claude_host.endpoint.main_requests[-1].tool_results
    assert not any("Error" in r for r in results), results
    ada = {r["text"] for r in w.records("ada")}
    assert {"Invoices are cut on the 3rd of each month",
            "Refunds need two approvals"} <= ada, ada
    assert w.records("bob") == []


def test_outside_a_launch_reads_answer_and_saves_are_refused(claude_host: Host,
                                                             wardian_home: Path) -> None:
    w = _with_mcp(claude_host, wardian_home)
    claude_host.endpoint.script(
        Reply(ToolCall("memory_list", {}, suffix=True)),
        Reply(ToolCall("memory_save", {"text": "Ship on Fridays", "evidence": "said so"},
                       suffix=True)),
        Reply("Done."))
    _claude(claude_host, "List my memory, then remember to ship on Fridays.")
    listed, refused = claude_host.endpoint.main_requests[1:3]
    assert any(SEED in r and "read-only" in r for r in listed.tool_results), \
        listed.tool_results
    assert any("wardian agent launch" in r for r in refused.tool_results[-1:]), \
        refused.tool_results
    assert "Ship on Fridays" not in {r["text"] for r in w.records("ada")}
