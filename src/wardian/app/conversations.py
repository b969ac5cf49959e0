"""Imported conversation archives as the operator reads them (``wardian conversation
list|show``; CLI.md "conversation"). Read-only; operator only (the caller checks
`wardian.app.operator.require_operator` first: an agent must not read another agent's
conversations).

`ConversationManifest` and `Message` are re-exported for the surfaces' rendering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wardian.runtime.archives import ConversationManifest
from wardian.transcripts import Message

if TYPE_CHECKING:
    from wardian._db import StateDB

__all__ = ["ConversationManifest", "Message", "agent_names", "conversation",
           "list_conversations"]


def list_conversations(state: StateDB, *, agent: str | None = None,
                       limit: int = 200) -> list[ConversationManifest]:
    """The conversations imported into `state`, newest first, of every agent or of `agent`
    (name or id).

    Raises:
        NotFoundError: unknown agent.
    """
    from wardian.runtime.agents import AgentRegistry
    from wardian.runtime.archives import ArchiveStore

    agent_id = AgentRegistry(state).get(agent).id if agent else None
    return ArchiveStore(state).list(agent_id=agent_id, limit=limit)


def agent_names(state: StateDB) -> dict[str, str]:
    """Agent id -> name in `state`, for showing whose a conversation is."""
    from wardian.runtime.agents import AgentRegistry

    return {a.id: a.name for a in AgentRegistry(state).list()}


def conversation(state: StateDB, ref: str) -> tuple[ConversationManifest, list[Message]]:
    """One conversation in `state` (id or unique prefix): its manifest and normalised
    messages.

    Raises:
        NotFoundError; AmbiguousIdError.
    """
    from wardian.runtime.archives import ArchiveStore

    store = ArchiveStore(state)
    manifest = store.get(ref)
    return manifest, store.messages(manifest.id)
