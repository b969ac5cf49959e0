"""Memory consolidation as service functions: load the archive slice, snapshot the agent's
records, commit the curator's batch, or draft it as a maintenance plan (review mode).

These are what the shipped ``memory-consolidation`` blueprint's actions do; the engine calls
them through its action registry (`wardian.app.consolidation_actions` registers the
``archive.load`` / ``memory.*`` wrappers), so nothing below the application layer imports
this module. They need the runtime (archives, agents) and memory, hence this layer.

* `archive_load` — the agent's archive slice after its consolidation cursor (or a
  transcript file for a manual run with ``--archive PATH``): messages, seq range, joined text.
  A run stores it short (`shorten_archive_output`: the seq range, not the messages) and
  reads it back whole (`expand_archive_output`).
* `memory_snapshot` — the agent's active records (id, revision id, kind, scope, text,
  save and revision times, ages; for a review also its flagged records and
  whether each record's evidence is still in its archives, `evidence_in_archives`).
* `commit_curator_batch` — the curator's batch bound to the run's principal, workspace,
  idempotency key and cursor, committed with `wardian.memory.consolidation.commit_batch`.
* `draft_plan` — review mode: the same batch as a schema-v1 maintenance plan file for
  ``wardian garden maintain preview``.

Spec "Optional consolidation"; DESIGN.md "Blueprints, runs, providers" (`memory.commit`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.memory.db import MemoryDB

__all__ = [
    "MAX_SLICE_CHARS",
    "archive_load",
    "bound_slice",
    "build_plan",
    "commit_curator_batch",
    "draft_plan",
    "evidence_in_archives",
    "expand_archive_output",
    "join_messages",
    "memory_snapshot",
    "parse_curator_batch",
    "shorten_archive_output",
]

_TOOL_KINDS = frozenset({"tool_result"})
_USER_SIGNAL_KINDS = frozenset({"tool_rejection", "answer"})
"""Tool-role messages that carry the user's own words (a refusal and its reason, the answer
to the agent's question): the curator reads them even when tool output is left out."""


def _is_tool_output(message: Mapping[str, Any]) -> bool:
    if message.get("kind") in _USER_SIGNAL_KINDS:
        return False
    return message.get("role") == "tool" or message.get("kind") in _TOOL_KINDS


def join_messages(messages: Sequence[Mapping[str, Any]]) -> str:
    """The slice text the evidence check runs against: every message's text, one per line."""
    return "\n".join(str(m.get("text") or "") for m in messages)


# --- archive.load -------------------------------------------------------------------------


def archive_load(
    *,
    state: StateDB,
    memory: MemoryDB,
    agent_id: str,
    agent_name: str | None,
    workspace: str,
    transcript_path: str | None = None,
    upto_seq: int | None = None,
    include_tool_output: bool = False,
) -> dict[str, Any]:
    """Load what the curator should read: the archive slice after the agent's cursor.

    Args:
        state: the open state database the agent's archive is read from.
        memory: the open memory database holding the agent's consolidation cursor.
        agent_id: the run's principal.
        agent_name: its name (shown in the prompt).
        workspace: the run's workspace (absolute); a transcript file's own ``cwd`` wins.
        transcript_path: a transcript file for a manual run (``--archive PATH``); its
            messages are read with `wardian.transcripts.load_transcript` and the cursor
            is not advanced (the file is not the agent's archive).
        upto_seq: the last archive seq of the triggering session (session-close payload),
            so a run consolidates exactly up to its own session; None = to the end.
        include_tool_output: keep tool output messages (default: left out of the slice).

    Returns:
        ``{agent_id, agent_name, workspace, source ("archive"|"file"), path,
        after_seq, first_seq, last_seq, count, skipped_tool_messages, cursor,
        secrets_redacted, include_tool_output, messages, text, cut}`` where ``cursor`` is what
        `memory.commit` advances the cursor to (None = unchanged), ``secrets_redacted``
        counts the secret placeholders in the slice (an archive stores none in clear; a
        transcript file is redacted here), ``text`` joins the messages for the evidence
        check and ``cut`` says what was left for the next run (`bound_slice`; None when
        the whole slice fits `MAX_SLICE_CHARS`).

    Raises:
        NotFoundError / ValidationError: the transcript file is missing or unreadable.
    """
    from wardian.memory.consolidation import get_cursor
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    after = get_cursor(store, agent_id)
    source = "archive"
    path: str | None = None
    raw: list[dict[str, Any]]
    if transcript_path:
        from wardian.runtime.archives import redact_messages
        from wardian.transcripts import load_transcript

        conversation = load_transcript(transcript_path)
        clean, _counts = redact_messages(conversation.messages)
        raw = [m.to_json() for m in clean]
        source, path = "file", str(conversation.source_path or transcript_path)
        # the session's own working directory is the workspace its records belong to, not
        # the directory the command ran in
        # (a cwd from another OS, e.g. a Windows path, cannot name a workspace here)
        if conversation.cwd and os.path.isabs(conversation.cwd):
            workspace = conversation.cwd
    else:
        from wardian.runtime.archives import ArchiveStore

        archives = ArchiveStore(state)
        raw = [m.to_json() for m in archives.slice(agent_id, after, through_seq=upto_seq)]
    messages = raw if include_tool_output else [m for m in raw if not _is_tool_output(m)]
    messages, cut = bound_slice(messages)
    if cut is not None:  # what was not read stays after the cursor for the next run
        raw = [m for m in raw if int(m["seq"]) <= cut["read_through_seq"]]
    last_seq = int(raw[-1]["seq"]) if raw else None
    return {
        "agent_id": agent_id,
        "agent_name": agent_name or agent_id[:8],
        "workspace": workspace,
        "source": source,
        "path": path,
        "after_seq": after if source != "file" else None,
        "first_seq": int(raw[0]["seq"]) if raw else None,
        "last_seq": last_seq,
        "count": len(messages),
        "skipped_tool_messages": len(raw) - len(messages),
        "cursor": last_seq if source == "archive" else None,
        "secrets_redacted": sum(str(m.get("text") or "").count("[REDACTED:") for m in messages),
        "include_tool_output": include_tool_output,
        "messages": messages,
        "text": join_messages(messages),
        "cut": cut,
    }


MAX_SLICE_CHARS = 400_000
"""Most characters of conversation one consolidation run reads (the messages' text, one
line each): well inside the prompt render's cap and a host model's context, beside the
prompt's instructions and the memory snapshot."""

_MIN_SHORTENED_CHARS = 1_000
"""A message is shortened into what is left of the bound only where at least this much
is left; else it waits, whole, for the next run."""


def bound_slice(messages: Sequence[Mapping[str, Any]]
                ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The first messages of `messages` (in seq order) whose text fits `MAX_SLICE_CHARS`,
    and what was cut, or None when all fit.

    Whole messages are kept; the one that does not fit is left, with every later one, for
    the next run (the cursor moves only past what was read), except a message longer than
    the bound on its own: it is shortened to what is left (its head is kept) and counts
    as read, so one message can never stop consolidation.

    Returns:
        (the messages read, ``None`` or ``{bound_chars, read_through_seq, left_messages,
        left_chars, left_first_seq, left_last_seq, shortened_seq, shortened_from_chars}``;
        ``shortened_*`` are None unless a message was shortened, ``left_*_seq`` None when
        nothing is left).
    """
    kept: list[dict[str, Any]] = []
    total = 0
    shortened: tuple[int, int] | None = None
    for m in messages:
        text = str(m.get("text") or "")
        room = MAX_SLICE_CHARS - total - (1 if kept else 0)
        if len(text) <= room:
            kept.append(dict(m))
            total += len(text) + (1 if len(kept) > 1 else 0)
            continue
        if len(text) > MAX_SLICE_CHARS and room >= _MIN_SHORTENED_CHARS:
            note = f" [... {len(text) - room:,} more characters not read]"
            kept.append({**m, "text": text[:room - len(note)] + note})
            shortened = (int(m["seq"]), len(text))
        break
    if len(kept) == len(messages) and shortened is None:
        return [dict(m) for m in messages], None
    if not kept:
        return [], None
    left = list(messages[len(kept):])
    return kept, {
        "bound_chars": MAX_SLICE_CHARS,
        "read_through_seq": int(kept[-1]["seq"]),
        "left_messages": len(left),
        "left_chars": sum(len(str(m.get("text") or "")) for m in left),
        "left_first_seq": int(left[0]["seq"]) if left else None,
        "left_last_seq": int(left[-1]["seq"]) if left else None,
        "shortened_seq": shortened[0] if shortened else None,
        "shortened_from_chars": shortened[1] if shortened else None,
    }


def _messages_digest(messages: Sequence[Mapping[str, Any]]) -> str:
    import hashlib
    import json

    data = json.dumps(list(messages), ensure_ascii=False, sort_keys=True).encode("utf-8")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def shorten_archive_output(output: Mapping[str, Any]) -> dict[str, Any]:
    """`archive_load`'s output as a run stores it (the conversation is stored
    once, in the archive): without ``text`` (it joins the messages) and, for a slice of the
    agent's archive, without ``messages`` either, which ``agent_id``, ``after_seq``,
    ``last_seq`` and ``include_tool_output`` read again; ``messages_digest`` (sha256 of
    their JSON) tells whether they still read the same. A transcript file's messages are
    kept (the file is not ours to keep), and so are the messages of a slice with a
    shortened message (the archive holds it whole). `expand_archive_output` undoes it."""
    short = {k: v for k, v in output.items() if k != "text"}
    messages = short.get("messages")
    cut = short.get("cut")
    shortened = isinstance(cut, Mapping) and cut.get("shortened_seq") is not None
    if short.get("source") == "archive" and isinstance(messages, list) and not shortened:
        del short["messages"]
        short["messages_digest"] = _messages_digest(messages)
    return short


def expand_archive_output(stored: Any) -> Any:
    """`archive_load`'s output as it returned it, from what a run stored (its short form,
    `shorten_archive_output`, or the whole output, returned as it is).

    Messages the archive no longer holds as loaded (their digest differs, or the archive
    cannot be read) read as a note ``<missing: …>`` in place of ``messages`` and ``text``,
    never as an error. Read-only.
    """
    if not isinstance(stored, Mapping):
        return stored
    out = dict(stored)
    digest = out.pop("messages_digest", None)
    if "messages" not in out:
        out["messages"] = _read_archive_slice(out, digest)
    if "text" not in out:
        messages = out["messages"]
        out["text"] = join_messages(messages) if isinstance(messages, list) else messages
    return out


def _read_archive_slice(out: Mapping[str, Any], digest: Any) -> list[dict[str, Any]] | str:
    """The messages a short `archive.load` output names, or a ``<missing: …>`` note."""
    agent_id, first, last = out.get("agent_id"), out.get("first_seq"), out.get("last_seq")
    where = f"messages {first}..{last} of agent {str(agent_id)[:8]}'s archive"
    if last is None:
        messages: list[dict[str, Any]] = []
    else:
        from wardian.config import open_state_db
        from wardian.runtime.archives import ArchiveStore

        try:
            archives = ArchiveStore(open_state_db())
            raw = [m.to_json() for m in archives.slice(
                str(agent_id), out.get("after_seq"), through_seq=int(last))]
        except Exception as exc:  # a reader shows the note; a resumed run fails on it
            return f"<missing: {where} ({type(exc).__name__}: {exc})>"
        messages = (raw if out.get("include_tool_output")
                    else [m for m in raw if not _is_tool_output(m)])
    if digest is not None and _messages_digest(messages) != digest:
        return f"<missing: {where} no longer read as they were loaded>"
    return messages


# --- memory.snapshot ----------------------------------------------------------------------


def memory_snapshot(*, state: StateDB, memory: MemoryDB, agent_id: str, workspace: str | None,
                    include_flagged: bool = False, check_evidence: bool = False
                    ) -> dict[str, Any]:
    """The agent's active records the curator may update or remove. Read-only.

    Args:
        state: the open state database (archives for `check_evidence`, settings).
        memory: the open memory database the records are read from.
        agent_id: the run's principal.
        workspace: when given, agent-scoped records plus this workspace's records (what the
            agent recalls there); None = all of its active records.
        include_flagged: also list the records set aside as holding a secret (only with
            `workspace` None), with ``flagged`` (the reason) and their text withheld
            (``text`` reads ``<withheld: flagged record>``): no reviewer or model
            ever reads a secret (the evidence is never listed).
        check_evidence: add ``evidence_in_archive`` to each record: whether its evidence
            excerpt still occurs in one message of the agent's conversation archives
            (`evidence_in_archives`; None for a flagged record).

    Returns:
        ``{"agent_id", "workspace", "count"[, "current_review_days", "taken_at"],
        "records": [{id, revision_id, kind, scope, text, created_at, updated_at,
        age_days, updated_days, flagged[, evidence_in_archive]}]}`` ordered like the
        startup set (stable first, agent scope first; flagged records last).
        ``created_at``/``updated_at`` are the record's first save and last revision
        (ISO-8601 UTC), ``age_days`` and ``updated_days`` the whole days from each to
        the snapshot's time; for the whole memory (`workspace` None) that time is
        ``taken_at`` and ``current_review_days`` is the setting
        ``memory.current_review_days``.
    """
    from wardian._util import format_utc, utc_now
    from wardian.config import SettingsStore
    from wardian.memory.recall import age_days
    from wardian.memory.store import MemoryStore

    now = utc_now()
    store = MemoryStore(memory)
    # Records set aside as holding a secret never go to a curator (startup_set skips
    # them too).
    records = (
        store.startup_set(agent_id, workspace) if workspace
        else store.list(agent_id, flagged=False, with_sources=False)
    )
    flagged = (store.list(agent_id, flagged=True, with_sources=False)
               if include_flagged and not workspace else [])
    out = [
        {
            "id": r.id,
            "revision_id": r.current_revision_id,
            "kind": r.kind,
            "scope": r.scope.to_json(),
            "text": r.text if not r.flagged else _WITHHELD,
            "created_at": r.created_at,
            "updated_at": r.updated_at,
            "age_days": age_days(r.created_at, now),
            "updated_days": age_days(r.updated_at, now),
            "flagged": r.flagged,
        }
        for r in [*records, *flagged]
    ]
    if check_evidence:
        found = evidence_in_archives(state, agent_id, [r.evidence for r in records])
        for item, present in zip(out, [*found, *([None] * len(flagged))], strict=True):
            item["evidence_in_archive"] = present
    doc: dict[str, Any] = {"agent_id": agent_id, "workspace": workspace, "count": len(out)}
    if workspace is None:  # the whole memory: a review reads these
        settings = SettingsStore(state)
        doc["current_review_days"] = int(settings.get("memory.current_review_days"))
        doc["taken_at"] = format_utc(now)
    doc["records"] = out
    return doc


_WITHHELD = "<withheld: flagged record>"
"""What a snapshot shows in place of a flagged record's text."""


def evidence_in_archives(state: StateDB, agent_id: str, excerpts: Sequence[str]
                         ) -> list[bool | None]:
    """For each excerpt, whether it occurs in one message of the agent's archives in
    `state` (every conversation archived for it); all None when nothing is archived for
    the agent (then nothing can be checked). Read-only.

    Each excerpt is looked for only in the messages holding its rarest whole word (the
    words inside the excerpt; the first and last may be cut mid-word), so a large memory
    against a large archive stays a few dictionary lookups per record; an excerpt with no
    whole word is looked for in every message.
    """
    import re

    from wardian.runtime.archives import ArchiveStore

    archives = ArchiveStore(state)
    texts = archives.texts(agent_id)
    if not texts:
        return [None] * len(excerpts)
    word = re.compile(r"\w+")
    inner = [word.findall(e.casefold())[1:-1] if e else [] for e in excerpts]
    needed = {w for words in inner for w in words}
    postings: dict[str, list[int]] = {}
    for index, text in enumerate(texts):
        for w in needed.intersection(word.findall(text.casefold())):
            postings.setdefault(w, []).append(index)
    every = range(len(texts))
    out: list[bool | None] = []
    for excerpt, words in zip(excerpts, inner, strict=True):
        if not excerpt:
            out.append(False)
            continue
        lists = [postings.get(w, []) for w in words]
        candidates = min(lists, key=len) if lists else every
        out.append(any(excerpt in texts[i] for i in candidates))
    return out


# --- memory.commit ------------------------------------------------------------------------


def parse_curator_batch(value: Any) -> list[dict[str, Any]]:
    """The validated operations of a curator answer (dict, JSON text, None = a skipped
    curator) — review mode's one check of the batch (`memory.draft_plan`).

    Raises:
        ValidationError: the answer is not ``{"operations": [...]}`` of valid operations.
    """
    from wardian.memory.batch import check_curator_operations

    return [op.model_dump(mode="json") for op in check_curator_operations(value).operations]


def commit_curator_batch(
    *,
    memory: MemoryDB,
    run_id: str,
    agent_id: str,
    workspace: str,
    operations: Sequence[Any],
    archive: Mapping[str, Any],
    idempotency_key: str | None,
    max_changes: int | None = None,
) -> dict[str, Any]:
    """Bind the curator's operations to the run's principal and commit them (atomic,
    idempotent).

    The operations are passed on as given: `commit_batch` validates the whole batch once
    (`wardian.memory.batch.check_commit_batch`); the engine checked the curator's answer
    once before, when it accepted the provider's result.

    Args:
        memory: the open memory database the batch is committed to.
        run_id: the run; the actor is ``run:<run id>``; the key defaults to it.
        agent_id: the run's principal (the batch's agent_id is always this).
        workspace: absolute path for workspace-scoped saves.
        operations: the curator's operations (`wardian.memory.batch.curator_operations`
            of its answer, or `parse_curator_batch`).
        archive: the ``archive.load`` output (its ``text`` is what evidence must occur in,
            its ``cursor`` where the consolidation cursor moves).
        idempotency_key: from the invocation (session-close); None → ``run:<run id>``.
        max_changes: operations past this many are dropped.

    Returns:
        `CommitResult.to_json()` plus ``summary`` (one line).

    Raises:
        AuthorityError, ConflictError, ValidationError: see `commit_batch`.
    """
    from wardian.memory.consolidation import commit_batch
    from wardian.memory.models import Source
    from wardian.memory.store import MemoryStore

    batch = {
        "agent_id": agent_id,
        "workspace": workspace,
        "idempotency_key": idempotency_key or f"run:{run_id}",
        "cursor": archive.get("cursor"),
        "operations": operations,
    }
    sources = [Source("run", f"run:{run_id}")]
    if archive.get("first_seq") is not None and archive.get("source") == "archive":
        sources.append(
            Source("archive", f"archive:{agent_id}:{archive['first_seq']}-{archive['last_seq']}")
        )
    elif archive.get("path"):
        sources.append(Source("transcript", str(archive["path"])))
    archive_text, by_seq = _evidence_of(archive)
    store = MemoryStore(memory)
    result = commit_batch(
        store, batch, principal_agent_id=agent_id, actor=f"run:{run_id}",
        archive_text=archive_text, archive_messages=by_seq, sources=sources,
        max_changes=max_changes,
    )
    out = result.to_json()
    out["summary"] = result.summary()
    why = _nothing_saved_reason(out, operations, archive)
    if why:
        out["summary"] += f" · {why}"
    return out


def _nothing_saved_reason(result: Mapping[str, Any], operations: Sequence[Any],
                          archive: Mapping[str, Any]) -> str | None:
    """Why a commit changed no record, in words, or None when it changed some.

    Args:
        result: the commit's `CommitResult.to_json()`.
        operations: the curator's operations.
        archive: the ``archive.load`` output (``count`` = messages read).

    Returns:
        e.g. ``nothing to keep: no durable signal (…) in the 21 messages read`` (the curator
        proposed nothing);
        ``every proposed operation was dropped (see dropped)``; ``no new messages since the
        last consolidation``; None when something was saved, updated or removed, or the
        batch was a replay.
    """
    if result.get("applied") or result.get("replayed"):
        return None
    count = archive.get("count")
    if not operations:
        if not count:
            return "nothing to read: no new messages since the last consolidation"
        noun = "message" if count == 1 else "messages"
        return (f"nothing to keep: no durable signal (preference, convention, decision, "
                f"correction, lesson, checkpoint) in the {count} {noun} read")
    return "nothing saved: every proposed operation was dropped (see `dropped`)"


# --- memory.draft_plan --------------------------------------------------------------------


def build_plan(
    *,
    memory: MemoryDB,
    run_id: str,
    agent_id: str,
    workspace: str,
    operations: Sequence[Any],
    archive: Mapping[str, Any],
    idempotency_key: str | None,
    max_changes: int | None = None,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Turn curator operations into a schema-v1 maintenance plan (review mode). Read-only.

    save → ``create`` (client_key ``save-<index>``), update → ``revise`` with the record's
    current revision as ``expected_revision_id``, remove → ``retire``. An operation a
    commit would drop is dropped, by the same rules
    (`wardian.memory.consolidation.check_operations`: evidence in the slice not yet
    consolidated, no secret, no duplicate, the agent's active records, at most
    `max_changes`); besides, a plan holds one create per text and one operation per
    record (``duplicate``, ``duplicate_target``).

    Args:
        memory: the open memory database the operations are checked against.
        operations: the curator's operations as given (`curator_operations` of its
            answer); checked here, once (`check_curator_operations`).
        archive: the ``archive.load`` output, as `commit_curator_batch` takes it.

    Returns:
        (the plan as a dict, or None when no operation survives; the dropped operations
        ``[{index, op, code, reason, memory_id}]``).

    Raises:
        ValidationError: `operations` are not valid curator operations.
    """
    from wardian.memory.batch import SaveOp, UpdateOp, check_curator_operations
    from wardian.memory.consolidation import (
        check_operations,
        evidence_slice,
        normalise_whitespace,
    )
    from wardian.memory.store import MemoryStore

    ops = check_curator_operations({"operations": list(operations)}).operations
    archive_text, by_seq = _evidence_of(archive)
    planned: set[tuple[str, str]] = set()  # (scope, text) of the creates so far
    targets: set[str] = set()
    plan_ops: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    run_source = {"source_type": "run", "locator": f"run:{run_id}", "primary": False}
    store = MemoryStore(memory)
    evidence = evidence_slice(store, agent_id, archive_text=archive_text,
                              archive_messages=by_seq)
    for checked in check_operations(store, ops, agent_id=agent_id, workspace=workspace,
                                    evidence=evidence, max_changes=max_changes):
        op, index = checked.op, checked.index
        if checked.dropped is not None:
            dropped.append(checked.dropped.to_json())
            continue
        if isinstance(op, SaveOp):
            assert checked.scope is not None
            key = (checked.scope.kind, normalise_whitespace(op.text).casefold())
            if key in planned:
                dropped.append({"index": index, "op": op.op, "code": "duplicate",
                                "reason": "the same text is already remembered as an "
                                          "earlier create of this plan",
                                "memory_id": None})
                continue
            planned.add(key)
            plan_ops.append({
                "op": "create", "client_key": f"save-{index}", "text": op.text,
                "kind": op.kind, "scope": checked.scope.to_json(),
                "evidence_excerpt": op.evidence, "sources": [run_source],
            })
            continue
        assert checked.memory_id is not None
        if checked.memory_id in targets:
            dropped.append({"index": index, "op": op.op, "code": "duplicate_target",
                            "reason": f"memory {checked.memory_id[:8]} is already in "
                                      "this plan", "memory_id": checked.memory_id})
            continue
        targets.add(checked.memory_id)
        record = store.get(checked.memory_id)
        if isinstance(op, UpdateOp):
            assert checked.scope is not None
            plan_ops.append({
                "op": "revise", "memory_id": record.id,
                "expected_revision_id": record.current_revision_id, "text": op.text,
                "kind": op.kind, "scope": checked.scope.to_json(),
                "evidence_excerpt": op.evidence, "add_sources": [run_source],
            })
        else:
            plan_ops.append({
                "op": "retire", "memory_id": record.id,
                "expected_revision_id": record.current_revision_id,
                "reason": op.reason,
            })
    if not plan_ops:
        return None, dropped
    plan = {
        "schema_version": 1,
        "plan_id": f"consolidation-{run_id}",
        "agent_id": agent_id,
        "idempotency_key": idempotency_key or f"run:{run_id}",
        "operations": plan_ops,
    }
    return plan, dropped


def _evidence_of(archive: Mapping[str, Any]) -> tuple[str | None, list[tuple[int, str]] | None]:
    """What the curator's evidence is checked against, from the ``archive.load`` output:
    ``(None, (seq, text) pairs)`` for a slice of the agent's archive (checked at the
    cursor as it is when checked), else ``(its text, None)``."""
    messages = archive.get("messages")
    if archive.get("source") == "archive" and isinstance(messages, list):
        return None, [(int(m["seq"]), str(m.get("text") or "")) for m in messages]
    return str(archive.get("text") or ""), None


def draft_plan(
    *,
    memory: MemoryDB,
    run_id: str,
    agent_id: str,
    workspace: str,
    operations: Sequence[Any],
    archive: Mapping[str, Any],
    idempotency_key: str | None,
    max_changes: int | None = None,
) -> dict[str, Any]:
    """Write the review-mode plan to ``data_dir()/plans/<run id>.json`` (nothing committed),
    its operations checked against `memory` (`build_plan`).

    Returns:
        ``{"path" (or None when nothing to review), "operations", "dropped", "plan_id",
        "agent_id", "next"}`` where ``next`` is the command an operator runs.

    Raises:
        ValidationError: the plan failed the maintenance plan model (a bug; reported).
    """
    from wardian.config import data_dir

    plan, dropped = build_plan(
        memory=memory, run_id=run_id, agent_id=agent_id, workspace=workspace, operations=operations,
        archive=archive, idempotency_key=idempotency_key, max_changes=max_changes,
    )
    if plan is None:
        return {"path": None, "operations": 0, "dropped": dropped, "plan_id": None,
                "agent_id": agent_id, "next": None}
    from wardian.app.plan_file import plan_bytes, write_plan

    _validate_plan(plan_bytes(plan))
    path = write_plan(plan, data_dir() / "plans" / f"{run_id}.json")
    return {
        "path": str(path), "operations": len(plan["operations"]), "dropped": dropped,
        "plan_id": plan["plan_id"], "agent_id": agent_id,
        "next": f"wardian garden maintain preview {path} --agent {agent_id}",
    }


def _validate_plan(data: bytes) -> None:
    """Check the drafted plan with the maintenance loader (what `garden maintain` reads)."""
    from wardian.memory.maintenance.plan import load_plan_bytes

    load_plan_bytes(data, source="memory.draft_plan")
