"""The review queue over real HTTP: per-agent counts on the agents page and the queue
page, flagged records shown redacted, and pending reviews read through one function."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import httpx

from tests.web._support import flag, garden_server, save, save_aged, seed_agent

SECRET = "ghp_" + "a1B2" * 9


def _hold_secret(record_id: str) -> None:
    """Put a secret into a stored record's text, as an old version of Wardian could have
    stored it before the scan (the migration then flags it)."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    with store.db.atomic():
        store.conn.execute("UPDATE records SET text = ? WHERE id = ?",
                           (f"deploy token {SECRET}", record_id))
    flag(record_id, "secret_detected: GitHub Token in text")


def test_queue_counts_and_redacted_flagged_records(wardian_home: Path) -> None:
    ada = seed_agent("ada")
    bo = seed_agent("bo")
    stale = [save_aged(ada, f"checkpoint {i}", days=20 + i) for i in range(3)]
    save_aged(ada, "fresh checkpoint", days=2)
    held = save(ada, "deploy token placeholder")
    _hold_secret(held.id)
    save_aged(bo, "bo's old checkpoint", days=40)
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        agents = client.get(garden.url).text
        row = agents[agents.index(f'data-agent="{ada}"'):agents.index(f'data-agent="{bo}"')]
        assert re.search(r'data-queue="total">4<', row)
        assert 'data-queue="stale">3<' in row and 'data-queue="flagged">1<' in row
        queue = client.get("/queue")
        assert queue.status_code == 200
        page = queue.text
        ada_part = page[page.index(f'id="queue-{ada}"'):page.index(f'id="queue-{bo}"')]
        assert re.findall(r'<li data-record="([0-9a-f-]{36})">', ada_part) == [
            *reversed(stale), held.id]  # stale oldest first, then the flagged one
        assert SECRET not in page and "deploy token" in ada_part
        bo_part = page[page.index(f'id="queue-{bo}"'):]
        assert 'data-queue="stale">1<' in bo_part and 'data-queue="flagged">0<' in bo_part


def test_pending_reviews_are_empty_without_a_review_source(wardian_home: Path) -> None:
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import pending_reviews, review_queue

    ada = seed_agent("ada")
    if importlib.util.find_spec("wardian.app.reviews") is None:
        assert pending_reviews(open_state_db(), open_memory_db(), ada) == []
        assert [q.reviews for q in review_queue(open_state_db(), open_memory_db())] == [[]]
