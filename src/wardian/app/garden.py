"""The operator's Garden read models and invoker switches, for every operator surface.

Garden in the browser (`wardian garden serve`) and the `wardian garden …` commands show the
same things: agents with their memory state, one agent's records (paged and filtered), a
record's history, ``Memory loaded`` events, runs, and invokers. Each function here takes
the open databases it reads (``state.db`` as `StateDB`, ``memory.db`` as `MemoryDB`, first,
from the surface's unit of work), builds the stores it needs over them, and returns plain
documents (dicts and dataclasses), so a surface only renders.

Garden's record page corrects one record through the same one-operation plans as
``garden memory retire|revise`` (`retire_from_form`, `revise_from_form`, and
`merge_from_form` for ``retire_into``): each checks the form's fields (a `FormError`
names the bad one) and the revision the page showed (`StaleRevision`), and returns the
validated plan for the surface to preview, confirm and apply like any plan.
`review_queue` gathers what waits for the operator per agent.

Operator only: callers check `require_operator` before serving any of this (the data spans
every agent). Spec: "Save and inspect memory" (cross-agent inspection is the operator's),
"What appears in chat" (Memory loaded), "Operator maintenance in Garden", "Optional
consolidation" (invokers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wardian.errors import (
    AmbiguousIdError,
    ConflictError,
    NotFoundError,
    UsageError,
    ValidationError,
)

if TYPE_CHECKING:
    from wardian._db import StateDB
    from wardian.app.runs import Run
    from wardian.memory.capabilities import Refusal
    from wardian.memory.db import MemoryDB
    from wardian.memory.freshness import StaleRecord
    from wardian.memory.loaded import LoadedEvent
    from wardian.memory.maintenance.plan import Plan
    from wardian.memory.models import Record, Revision
    from wardian.memory.store import MemoryStore

__all__ = [
    "KINDS",
    "PAGE_SIZE",
    "AgentQueue",
    "AgentSummary",
    "FormError",
    "LoadedEvent",
    "MemoryPage",
    "RecallView",
    "Record",
    "RecordPlan",
    "Refusal",
    "Revision",
    "StaleCheckpoints",
    "StaleRecord",
    "StaleRevision",
    "agent_records",
    "agents_overview",
    "capability_refusals",
    "find_record",
    "invokers_overview",
    "loaded_events",
    "memory_page",
    "merge_candidates",
    "merge_from_form",
    "pending_reviews",
    "recall_view",
    "record_history",
    "record_marks",
    "redacted_json",
    "resolve_owner",
    "retire_from_form",
    "review_queue",
    "revise_from_form",
    "run_detail",
    "runs_overview",
    "saved_ago",
    "set_invoker_enabled",
    "stale_checkpoints",
]

PAGE_SIZE = 50
"""Records per page of an agent's memory list."""

_MAX_PAGE = 2**40
"""The largest page number asked of the store (its offset fits SQLite's integers)."""


def resolve_owner(state: StateDB, memory: MemoryDB, ref: str, *, allow_removed: bool = True
                  ) -> tuple[str, str]:
    """(agent id, display name) for an agent name, id or unique id prefix, looked up in
    `state` (the registry) and, for kept records, `memory`.

    With `allow_removed`, the owner id (or prefix) of records kept by
    ``agent remove --keep-records`` also resolves, named ``(removed agent)``.

    Raises:
        NotFoundError: no agent (and no kept records) match.
        AmbiguousIdError: several do.
    """
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    try:
        found = registry.get(ref)
    except NotFoundError:
        if not allow_removed:
            raise
        store = MemoryStore(memory)
        return store.owner(ref), "(removed agent)"
    return found.id, found.name


def record_marks(record: Record) -> list[str]:
    """Hygiene marks to show beside a record: ``flagged: <why>`` while it is set aside
    (it holds what looks like a secret, so recall leaves it out). Pure.

    This is the one place a surface asks, so a new mark needs no change to the pages.
    """
    return [f"flagged: {record.flagged}"] if record.flagged else []


@dataclass(frozen=True)
class AgentSummary:
    """One row of the agents page."""

    id: str
    name: str
    provider: str
    workspace: str | None
    memory_enabled: bool
    active_records: int
    records: int
    last_loaded: dict[str, Any] | None
    invokers: list[dict[str, Any]] = field(default_factory=list)


def invokers_overview(state: StateDB, *, agent_id: str | None = None) -> list[dict[str, Any]]:
    """Every invoker (or one agent's): its JSON, agent name, ``state`` (enabled, disabled
    or broken), ``problem`` (why it is broken and the fix, or None; the same answer as
    `automation … list` and firing, `wardian.invokers.health`) and last run. Read-only."""
    from wardian.engine.runs import RunStore
    from wardian.invokers.health import invoker_problem
    from wardian.invokers.store import InvokerStore
    from wardian.runtime.agents import AgentRegistry

    store = InvokerStore(state)
    registry = AgentRegistry(state)
    runs = RunStore(state, recover=False)
    names = {a.id: a.name for a in registry.list()}
    docs = []
    for invoker in store.list(agent_id=agent_id):
        doc = invoker.to_json()
        problem = invoker_problem(invoker, state=state)
        doc["agent_name"] = names.get(invoker.agent_id)
        doc["problem"] = (
            {"reason": problem.reason, "fix": problem.fix} if problem else None)
        doc["state"] = ("broken" if problem else
                        "enabled" if invoker.enabled else "disabled")
        last = runs.list(invoker_id=invoker.id, limit=1)
        doc["last_run"] = (
            {"id": last[0].id, "status": last[0].status, "created_at": last[0].created_at}
            if last else None
        )
        docs.append(doc)
    return docs


def set_invoker_enabled(state: StateDB, invoker_id: str, enabled: bool) -> dict[str, Any]:
    """Enable (re-validating first, as the CLI does) or disable an invoker by full id, in
    `state`.

    Returns:
        The invoker's JSON after the change.

    Raises:
        NotFoundError: no such invoker. Validation errors when enabling a broken one (it
            stays disabled).
    """
    from wardian.invokers.store import InvokerStore

    store = InvokerStore(state)
    kind = store.get(invoker_id).kind
    if kind == "schedule":
        from wardian.app.schedules import set_schedule_enabled

        return set_schedule_enabled(state, invoker_id, enabled).to_json()
    from wardian.app.session_close import set_enabled

    return set_enabled(state, invoker_id, enabled).to_json()


def agents_overview(state: StateDB, memory: MemoryDB) -> list[AgentSummary]:
    """Every registered agent with memory on/off, record counts, the last ``Memory
    loaded`` event (without its context) and its invokers. Read-only."""
    from wardian.config import SettingsStore
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    settings = SettingsStore(state)
    store = MemoryStore(memory)
    agents = registry.list()
    invokers: dict[str, list[dict[str, Any]]] = {}
    for doc in invokers_overview(state):
        invokers.setdefault(doc["agent_id"], []).append(doc)
    out = []
    for agent in agents:
        events = LoadedEvents(store.conn).list(agent.id, limit=1)
        last = None
        if events:
            last = events[0].to_json()
            last.pop("context")
        out.append(AgentSummary(
            id=agent.id, name=agent.name, provider=agent.provider,
            workspace=agent.workspace,
            memory_enabled=bool(settings.get("agent_memory.enabled", agent_id=agent.id)),
            active_records=store.count(agent.id, include_removed=False),
            records=store.count(agent.id), last_loaded=last,
            invokers=invokers.get(agent.id, []),
        ))
    return out


@dataclass(frozen=True)
class MemoryPage:
    """One page of an agent's records with the filters that chose it."""

    records: list[Record]
    total: int
    page: int
    pages: int
    filters: dict[str, str]


def memory_page(
    memory: MemoryDB,
    owner_id: str,
    *,
    kind: str = "",
    scope: str = "",
    status: str = "active",
    text: str = "",
    page: int = 1,
    page_size: int = PAGE_SIZE,
) -> MemoryPage:
    """One page (1-based) of the owner's records, filtered by kind, scope kind, status
    (``active``, ``removed`` or ``all``) and a text substring. Read-only. A `page` below 1
    shows the first page, one past the last shows the last (`MemoryPage.page` says which).

    Raises:
        UsageError: an unknown kind, scope or status.
    """
    from wardian.memory.store import MemoryStore

    # A page number comes from a URL a person can edit: past the last page shows the last
    # one, and no number may overflow SQLite's 64-bit OFFSET.
    page = min(max(1, page), _MAX_PAGE)
    store = MemoryStore(memory)

    def fetch(number: int) -> tuple[list[Record], int]:
        return store.page(
            owner_id, kind=kind or None, scope_kind=scope or None,
            status=None if status == "all" else (status or "active"), text=text or None,
            limit=page_size, offset=(number - 1) * page_size,
        )

    records, total = fetch(page)
    pages = max(1, -(-total // page_size))
    if page > pages:
        page = pages
        records, total = fetch(page)
        pages = max(1, -(-total // page_size))
    return MemoryPage(records, total, page, pages,
                      {"kind": kind, "scope": scope, "status": status or "active", "q": text})


@dataclass(frozen=True)
class RecallView:
    """What the agent would get from recall for one query, as Garden shows it.

    Attributes:
        query: the query as asked ("" = none yet: the form only).
        workspace: the workspace recalled from ("" = every workspace).
        workspaces: the workspaces the owner's active records name, for the form.
        matches: the records that fit, best first (what ``memory recall`` returns).
        nearest: when nothing fits, the records that came nearest below the relevance
            floor, to be shown as such, never as matches; empty otherwise.
    """

    query: str
    workspace: str
    workspaces: list[str]
    matches: list[Record]
    nearest: list[Record]


RECALL_QUERY_CHARS = 2000
"""The longest query Garden's recall form accepts (characters)."""


def recall_view(memory: MemoryDB, owner_id: str, *, query: str = "", workspace: str = "",
                limit: int = 10) -> RecallView:
    """Recall `query` for the owner as its managed process would from `workspace`
    (agent-scoped records plus that workspace's; "" = all of its records), with the
    nearest records below the floor when nothing fits (`RecallIndex.recall_with_nearest`).
    Read-only. Spec: "Save and inspect memory" (recall).

    Raises:
        FormError: the query is longer than `RECALL_QUERY_CHARS`, or `workspace` is
            not one of the owner's workspaces.
    """
    from wardian.memory.ranking import NEAREST
    from wardian.memory.store import MemoryStore

    query = " ".join(query.split())
    if len(query) > RECALL_QUERY_CHARS:
        raise FormError("q", f"the query is {len(query)} characters, over the "
                         f"{RECALL_QUERY_CHARS}-character limit", hint="ask a shorter question")
    store = MemoryStore(memory)
    workspaces = store.workspaces(owner_id)
    if workspace and workspace not in workspaces:
        raise FormError("workspace", f"{workspace!r} is not a workspace of this agent's"
                         " records", hint="pick one from the list")
    if not query:
        return RecallView("", workspace, workspaces, [], [])
    found = store.index.recall_with_nearest(owner_id, query, limit=limit,
                                            workspace=workspace or None, nearest=NEAREST)
    return RecallView(query, workspace, workspaces, list(found.records), list(found.nearest))


def loaded_events(memory: MemoryDB, owner_id: str, *, limit: int = 50) -> list[LoadedEvent]:
    """The owner's newest ``Memory loaded`` events with the exact context. Read-only."""
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return LoadedEvents(store.conn).list(owner_id, limit=limit)


def runs_overview(state: StateDB, *, status: str | None = None, limit: int = 100
                  ) -> list[Run]:
    """The newest runs, optionally of one status: `wardian.app.runs.list_runs` without
    orphan recovery (Garden only reads).

    Raises:
        UsageError: an unknown status.
    """
    from wardian.app.runs import list_runs

    return list_runs(state, status=status or None, limit=limit, recover=False)


def run_detail(state: StateDB, run_id: str) -> Run:
    """One run with its step attempts and events: `wardian.app.runs.get_run` without
    orphan recovery (Garden only reads).

    Raises:
        NotFoundError / AmbiguousIdError.
    """
    from wardian.app.runs import get_run

    return get_run(state, run_id, recover=False)


# --- the ``wardian garden memory …`` reads ------------------------------------------------

_LIST_HINT = "list an agent's records with `wardian garden memory list --agent NAME`"


def agent_records(memory: MemoryDB, owner_id: str, *, include_removed: bool = False,
                  flagged: bool = False) -> list[Record]:
    """The owner's records, newest first; with `flagged`, only those set aside for review
    (they hold what looks like a secret). Read-only."""
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return store.list(owner_id, include_removed=include_removed,
                      flagged=True if flagged else None)


def redacted_json(record: Record) -> dict[str, Any]:
    """The record's JSON with secrets in text, evidence and source locators replaced by a
    placeholder (how ``garden memory list --flagged`` shows a set-aside record). Pure."""
    from wardian.memory.secret_scan import redact

    doc = record.to_json()
    doc["text"] = redact(record.text)[0]
    doc["evidence"] = redact(record.evidence)[0]
    for source in doc["sources"]:
        source["locator"] = redact(source["locator"])[0]
    return doc


def _operator_get(store: MemoryStore, record_id: str) -> Record:
    # The store's hint is the agent's (`memory list`, its own records); the operator looks
    # across agents, so the hint names the operator's list command.
    try:
        return store.get(record_id, agent_id=None)
    except AmbiguousIdError:
        raise
    except NotFoundError as exc:
        raise NotFoundError(exc.message, hint=_LIST_HINT) from exc
    except UsageError as exc:  # an empty id
        raise UsageError(exc.message, hint=_LIST_HINT) from exc


def find_record(memory: MemoryDB, record_id: str) -> Record:
    """Any agent's record by full id or unique prefix, also when removed. Read-only.

    Raises:
        NotFoundError (exit 1): no record has this id or prefix (the hint names
            ``garden memory list``).
        AmbiguousIdError (exit 2): several do (their ids are listed).
    """
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return _operator_get(store, record_id)


def record_history(memory: MemoryDB, record_id: str) -> tuple[Record, list[Revision]]:
    """Any agent's record (as `find_record`) and every revision of it, oldest first.

    Raises:
        NotFoundError / AmbiguousIdError: as `find_record`.
    """
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    record = _operator_get(store, record_id)
    return record, store.history(record.id, agent_id=None)


def capability_refusals(memory: MemoryDB, owner_id: str) -> list[Refusal]:
    """Refused uses of a capability outside its own launch's process tree where the owner
    held it or made the attempt, newest first. Read-only."""
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    return CapabilityStore(store.conn).refusals(owner_id)


@dataclass(frozen=True)
class StaleCheckpoints:
    """The owner's stale ``current`` records and the review age that made them stale."""

    review_days: int
    records: list[StaleRecord]


def stale_checkpoints(state: StateDB, memory: MemoryDB, owner_id: str) -> StaleCheckpoints:
    """The owner's active ``current`` records not updated for ``memory.current_review_days``
    days, oldest first. Read-only."""
    from wardian.config import SettingsStore
    from wardian.memory.freshness import stale_records
    from wardian.memory.store import MemoryStore

    settings = SettingsStore(state)
    days = int(settings.get("memory.current_review_days"))
    store = MemoryStore(memory)
    return StaleCheckpoints(days, stale_records(store, owner_id, review_days=days))


def saved_ago(days: int) -> str:
    """``saved today`` / ``saved 3 days ago``: a record's age as the startup context says it."""
    from wardian.memory.recall import saved_ago as phrase

    return phrase(days)


# --- one-record corrections from Garden's record page -------------------------------------
# Each builds a one-operation maintenance plan with the same functions as ``garden memory
# retire|revise``; the surface previews, confirms and applies it like any plan file.

KINDS = ("stable", "current")
"""The record kinds a revise may set."""


class FormError(ValidationError):
    """A field of a Garden form is wrong (exit 2): `field` names it, the message says
    what was given and what is expected."""

    def __init__(self, field_name: str, message: str, *, hint: str | None = None) -> None:
        self.field = field_name
        super().__init__(message, path=field_name, hint=hint)


class StaleRevision(ConflictError):
    """The record changed after the page showing it was loaded (exit 4); the field
    ``revision`` carried the revision the operator saw."""

    def __init__(self, short_id: str, shown: str, current: str) -> None:
        self.field = "revision"
        super().__init__(
            f"revision: memory {short_id} changed after this page was shown (the page "
            f"showed revision {shown[:8]}, it is now at {current[:8]}); nothing was changed",
            hint="reload the record page, check its history and try again",
        )


@dataclass(frozen=True)
class RecordPlan:
    """A one-operation plan for one record, ready for preview: the owner it binds to, the
    record's full id, the validated plan and its JSON document."""

    owner_id: str
    record_id: str
    plan: Plan
    document: dict[str, Any]


def _subject(memory: MemoryDB, record_id: str, revision: str) -> Record:
    """The active record the form names, still at the revision the page showed."""
    record = find_record(memory, record_id)
    if record.status != "active":
        raise FormError("record", f"memory {record.short_id} is already removed; only an "
                        "active record can be retired, revised or merged",
                        hint="its history stays on the record page")
    if not revision.strip():
        raise FormError("revision", "the form carries no revision",
                        hint="reload the record page and submit its form again")
    if revision != record.current_revision_id:
        raise StaleRevision(record.short_id, revision, record.current_revision_id)
    return record


def _bound(record: Record, revision: str, built: tuple[Plan, dict[str, Any]]) -> RecordPlan:
    plan, document = built
    bound = document["operations"][0]["expected_revision_id"]
    if bound != revision:  # it changed between the check and building the plan
        raise StaleRevision(record.short_id, revision, bound)
    return RecordPlan(record.agent_id, record.id, plan, document)


def retire_from_form(memory: MemoryDB, record_id: str, *, revision: str, reason: str) -> RecordPlan:
    """The ``retire`` plan of the record page's Retire form (``garden memory retire``'s
    `retire_record_plan`). Reads ``memory.db`` only.

    Raises:
        NotFoundError / AmbiguousIdError: no such record.
        FormError: removed (``record``), no revision, an empty ``reason``.
        StaleRevision: the record is no longer at `revision`.
        SecretDetected: the reason holds a secret.
    """
    from wardian.app.maintenance import retire_record_plan

    record = _subject(memory, record_id, revision)
    if not reason.strip():
        raise FormError("reason", "the reason is empty",
                        hint="say why the record is retired; it is kept in its history")
    return _bound(record, revision,
                  retire_record_plan(memory, record.agent_id, record.id,
                                     reason=reason.strip()))


def revise_from_form(
    memory: MemoryDB, record_id: str, *, revision: str, text: str, kind: str, scope: str,
    workspace_path: str = "",
) -> RecordPlan:
    """The ``revise`` plan of the record page's Revise form (``garden memory revise``'s
    `revise_record_plan`): only the fields that differ from the record are changed.

    Args:
        text: the whole new text (the form shows the current one).
        kind: ``stable`` or ``current``.
        scope: ``agent`` or ``workspace``; a workspace scope takes `workspace_path`, an
            absolute path.

    Raises:
        NotFoundError / AmbiguousIdError: no such record.
        FormError: removed, empty ``text``, unknown ``kind`` or ``scope``, a relative
            ``workspace_path``, or nothing changed.
        StaleRevision: the record is no longer at `revision`.
        SecretDetected / PlanError: as ``garden memory revise``.
    """
    import os.path

    from wardian.app.maintenance import revise_record_plan
    from wardian.memory.maintenance.plan import is_host_absolute
    from wardian.memory.models import Scope

    record = _subject(memory, record_id, revision)
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise FormError("text", "the text is empty",
                        hint="write the corrected text, or retire the record instead")
    if kind not in KINDS:
        raise FormError("kind", f"unknown kind {kind!r}; expected stable or current")
    if scope == "agent":
        where = Scope.agent()
    elif scope == "workspace":
        path = workspace_path.strip()
        if not path or not is_host_absolute(path):
            raise FormError("workspace_path",
                            f"a workspace scope needs an absolute path, got {path!r}",
                            hint="e.g. /home/me/src/app")
        where = Scope("workspace", os.path.normpath(path))
    else:
        raise FormError("scope", f"unknown scope {scope!r}; expected agent or workspace")
    changes: dict[str, Any] = {
        "text": text if text != record.text else None,
        "kind": kind if kind != record.kind else None,
        "scope": where if where != record.scope else None,
    }
    if all(value is None for value in changes.values()):
        raise FormError("text", "nothing to revise: text, kind and scope are as they are",
                        hint="change at least one of them")
    return _bound(record, revision,
                  revise_record_plan(memory, record.agent_id, record.id, **changes))


def merge_candidates(memory: MemoryDB, record: Record, *, limit: int = 499) -> list[Record]:
    """The owner's other active records `record` may be merged into, newest first (at
    most `limit`). Read-only."""
    from wardian.memory.store import MemoryStore

    store = MemoryStore(memory)
    found, _ = store.page(record.agent_id, status="active", limit=limit + 1)
    return [r for r in found if r.id != record.id][:limit]


def merge_from_form(memory: MemoryDB, record_id: str, *, revision: str, into: str, reason: str = ""
                    ) -> RecordPlan:
    """The ``retire_into`` plan of the record page's Merge form: the record is retired
    into `into` (another active record of the same agent), which gains its sources.

    Raises:
        NotFoundError / AmbiguousIdError: no such record.
        FormError: removed; ``into`` empty, unknown, the record itself, removed, or
            another agent's.
        StaleRevision: the record is no longer at `revision`.
        SecretDetected / PlanError: the reason breaks a plan rule.
    """
    from wardian.memory.maintenance.plan import check_owner, load_plan_bytes
    from wardian.memory.maintenance.single import plan_document
    from wardian.memory.secret_scan import check_fields

    record = _subject(memory, record_id, revision)
    if not into.strip():
        raise FormError("into", "no record to merge into was chosen",
                        hint="pick another active record of the same agent")
    try:
        target = find_record(memory, into.strip())
    except NotFoundError as exc:
        raise FormError("into", f"no record has id {into.strip()!r}",
                        hint="pick another active record of the same agent") from exc
    if target.id == record.id:
        raise FormError("into", f"memory {record.short_id} cannot be merged into itself",
                        hint="pick another active record of the same agent")
    if target.agent_id != record.agent_id:
        raise FormError("into", f"memory {target.short_id} belongs to another agent; a "
                        "record merges only into a record of its own agent")
    if target.status != "active":
        raise FormError("into", f"memory {target.short_id} is removed; merge into an "
                        "active record")
    reason = reason.strip()
    if reason:
        check_fields({"reason": reason}, action="garden merge")
    op: dict[str, Any] = {"op": "retire_into", "memory_id": record.id,
                          "expected_revision_id": record.current_revision_id,
                          "target_memory_id": target.id}
    if reason:
        op["reason"] = reason
    document = plan_document(record.agent_id, "merge", record, op)
    plan = load_plan_bytes(json.dumps(document, ensure_ascii=False).encode("utf-8"),
                           source="(merge form)")
    check_owner(plan, record.agent_id, source="(merge form)")
    return _bound(record, revision, (plan, document))


# --- the review queue ----------------------------------------------------------------------

def pending_reviews(state: StateDB, memory: MemoryDB, owner_id: str) -> list[dict[str, Any]]:
    """The owner's memory reviews waiting for the operator (`wardian.app.reviews`: drafted
    by the ``memory-review`` blueprint, state ``pending``), newest first, as JSON documents
    with ``id`` (the run id), ``summary`` and ``created_at`` besides the review's own
    fields; runs read from `state`, records from `memory`. Read-only."""
    from wardian.app.reviews import pending_reviews as pending

    return [review.to_json() for review in pending(state, memory, owner_id)]


@dataclass(frozen=True)
class AgentQueue:
    """What waits for one agent's operator: stale ``current`` checkpoints (older than
    `review_days`), flagged records (their JSON, secrets redacted) and pending reviews."""

    agent_id: str
    name: str
    review_days: int
    stale: list[StaleRecord]
    flagged: list[dict[str, Any]]
    reviews: list[dict[str, Any]]

    @property
    def total(self) -> int:
        """How many items wait in all."""
        return len(self.stale) + len(self.flagged) + len(self.reviews)


def review_queue(state: StateDB, memory: MemoryDB) -> list[AgentQueue]:
    """Every registered agent's queue (`AgentQueue`), in the registry's order: the stale
    checkpoints of ``garden memory stale``, the flagged records of ``garden memory list
    --flagged`` (redacted) and `pending_reviews`. Read-only."""
    from wardian.runtime.agents import AgentRegistry

    registry = AgentRegistry(state)
    agents = [(a.id, a.name) for a in registry.list()]
    out = []
    for agent_id, name in agents:
        stale = stale_checkpoints(state, memory, agent_id)
        flagged = [redacted_json(r) for r in agent_records(memory, agent_id, flagged=True)
                   if r.status == "active"]
        out.append(AgentQueue(agent_id, name, stale.review_days, stale.records, flagged,
                              pending_reviews(state, memory, agent_id)))
    return out
