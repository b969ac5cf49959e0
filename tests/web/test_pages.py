"""Garden's pages over real HTTP: paging and filters, Memory loaded, runs, plan import
errors. (The whole maintenance walk is in the browser test.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web._support import Garden, garden_server, save, seed_agent


@contextmanager
def _client(garden: Garden) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=garden.base, follow_redirects=True) as client:
        assert client.get(garden.url).status_code == 200  # follows the token redirect
        yield client


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="(\w+)"', page)
    assert found
    return found.group(1)


def _ids(page: str) -> list[str]:
    return re.findall(r'data-record="([0-9a-f-]{36})"', page)


@pytest.fixture
def populated(wardian_home: Path) -> Iterator[tuple[Garden, dict[str, Any]]]:
    agent = seed_agent("ada", records=120)
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    heron = save(agent, "Herons nest near the quarry pond", kind="current",
                 scope=Scope.agent())
    store = MemoryStore(open_memory_db())
    gone = store.save(agent, "Old rule about tabs", evidence="e", scope=Scope.agent(),
                      actor="test")
    store.remove(None, gone.id, actor="test", reason="superseded")
    with garden_server(wardian_home) as garden:
        yield garden, {"agent": agent, "heron": heron, "gone": gone}


def test_memory_pages_and_filters(populated: tuple[Garden, dict[str, Any]]) -> None:
    garden, seeded = populated
    agent = seeded["agent"]
    with _client(garden) as client:
        first = client.get(f"/agents/{agent}").text
        assert 'id="total">121<' in first and "page 1 of 3" in first
        assert len(_ids(first)) == 50 and _ids(first)[0] == seeded["heron"].id
        third = client.get(f"/agents/{agent}?page=3").text
        assert len(_ids(third)) == 21 and 'rel="prev"' in third and 'rel="next"' not in third
        pages = set(_ids(first)) | set(_ids(client.get(f"/agents/{agent}?page=2").text))
        assert len(pages | set(_ids(third))) == 121, "pages neither overlap nor skip"
        words = client.get(f"/agents/{agent}", params={"q": "HERON quarry"}).text
        assert _ids(words) == [seeded["heron"].id]
        prefix = client.get(f"/agents/{agent}", params={"q": seeded["heron"].id[:8]}).text
        assert seeded["heron"].id in _ids(prefix)
        current_agent = client.get(f"/agents/{agent}",
                                   params={"kind": "current", "scope": "agent"}).text
        # Seeded: current when i % 3 == 0, agent scope when i % 2 == 1 → 20 of 120, + heron.
        assert 'id="total">21<' in current_agent
        removed = client.get(f"/agents/{agent}", params={"status": "removed"}).text
        assert _ids(removed) == [seeded["gone"].id]
        everything = client.get(f"/agents/{agent}", params={"status": "all"}).text
        assert 'id="total">122<' in everything
        bad = client.get(f"/agents/{agent}", params={"kind": "fuzzy"})
        assert bad.status_code == 422 and "fuzzy" in bad.text


def test_a_page_past_the_end_shows_the_last_page(
        populated: tuple[Garden, dict[str, Any]]) -> None:
    """A hand-edited ?page= beyond the last page, or too large for SQLite's integers,
    shows the last page instead of an empty list or a 500 (operator trial)."""
    garden, seeded = populated
    agent = seeded["agent"]
    with _client(garden) as client:
        last = _ids(client.get(f"/agents/{agent}?page=3").text)
        for number in ("4", "99999999999999999999999", "-5"):
            shown = client.get(f"/agents/{agent}?page={number}")
            assert shown.status_code == 200, (number, shown.text[-400:])
            if number == "-5":
                assert "page 1 of 3" in shown.text
            else:
                assert "page 3 of 3" in shown.text and _ids(shown.text) == last


def test_memory_loaded_shows_the_exact_context(wardian_home: Path) -> None:
    agent = seed_agent("ada")
    record = save(agent, "Prefer short commit subjects")
    from wardian.memory.db import open_memory_db
    from wardian.memory.loaded import LoadedEvents
    from wardian.memory.store import MemoryStore

    context = "# Memory\n- [abcd1234] Prefer short commit subjects <not html>\n"
    store = MemoryStore(open_memory_db())
    LoadedEvents(store.conn).record(
        agent, context=context, record_ids=[record.id], omitted_count=2, pid=4242,
        process_started_at=1.0, workspace="/srv/project", source="exec")
    with garden_server(wardian_home) as garden, _client(garden) as client:
        page = client.get(f"/agents/{agent}/loaded").text
        assert "pid 4242" in page and "2 not loaded" in page
        assert "- [abcd1234] Prefer short commit subjects &lt;not html&gt;\n" in page
        agents = client.get("/").text
        assert "2 not loaded" in agents and f"/agents/{agent}/loaded" in agents


def test_runs_with_steps_and_events(wardian_home: Path) -> None:
    from wardian.config import open_state_db
    from wardian.engine.runs import RunStore

    agent = seed_agent("ada")
    store = RunStore(open_state_db(), recover=False)
    run, _ = store.create_run(blueprint_id="memory-consolidation", agent_id=agent,
                              assignments={}, inputs={}, invocation={"trigger": "manual"})
    store.start_attempt(run.id, "curate", 0, 1, {"records": 3})
    store.finish_attempt(run.id, "curate", 1, "failed", error="provider quota exhausted",
                         duration_ms=12.5)
    store.finish(run.id, "failed", error="step curate failed")
    with garden_server(wardian_home) as garden, _client(garden) as client:
        runs = client.get("/runs").text
        assert run.id[:8] in runs and "memory-consolidation" in runs and "failed" in runs
        detail = client.get(f"/runs/{run.id[:8]}").text
        assert "curate" in detail and "provider quota exhausted" in detail
        assert "step.started" in detail and "step.failed" in detail
        assert client.get("/runs/ffffffff").status_code == 404


def test_a_plan_for_another_agent_or_malformed_is_rejected_on_import(
    wardian_home: Path,
) -> None:
    ada = seed_agent("ada")
    bo = seed_agent("bo")
    plan = {"schema_version": 1, "plan_id": "p", "agent_id": bo, "idempotency_key": "k",
            "operations": [{"op": "create", "client_key": "c", "text": "t", "kind": "stable",
                            "scope": {"kind": "agent"}, "evidence_excerpt": "e",
                            "sources": []}]}
    with garden_server(wardian_home) as garden, _client(garden) as client:
        form = client.get(f"/agents/{ada}/maintain").text
        assert f"owner <span class=\"id\">{ada}</span>" in form
        other = client.post(f"/agents/{ada}/maintain/preview",
                            data={"csrf": _csrf(form), "plan_text": json.dumps(plan)})
        assert other.status_code == 422 and bo in other.text and "agent_id" in other.text
        assert "Apply reviewed plan" not in other.text
        broken = client.post(f"/agents/{ada}/maintain/preview", files={
            "plan_file": ("plan.json", b'{"schema_version": 1, "plan_id": "p", "plan_id": 2}',
                          "application/json")}, data={"csrf": _csrf(form)})
        assert broken.status_code == 422 and "plan.json" in broken.text
        assert "plan_id" in broken.text
        unknown = client.get("/agents/nobody/maintain")
        assert unknown.status_code == 404 and "nobody" in unknown.text
