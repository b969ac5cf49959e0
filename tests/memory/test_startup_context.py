"""The startup context: instructions, one line per record with id and kind, order, budget
(`wardian.memory.recall`; issue 2 point 6)."""

from __future__ import annotations

import pytest

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.recall import (
    DEFAULT_BUDGET_CHARS,
    DIRECT_RETENTION_INSTRUCTIONS,
    build_startup_context,
    record_line,
)
from wardian.memory.store import MemoryStore

AGENT = "11111111-2222-4333-8444-555555555555"


@pytest.fixture
def store(backend: str) -> MemoryStore:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    return MemoryStore(open_memory_db())


def _save(store: MemoryStore, text: str, kind: str = "stable", scope: Scope | None = None,
          agent: str = AGENT) -> str:
    record = store.save(agent, text, evidence="e", kind=kind,  # type: ignore[arg-type]
                        scope=scope or Scope.workspace("/ws"), actor="t")
    return record.id


def _context(store: MemoryStore, budget: int = DEFAULT_BUDGET_CHARS, workspace: str = "/ws"):  # type: ignore[no-untyped-def]
    return build_startup_context(
        store.startup_set(AGENT, workspace), agent_name="ada", agent_id=AGENT,
        workspace=workspace, budget_chars=budget,
    )


def test_order_is_by_value_current_first_then_most_recent(store: MemoryStore) -> None:
    ws_current = _save(store, "ws current", "current")
    ag_current = _save(store, "agent current", "current", Scope.agent())
    ws_stable = _save(store, "ws stable")
    ag_stable = _save(store, "agent stable", scope=Scope.agent())
    _save(store, "other workspace", scope=Scope.workspace("/elsewhere"))
    _save(store, "other agent", scope=Scope.agent(), agent="another")
    removed = _save(store, "removed one", scope=Scope.agent())
    store.remove(AGENT, removed, actor="t")
    context = _context(store)
    # Current checkpoints first, then stable records; newest first, scopes together.
    assert [r.id for r in context.loaded] == [ag_current, ws_current, ag_stable, ws_stable]
    assert context.omitted == 0
    lines = [ln for ln in context.text.splitlines() if ln.startswith("- [")]
    assert lines == [
        f"- [{ag_current[:8]}] current · agent: agent current (saved today)",
        f"- [{ws_current[:8]}] current · workspace: ws current (saved today)",
        f"- [{ag_stable[:8]}] stable · agent: agent stable",
        f"- [{ws_stable[:8]}] stable · workspace: ws stable",
    ]
    # Confirming (updating) an old stable record brings it to the front of its kind.
    store.update(AGENT, ws_stable, text="ws stable, confirmed", actor="t")
    again = [r.id for r in _context(store).loaded]
    assert again == [ag_current, ws_current, ws_stable, ag_stable]
    assert DIRECT_RETENTION_INSTRUCTIONS in context.text
    assert context.text.startswith(f"# Wardian memory · agent ada ({AGENT[:8]})")
    assert "not loaded" not in context.text


def test_multiline_text_stays_on_one_line(store: MemoryStore) -> None:
    rid = _save(store, "first line\nsecond line\n")
    [line] = [ln for ln in _context(store).text.splitlines() if ln.startswith("- [")]
    assert line == f"- [{rid[:8]}] stable · workspace: first line ⏎ second line"


def test_empty_set_has_instructions_and_nothing_to_load(store: MemoryStore) -> None:
    context = _context(store)
    assert not context.has_records
    assert DIRECT_RETENTION_INSTRUCTIONS in context.text
    assert context.loaded == () and context.omitted == 0


def test_budget_is_respected_and_the_left_out_count_said(store: MemoryStore) -> None:
    for i in range(30):
        _save(store, f"record {i:02d} " + "x" * 300)
    full = _context(store, budget=10**6)
    assert len(full.loaded) == 30 and full.omitted == 0
    for budget in (len(full.text), len(full.text) - 1, 5000, 3000, 1):
        context = _context(store, budget=budget)
        assert len(context.loaded) + context.omitted == 30
        if budget >= len(DIRECT_RETENTION_INSTRUCTIONS) + 200:
            assert len(context.text) <= budget
        if context.omitted:
            noun = "record" if context.omitted == 1 else "records"
            assert f"({context.omitted} more {noun} not loaded" in context.text.splitlines()[-1]
        else:
            assert context.text == full.text
    # Exactly the full length: everything fits; one less: something is left out.
    assert _context(store, budget=len(full.text)).omitted == 0
    assert _context(store, budget=len(full.text) - 1).omitted >= 1
    assert _context(store, budget=1).loaded == ()


def test_a_large_record_is_skipped_and_smaller_later_ones_still_fit(store: MemoryStore) -> None:
    big = _save(store, "big " + "y" * 3000, scope=Scope.agent())  # first in order
    small = _save(store, "small")
    head_only = _context(store, budget=10**6).text
    budget = len(head_only) - 1500  # room for the small line and the footer, not the big one
    context = _context(store, budget=budget)
    assert [r.id for r in context.loaded] == [small]
    assert context.omitted == 1
    assert big[:8] not in context.text
    assert len(context.text) <= budget


def test_record_line_shape(store: MemoryStore) -> None:
    rid = _save(store, "  padded  ", "current", Scope.agent())
    assert record_line(store.get(rid)) == f"- [{rid[:8]}] current · agent: padded"


def test_load_reads_only_what_the_budget_can_hold(store: MemoryStore) -> None:
    from wardian.memory.recall import MIN_LINE_CHARS, load_startup_context

    for i in range(300):
        _save(store, f"r{i}")
    budget = len(DIRECT_RETENTION_INSTRUCTIONS) + 2000
    head = load_startup_context(store, agent_id=AGENT, agent_name="ada", workspace="/ws",
                                budget_chars=budget)
    full = build_startup_context(store.startup_set(AGENT, "/ws"), agent_name="ada",
                                 agent_id=AGENT, workspace="/ws", budget_chars=budget)
    assert head == full  # the same text, loaded records and left-out count
    assert head.omitted > 0 and len(head.loaded) + head.omitted == 300
    assert budget // MIN_LINE_CHARS + 1 < 300  # so only a head of the set was read
    roomy = load_startup_context(store, agent_id=AGENT, agent_name="ada", workspace="/ws",
                                 budget_chars=10**6)
    assert len(roomy.loaded) == 300 and roomy.omitted == 0


def test_budget_properties_hold_for_any_records_and_budget() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from wardian.memory.models import Record

    def rec(i: int, text: str, kind: str) -> Record:
        return Record(
            id=f"{i:08x}-0000-4000-8000-000000000000", agent_id=AGENT, kind=kind,  # type: ignore[arg-type]
            scope=Scope.agent(), text=text, evidence="e", status="active",
            created_at="t", updated_at="t", current_revision_id="r",
        )

    head_len = len(build_startup_context([], agent_name="ada", agent_id=AGENT,
                                         workspace="/ws").text)

    @settings(max_examples=150, deadline=None)
    @given(
        texts=st.lists(st.tuples(st.text(min_size=1, max_size=400).filter(str.strip),
                                 st.sampled_from(["stable", "current"])), max_size=40),
        budget=st.integers(min_value=1, max_value=30_000),
    )
    def check(texts: list[tuple[str, str]], budget: int) -> None:
        records = [rec(i, t, k) for i, (t, k) in enumerate(texts)]
        ctx = build_startup_context(records, agent_name="ada", agent_id=AGENT,
                                    workspace="/ws", budget_chars=budget)
        assert len(ctx.loaded) + ctx.omitted == len(records)
        order = [r.id for r in records]
        positions = [order.index(r.id) for r in ctx.loaded]
        assert positions == sorted(positions)  # startup order kept
        if budget >= head_len + 300:
            assert len(ctx.text) <= budget
        last = ctx.text.splitlines()[-1]
        assert (last.startswith("(") and "not loaded" in last) == (ctx.omitted > 0)
        for r in ctx.loaded:
            assert f"- [{r.id[:8]}] {r.kind} · agent: " in ctx.text

    check()
