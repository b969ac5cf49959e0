"""Imported conversation archives as the operator reads them (``wardian conversation
list|show``; CLI.md "conversation"). Read-only; operator only (the caller checks
`wardian.app.operator.require_operator` first: an agent must not read another agent's
conversations).

`ConversationManifest` and `Message` are re-exported for the surfaces' rendering.
"""

from __future__ import annotations

from wardian.runtime.archives import ConversationManifest
from wardian.transcripts import Message

__all__ = ["ConversationManifest", "Message", "agent_names", "conversation",
           "list_conversations"]


def list_conversations(*, agent: str | None = None,
                       limit: int = 200) -> list[ConversationManifest]:
    """Imported conversations, newest first, of every agent or of `agent` (name or id).

    Raises:
        NotFoundError: unknown agent.
    """
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.archives import ArchiveStore

    state_db = open_state_db()
    agent_id = AgentRegistry(state_db).get(agent).id if agent else None
    return ArchiveStore(state_db).list(agent_id=agent_id, limit=limit)


def agent_names() -> dict[str, str]:
    """Agent id -> name, for showing whose a conversation is."""
    from wardian.config import open_state_db
    from wardian.runtime.agents import AgentRegistry

    return {a.id: a.name for a in AgentRegistry(open_state_db()).list()}


def conversation(ref: str) -> tuple[ConversationManifest, list[Message]]:
    """One conversation (id or unique prefix): its manifest and normalised messages.

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.config import open_state_db
    from wardian.runtime.archives import ArchiveStore

    store = ArchiveStore(open_state_db())
    manifest = store.get(ref)
    return manifest, store.messages(manifest.id)
