"""The real Gemini CLI calling Wardian's MCP tools from the entry `wardian mcp install
gemini` wrote into the user's ``~/.gemini/settings.json``: Gemini starts ``wardian mcp``
itself and offers its tools as ``mcp_wardian_<tool>`` on the first request; a scripted
``memory_recall`` returns the agent's record to the model; inside
``wardian agent exec A`` a ``memory_save`` saves into A with the launch's capability and
into no other agent; outside a launch the read-only ``memory_list`` answers and
``memory_save`` is refused with the reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e._support import W
from tests.hosts.endpoint import Reply, ToolCall
from tests.hosts.hostcli import Host
from tests.hosts.sessions import setup_agent, wardian

MODEL = "gemini-2.5-pro"
SEED = "The billing service reads its settings from config/billing.toml"


def _with_mcp(host: Host, home: Path, names: tuple[str, ...] = ("ada",)) -> W:
    """Agents `names` (the first seeded with SEED) and Wardian's MCP server installed for
    them in Gemini's user settings (the install merges into the file the host set up)."""
    agent = setup_agent(host, home, name=names[0], hooks=False, seed=(SEED,))
    for other in names[1:]:
        agent.w.json("agent", "add", other, "--provider", "builtin", "--workspace",
                     str(host.workspace))
    for name in names:
        wardian(host, "mcp", "install", "gemini", "--agent", name)
    settings = json.loads(host.gemini_settings.read_text())
    assert "wardian" in settings["mcpServers"], settings
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key", \
        "the install kept the host's own settings"
    return agent.w


def _gemini(host: Host, prompt: str, *, launch: str | None = None) -> str:
    args = ["-m", MODEL, "--yolo", "-p", prompt]
    argv = ([sys.executable, "-m", "wardian", "agent", "exec", "--workspace",
             str(host.workspace), launch, "--", str(host.exe), *args] if launch
            else host.argv(*args))
    proc = host.run(argv=argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not host.endpoint.errors, host.endpoint.errors
    return proc.stdout


def test_memory_recall_reaches_the_model(gemini_host: Host, wardian_home: Path) -> None:
    _with_mcp(gemini_host, wardian_home)
    gemini_host.endpoint.script(
        Reply(ToolCall("memory_recall", {"query": "where are the billing settings"},
                       suffix=True)),
        Reply("They are in config/billing.toml."))
    _gemini(gemini_host, "Where does billing read its settings?", launch="ada")
    first, second = gemini_host.endpoint.main_requests[:2]
    assert "mcp_wardian_memory_recall" in first.tool_names, first.tool_names
    assert any(SEED in r for r in second.tool_results), second.tool_results


def test_a_save_inside_a_launch_goes_to_its_agent_only(gemini_host: Host,
                                                      wardian_home: Path) -> None:
    w = _with_mcp(gemini_host, wardian_home, names=("ada", "bob"))
    gemini_host.endpoint.script(
        Reply(ToolCall("memory_save", {"text": "Invoices are cut on the 3rd of each month",
                                       "evidence": "the user said invoices go out on the 3rd"},
                       suffix=True)),
        Reply("Saved."))
    _gemini(gemini_host, "Remember the invoice day.", launch="ada")
    (result,) = gemini_host.endpoint.main_requests[-1].tool_results
    assert "error" not in json.loads(result), result  # Gemini's shape of a failed call
    assert "Memory saved" in result, result
    assert "Invoices are cut on the 3rd of each month" in {r["text"] for r in w.records("ada")}
    assert w.records("bob") == []


def test_outside_a_launch_reads_answer_and_saves_are_refused(gemini_host: Host,
                                                             wardian_home: Path) -> None:
    w = _with_mcp(gemini_host, wardian_home)
    gemini_host.endpoint.script(
        Reply(ToolCall("memory_list", {}, suffix=True)),
        Reply(ToolCall("memory_save", {"text": "Ship on Fridays", "evidence": "said so"},
                       suffix=True)),
        Reply("Done."))
    _gemini(gemini_host, "List my memory, then remember to ship on Fridays.")
    listed, refused = gemini_host.endpoint.main_requests[1:3]
    assert any(SEED in r and "read-only" in r for r in listed.tool_results), \
        listed.tool_results
    assert any("wardian agent launch" in r for r in refused.tool_results[-1:]), \
        refused.tool_results
    assert "Ship on Fridays" not in {r["text"] for r in w.records("ada")}
