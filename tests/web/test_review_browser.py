"""A partial memory review in a real browser: the review page lists the drafted
operations, the operator drops one and applies the rest through the same preview (its own
digest), confirmation dialog and receipt as any plan; the store then shows exactly the
accepted operations applied, the dropped one's record untouched, history kept. Screenshots
(1400×1000) under the test's tmp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.web._reviews import cli, draft_review, plan_operations, seed_reviewable
from tests.web._support import garden_server, get

pytestmark = pytest.mark.slow  # a browser per test; `make test-all` (CI) runs them

VIEWPORT = {"width": 1400, "height": 1000}


def _history(record_id: str) -> list[Any]:
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return store.history(record_id, agent_id=None)


def _show(home: Path, record_id: str) -> dict[str, Any]:
    done = cli(home, "garden", "memory", "show", record_id, "--json")
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def test_a_partial_review_applies_only_the_accepted_operations(
        browser: Any, wardian_home: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    shots = tmp_path / "screenshots"  # kept with the test's tmp dir
    shots.mkdir()
    _agent, ids = seed_reviewable()
    review = draft_review(wardian_home)
    run = review["run_id"]
    ops = plan_operations(run)
    assert len(ops) == 3
    (dropped,) = [i for i, op in enumerate(ops) if op["memory_id"] == ids["yarn"]]
    untouched = get(ids["yarn"])
    with garden_server(wardian_home) as garden:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(garden.url)
        page.locator('nav a[href$="/queue"]').click()
        page.locator(f'li[data-review="{run}"] a.id').click()
        expect(page.locator("#review-state")).to_have_text("pending")
        expect(page.locator("li.review-op")).to_have_count(3)
        expect(page.locator("#review-digest")).to_have_text(review["digest_prefix"])
        expect(page.locator("#drafted time")).to_have_attribute(
            "title", review["drafted_at"][:10] + " " + review["drafted_at"][11:19] + " UTC")
        page.screenshot(path=str(shots / "review.png"), full_page=True)

        page.locator(f"#accept-{dropped}").uncheck()
        page.locator("#review-apply").click()

        # The preview of the two accepted operations: its own digest, nothing changed yet.
        expect(page.locator("#from-review")).to_be_visible()
        expect(page.locator("#conflict-count")).to_have_text("none")
        expect(page.locator("#counts")).to_contain_text("2 (retire 1, retire_into 1)")
        digest = page.locator("#digest-prefix").inner_text()
        assert digest.startswith("sha256:") and digest != review["digest_prefix"]
        expect(page.locator(f'li.entry[data-op] .id:text-is("{ids["yarn"]}")')).to_have_count(0)
        assert get(ids["stale"]).status == "active"
        page.screenshot(path=str(shots / "review-preview.png"), full_page=True)

        page.locator("#apply-button").click()
        dialog = page.locator("#confirm-dialog")
        expect(dialog).to_be_visible()
        expect(dialog.locator("#confirm-count")).to_have_text("2")
        expect(dialog.locator("#confirm-digest")).to_have_text(digest)
        page.screenshot(path=str(shots / "review-dialog.png"), full_page=True)
        dialog.locator("#confirm-apply").click()
        expect(page.locator("#outcome")).to_have_text("Applied.")
        page.screenshot(path=str(shots / "review-receipt.png"), full_page=True)
        page.locator("#back-to-review").click()
        # the drafted review's records moved on: it is stale now, apply disabled
        expect(page.locator("#review-state")).to_have_text("stale")
        expect(page.locator("#review-apply")).to_be_disabled()
        page.close()

    # Exactly the accepted operations happened, with history kept; the dropped one did not.
    stale, absorbed = _show(wardian_home, ids["stale"]), _show(wardian_home, ids["lint"])
    assert stale["status"] == "removed" and absorbed["status"] == "removed"
    assert _show(wardian_home, ids["lint_again"])["status"] == "active"
    assert len(_history(ids["stale"])) == 2 and len(_history(ids["lint"])) == 2
    assert _history(ids["lint"])[0].snapshot["status"] == "active"
    kept = get(ids["yarn"])
    assert (kept.status, kept.text, kept.current_revision_id) == (
        "active", untouched.text, untouched.current_revision_id)
    assert len(_history(ids["yarn"])) == 1
    assert get(ids["plain"]).status == "active"
    listed = json.loads(cli(wardian_home, "garden", "memory", "reviews", "--agent", "ada",
                            "--format", "json").stdout)["reviews"]
    assert [(r["run_id"], r["state"]) for r in listed] == [(run, "stale")]
