"""`wardian settings list|get|set`: typed, validated settings (CLI.md).

Operator-only: inside a managed process every command exits 3 (`require_operator`), so an
agent cannot switch agent memory or conversation logging for itself or others.
"""

from __future__ import annotations

import json

import typer

from wardian.cli._common import JsonOption, emit_json, print_table, require_operator, stdout

app = typer.Typer(help="Typed settings (agent memory, conversation logging, providers).",
                  no_args_is_help=True)

AgentOpt = typer.Option(
    None, "--agent", help="Per-agent override (only for keys that allow one)."
)


def _agent_id(agent: str | None) -> str | None:
    if agent is None:
        return None
    from wardian.app.agents import agent_id
    from wardian.config import open_state_db

    return agent_id(open_state_db(), agent)


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """List every setting with its value, default and description."""
    require_operator()
    from wardian.config import SettingsStore, open_state_db

    items = SettingsStore(open_state_db()).items()
    if as_json:
        emit_json([
            {"key": s.key, "value": v, "default": s.default, "set": was_set,
             "values": s.values, "per_agent": s.per_agent, "description": s.description}
            for s, v, was_set in items
        ])
        return
    print_table(
        ["key", "value", "default", "description"],
        [(s.key, json.dumps(v), json.dumps(s.default), s.description) for s, v, _ in items],
    )


@app.command("get")
def get(key: str, agent: str | None = AgentOpt) -> None:
    """Print the effective value of KEY (JSON)."""
    require_operator()
    from wardian.config import SettingsStore, open_state_db

    stdout(json.dumps(SettingsStore(open_state_db()).get(key, agent_id=_agent_id(agent))))


@app.command("set")
def set_(key: str, value: str, agent: str | None = AgentOpt) -> None:
    """Set KEY to VALUE after validating it; applies to newly launched processes."""
    require_operator()
    from wardian.config import SettingsStore, open_state_db

    parsed = SettingsStore(open_state_db()).set(key, value, agent_id=_agent_id(agent))
    suffix = f" for agent {agent}" if agent else ""
    stdout(f"{key} = {json.dumps(parsed)}{suffix}")
