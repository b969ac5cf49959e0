"""The invoker table: created disabled, prefix/name lookup, boundary matching, kinds."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from wardian.config import open_state_db
from wardian.errors import AmbiguousIdError, ConflictError, NotFoundError, UsageError
from wardian.invokers.store import Invoker, InvokerStore

_names = itertools.count(1)


def _add(store: InvokerStore, **over: object) -> Invoker:
    args: dict[str, Any] = dict(name=f"n{next(_names)}", blueprint_id="bp", agent_id="agent-1",
                      assignments={"curator": {"target_type": "temporary_provider",
                                               "provider": "builtin"}},
                      config={"boundaries": ["clear"], "require_archive": True})
    args.update(over)
    kind = args.pop("kind", "session-close")
    return store.add(kind, **args)


def test_add_creates_disabled_and_round_trips() -> None:
    store = InvokerStore(open_state_db())
    inv = _add(store)
    assert inv.enabled is False
    again = InvokerStore(open_state_db()).get(inv.id[:8])
    assert again == inv
    assert again.config == {"boundaries": ["clear"], "require_archive": True}


def test_an_id_prefix_matches_in_either_case_on_both_backends(backend: str) -> None:
    inv = _add(InvokerStore(open_state_db()))
    _add(InvokerStore(open_state_db()))
    store = InvokerStore(open_state_db())
    assert store.get(inv.id[:8].upper()).id == inv.id
    assert store.get(inv.id.upper()).id == inv.id
    with pytest.raises(NotFoundError):
        store.get(inv.id[:4] + "%")  # a wildcard in the input is a character


def test_matching_only_enabled_session_close_for_agent_and_boundary() -> None:
    store = InvokerStore(open_state_db())
    clear_only = _add(store)
    any_boundary = _add(store, config={})
    _add(store, agent_id="other")
    _add(store, kind="schedule", config={"every": "1h"})
    assert store.matching_session_close("agent-1", "clear") == []
    store.set_enabled(clear_only.id, True)
    store.set_enabled(any_boundary.id, True)
    ids = {i.id for i in store.matching_session_close("agent-1", "clear")}
    assert ids == {clear_only.id, any_boundary.id}
    assert [i.id for i in store.matching_session_close("agent-1", "shutdown")] == [any_boundary.id]
    store.set_enabled(clear_only.id, False)
    assert [i.id for i in store.matching_session_close("agent-1", "clear")] == [any_boundary.id]


def test_lookup_errors_and_kind_filter() -> None:
    store = InvokerStore(open_state_db())
    a = _add(store, name="first")
    with pytest.raises(UsageError):  # not "the only invoker there is"
        store.get("", kind="session-close")
    sched = _add(store, kind="schedule", name="sched")
    with pytest.raises(NotFoundError):
        store.get("zzzz")
    with pytest.raises(NotFoundError):
        store.get(sched.id, kind="session-close")
    assert store.get("first").id == a.id
    with pytest.raises(ConflictError, match=f"named 'first' already exists \\({a.id[:8]}\\)"):
        _add(store, name="first")  # one name per kind: the database's UNIQUE index
    _add(store, kind="schedule", name="first")  # another kind may share it
    with pytest.raises(AmbiguousIdError):
        store.get("first")
    assert store.get("first", kind="session-close").id == a.id
    with pytest.raises(UsageError):
        store.get(" ")
    with pytest.raises(UsageError):
        store.add("cron", name="x", blueprint_id="b", agent_id="a", assignments={})


def test_update_and_remove() -> None:
    store = InvokerStore(open_state_db())
    inv = _add(store)
    upd = store.update(inv.id, config={"boundaries": []}, name="renamed")
    assert upd.name == "renamed" and upd.config == {"boundaries": []}
    assert upd.assignments == inv.assignments
    store.remove(inv.id)
    with pytest.raises(NotFoundError):
        store.get(inv.id)
    with pytest.raises(NotFoundError):
        store.remove(inv.id)


def test_the_unique_name_index_holds_on_both_backends(backend: str) -> None:
    # The check before an insert is the app's; the index is what two writers at once meet.
    store = InvokerStore(open_state_db())
    held = _add(store, name="nightly")
    with pytest.raises(ConflictError, match=held.id[:8]):
        _add(store, name="nightly")
    other = _add(store, name="weekly")
    with pytest.raises(ConflictError, match="named 'nightly' already exists"):
        store.update(other.id, name="nightly")
    assert store.get(other.id).name == "weekly"
