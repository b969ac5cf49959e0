"""`wardian conversation`: Imported conversation archives.

Operator-only: inside a managed process every command exits 3 (`require_operator`), so an
agent cannot read another agent's conversations.
"""

from __future__ import annotations

import typer

from wardian.cli._common import (
    JsonOption,
    emit_json,
    print_table,
    require_operator,
    shown,
    stdout,
)

app = typer.Typer(
    help="Imported conversation archives.",
    no_args_is_help=True,
)


@app.command("list")
def list_(
    agent: str | None = typer.Option(None, "--agent", help="Only this agent's conversations."),
    limit: int = typer.Option(200, "--limit", help="At most this many, newest first."),
    as_json: bool = JsonOption,
) -> None:
    """List imported conversations with their manifests (newest first)."""
    require_operator()
    from wardian._util import parse_utc
    from wardian.app.conversations import agent_names, list_conversations
    from wardian.config import open_state_db

    state = open_state_db()
    manifests = list_conversations(state, agent=agent, limit=limit)
    if as_json:
        emit_json([m.to_json() for m in manifests])
        return
    names = agent_names(state)
    print_table(
        ["id", "agent", "provider", "session", "boundary", "messages", "malformed", "seq",
         "imported"],
        [(m.id[:8], names.get(m.agent_id, m.agent_id[:8]), m.provider, (m.session_id or "")[:12],
          m.boundary, m.message_count, m.malformed_lines,
          f"{m.first_seq}-{m.last_seq}" if m.first_seq is not None else "-",
          parse_utc(m.imported_at).astimezone().strftime("%Y-%m-%d %H:%M:%S"))
         for m in manifests],
    )


@app.command("show")
def show(
    conversation_id: str = typer.Argument(..., help="Conversation id or unique prefix."),
    as_json: bool = JsonOption,
) -> None:
    """Show a conversation's manifest and its normalised messages."""
    require_operator()
    from wardian.app.conversations import conversation
    from wardian.config import open_state_db

    manifest, messages = conversation(open_state_db(), conversation_id)
    if as_json:
        emit_json({"manifest": manifest.to_json(), "messages": [m.to_json() for m in messages]})
        return
    from wardian._util import parse_utc

    doc = manifest.to_json()
    doc["imported_at"] = parse_utc(manifest.imported_at).astimezone().strftime(
        "%Y-%m-%d %H:%M:%S")
    for key, value in doc.items():
        stdout(f"{key:>16}: {shown(value)}")
    stdout()
    if not messages and manifest.source_offset:
        stdout(f"(no new messages: earlier imports hold the transcript's first "
               f"{manifest.source_offset})")
    for message in messages:
        stdout(f"[{message.seq}] {message.role}/{message.kind}: {message.text}")
