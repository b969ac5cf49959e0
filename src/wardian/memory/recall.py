"""The startup context: direct-retention instructions plus recalled records, in a budget.

What a newly launched managed process receives (in the file named by
``WARDIAN_MEMORY_CONTEXT``) when agent memory is enabled, and what ``wardian memory
recall`` without a query prints. Layout::

    # Wardian memory · agent <name> (<id8>)
    <direct-retention instructions>
    ## Recalled memory · workspace <path>
    - [5e6f7a8b] current · workspace: Release validation is awaiting a real-macOS run
    - [1a2b3c4d] stable · agent: Prefer concise technical handoffs
    (3 more records not loaded: …)

Every record line carries the record's 8-character id and its kind. The budget is filled
by value (`MemoryStore.startup_set`): current checkpoints first, then stable records,
each most recently saved or confirmed first, agent and workspace scope together; reading
it costs O(budget), not O(records). A ``current`` record's line ends with its age,
``(saved 3 days ago)``, and is marked stale once it is ``memory.current_review_days``
(default 14) old. The whole context stays within ``budget_chars``
(setting ``memory.startup_budget_chars``, default 12,000): the header and instructions are
always included; records are taken in order while they fit (a record too large for the
space left is skipped, and a later, smaller one may still fit); the number left out is
said on the last line. A newline inside a record's text is shown as `` ⏎ `` so each
record stays on one line.

Spec: "Agent memory", "Save and inspect memory", "What appears in chat"; DESIGN.md
"Storage" → Recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from wardian._util import parse_utc, utc_now
from wardian.memory.models import Record

if TYPE_CHECKING:
    from wardian.memory.store import MemoryStore

__all__ = [
    "DEFAULT_BUDGET_CHARS",
    "DEFAULT_CURRENT_REVIEW_DAYS",
    "DIRECT_RETENTION_INSTRUCTIONS",
    "StartupContext",
    "age_days",
    "build_startup_context",
    "is_stale",
    "load_startup_context",
    "record_line",
    "saved_ago",
]

MIN_LINE_CHARS = len("- [12345678] stable · agent: x\n")
"""The shortest possible record line; bounds how many records a budget can hold."""
LOOKAHEAD = 50
"""Once the budget is full, how many more records are read in case a short one fits."""
COUNT_AT_MOST = 1_000
"""How far past the loaded records the left-out count is exact ("1000+" beyond): each
counted record costs an index step and a row read, and past a thousand the
exact number tells the agent nothing more than "use `memory list`"."""

DEFAULT_BUDGET_CHARS = 12_000
"""Default of setting ``memory.startup_budget_chars``, in characters."""

DEFAULT_CURRENT_REVIEW_DAYS = 14
"""Default of setting ``memory.current_review_days``: a ``current`` record this old is
marked stale in the startup context and listed by ``wardian garden memory stale``."""

DIRECT_RETENTION_INSTRUCTIONS = """\
You have durable memory managed by Wardian. It survives restarts and provider changes.

Before your final answer to an ordinary task, check whether it produced something that
materially helps resume work later: a clear user preference, a project convention, a
decision, a correction, a lesson, or an active checkpoint. When the evidence is clear,
save a small number of such records; you do not need to be told "remember this".
Do not save routine progress reports or task journals, and do not save brief or
explicitly one-response-only instructions merely because they appeared.

  wardian memory save "TEXT" --evidence "EXCERPT THAT JUSTIFIES IT" [--kind current] [--scope agent]

The default kind is stable; use --kind current for an active checkpoint worth carrying
to the next session, update it when the state changes and remove it when the work
resolves. Workspace scope is the default; use --scope agent only for a preference or
working convention that should follow you between projects. Every save needs an
evidence excerpt; --source TYPE=LOCATOR keeps a link for deeper inspection.
Use the ids below (any unique prefix works) with:
  wardian memory show ID | history ID | update ID [--text ...] | remove ID [--reason ...]
  wardian memory recall [QUERY]   wardian memory list
"""

_RECALL_ONLY_INSTRUCTIONS = """\
You have durable memory managed by Wardian. It survives restarts and provider changes.

In this session memory is recalled read-only: the session was not started by Wardian, so
it holds no memory capability, and `wardian memory` commands (save, update, remove, list,
recall) refuse here. Do not try to save memory in this session. Direct saving works only
in sessions started with `wardian agent launch NAME` (or `wardian agent exec NAME -- CMD`).
This session's conversation is consolidated into memory at session end when the operator
has set up a session-close invoker (`wardian automation session-close`).
"""
"""The instructions of a context built for a process without a memory capability (e.g. a
Claude Code session the user started, whose SessionStart hook recalls memory): they say
what works there instead of telling the agent to run commands that fail closed."""


class StartupContext(NamedTuple):
    """A rendered startup context.

    Attributes:
        text: the exact context, as written to the file and the ``Memory loaded`` event.
        loaded: the records included, in order.
        omitted: how many records of the startup set were left out for the budget (a
            lower bound when `omitted_exact` is False: counting stops early in a large store).
        budget_chars: the budget applied, in characters.
        omitted_exact: whether `omitted` is exact.
    """

    text: str
    loaded: tuple[Record, ...]
    omitted: int
    budget_chars: int
    omitted_exact: bool = True

    @property
    def has_records(self) -> bool:
        """Whether there was anything to load (some record loaded or left out)."""
        return bool(self.loaded) or self.omitted > 0


def record_line(
    record: Record, *, now: datetime | None = None,
    current_review_days: int = DEFAULT_CURRENT_REVIEW_DAYS,
) -> str:
    """One record as a single context line: ``- [id8] kind · scope: text``.

    With `now`, a ``current`` record's line ends with its age, e.g. ``(saved 3 days
    ago)``, and — once it is `current_review_days` old or older — ``stale: update it if
    still active, else remove it``.
    """
    text = " ⏎ ".join(part.strip() for part in record.text.strip().splitlines())
    line = f"- [{record.short_id}] {record.kind} · {record.scope.kind}: {text}"
    if now is None or record.kind != "current":
        return line
    try:
        days = age_days(record.updated_at, now)
    except ValueError:
        return line  # no readable time, no age to show
    line += f" ({saved_ago(days)}"
    if is_stale(days, current_review_days):
        line += "; stale: update it if still active, else remove it"
    return line + ")"


def age_days(updated_at: str, now: datetime) -> int:
    """Whole days from `updated_at` (UTC ISO-8601) to `now`; never negative."""
    return max(0, (now - parse_utc(updated_at)).days)


def saved_ago(days: int) -> str:
    """``saved today``, ``saved 1 day ago``, ``saved 3 days ago``."""
    if days == 0:
        return "saved today"
    return f"saved {days} day{'' if days == 1 else 's'} ago"


def is_stale(days: int, current_review_days: int) -> bool:
    """Whether a `current` record this many days old is due for review."""
    return days >= current_review_days


def _footer(omitted: int, budget_chars: int, exact: bool = True) -> str:
    noun = "record" if omitted == 1 and exact else "records"
    return (
        f"({omitted}{'' if exact else '+'} more {noun} not loaded: over the"
        f" {budget_chars}-character startup "
        "budget; run `wardian memory list` or `wardian memory recall QUERY` to see them)\n"
    )


def build_startup_context(
    records: Sequence[Record],
    *,
    agent_name: str,
    agent_id: str,
    workspace: str | None,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    total: int | None = None,
    direct_save: bool = True,
    now: datetime | None = None,
    current_review_days: int = DEFAULT_CURRENT_REVIEW_DAYS,
    total_exact: bool = True,
) -> StartupContext:
    """Render the startup context of `records` (already in startup order) within a budget.

    Args:
        records: the startup set in order of value (`MemoryStore.startup_set`).
        agent_name: shown in the header.
        agent_id: shown (8 characters) in the header.
        workspace: the launch workspace path, shown in the records heading.
        budget_chars: the maximum length of the whole text, in characters (>= 1). The
            header and instructions are always included, even when they alone exceed it.
        total: the size of the whole startup set when `records` is only its head (see
            `load_startup_context`); the rest counts as left out. Default: len(records).
        direct_save: whether the process receiving the context holds a memory capability
            (a managed launch): True gives `DIRECT_RETENTION_INSTRUCTIONS`, False (e.g. a
            provider hook outside a managed launch) `_RECALL_ONLY_INSTRUCTIONS`.
        now: the time ages are computed against (default: now, UTC); each ``current``
            record's line says how long ago it was saved.
        current_review_days: from this age on a ``current`` record is marked stale
            (setting ``memory.current_review_days``).
        total_exact: False when `total` is only a lower bound (the footer says "N+").

    Returns:
        The context; `StartupContext.omitted` counts the records left out.
    """
    head = f"# Wardian memory · agent {agent_name} ({agent_id[:8]})\n\n"
    head += DIRECT_RETENTION_INSTRUCTIONS if direct_save else _RECALL_ONLY_INSTRUCTIONS
    head += f"\n## Recalled memory · workspace {workspace or '(none)'}\n"
    total = len(records) if total is None else max(total, len(records))
    if not total:
        text = head + "(no memory records yet for this agent and workspace)\n"
        return StartupContext(text, (), 0, budget_chars)
    moment = now or utc_now()
    all_lines = [record_line(record, now=moment, current_review_days=current_review_days)
                 + "\n" for record in records]
    if total == len(records) and len(head) + sum(map(len, all_lines)) <= budget_chars:
        return StartupContext(head + "".join(all_lines), tuple(records), 0, budget_chars)
    # Something must be left out, so keep room for the footer that says how much.
    reserve = len(_footer(total, budget_chars))
    used = len(head)
    loaded: list[Record] = []
    lines: list[str] = []
    omitted = total - len(records)
    for record, line in zip(records, all_lines, strict=True):
        if used + len(line) + reserve <= budget_chars:
            lines.append(line)
            loaded.append(record)
            used += len(line)
        else:
            omitted += 1
    text = head + "".join(lines) + (
        _footer(omitted, budget_chars, total_exact) if omitted else "")
    return StartupContext(text, tuple(loaded), omitted, budget_chars, total_exact)


def load_startup_context(
    store: MemoryStore,
    *,
    agent_id: str,
    agent_name: str,
    workspace: str,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    direct_save: bool = True,
    current_review_days: int = DEFAULT_CURRENT_REVIEW_DAYS,
    now: datetime | None = None,
) -> StartupContext:
    """Read the startup set of (`agent_id`, `workspace`) and render it. Read-only.

    O(budget), not O(records) (bench/memory_bench.py at 100k records): reads the set
    in order of value only until the budget is full plus `LOOKAHEAD` records (never
    more than the budget could hold: every line is at least `MIN_LINE_CHARS`), and
    counts the rest only up to `COUNT_AT_MOST`. `direct_save`,
    `current_review_days` and `now` as in `build_startup_context`.
    """
    most = budget_chars // MIN_LINE_CHARS + 1
    records: list[Record] = []
    used, past_full, complete = 0, 0, True
    for record in store.iter_startup(agent_id, workspace):
        if len(records) >= most or past_full > LOOKAHEAD:
            complete = False
            break
        records.append(record)
        used += len(record_line(record)) + 1
        past_full += used > budget_chars
    total, exact = len(records), True
    if not complete:
        cap = len(records) + COUNT_AT_MOST
        total = store.startup_count(agent_id, workspace, at_most=cap)
        exact = total < cap
    return build_startup_context(
        records, agent_name=agent_name, agent_id=agent_id, workspace=workspace,
        budget_chars=budget_chars, total=total, direct_save=direct_save, now=now,
        current_review_days=current_review_days, total_exact=exact,
    )
