"""Garden in a real browser: Playwright drives the system Chromium against the real server.

Issue 17's walk: list agents, open a record's history, import a plan with a conflict
(apply disabled), fix it, decline the confirmation once (nothing changed), apply with the
confirmation, check the receipt after a reload, and replay. Screenshots are written under
the test's tmp dir. Without Chromium the tests skip with a reason — except under CI=true,
where they must run (`.ci/run` installs Chromium from the distribution's packages).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.web._support import garden_server, get, save, seed_agent, update
from tests.web.conftest import CHROMIUM, chromium_path

pytestmark = pytest.mark.slow  # a browser per test; `make test-all` (CI) runs them

@pytest.fixture
def seeded(wardian_home: Path) -> dict[str, Any]:
    agent = seed_agent("ada")
    seed_agent("bo")
    keep = save(agent, "Build needs Rust 1.79", evidence="toolchain file said 1.79")
    first_revision = keep.current_revision_id
    keep = update(keep.id, text="Build needs Rust 1.80 and Node 20", reason="bumped")
    old = save(agent, "Run the e2e suite by hand before each release")
    from wardian.memory.models import Source

    dup = save(agent, "Rust 1.80 is required", sources=[Source("artifact", "Cargo.toml", True)])
    return {"agent": agent, "keep": keep, "stale_revision": first_revision, "old": old,
            "dup": dup}


def _plan(seeded: dict[str, Any], expected_keep: str) -> str:
    keep, old, dup = seeded["keep"], seeded["old"], seeded["dup"]
    return json.dumps({
        "schema_version": 1, "plan_id": "plan-tidy-rust", "agent_id": seeded["agent"],
        "idempotency_key": "tidy-rust-001",
        "operations": [
            {"op": "revise", "memory_id": keep.id, "expected_revision_id": expected_keep,
             "text": "Production build requires Rust 1.80+ and Node 22.",
             "evidence_excerpt": "Verified in the repository toolchain manifest.",
             "add_sources": [{"source_type": "artifact", "locator": "rust-toolchain.toml",
                              "primary": True}]},
            {"op": "retire", "memory_id": old.id, "expected_revision_id":
             old.current_revision_id, "reason": "Superseded by nightly validation."},
            {"op": "retire_into", "memory_id": dup.id, "expected_revision_id":
             dup.current_revision_id, "target_memory_id": keep.id},
            {"op": "create", "client_key": "e2e-rule", "text": "Run e2e with make e2e.",
             "kind": "current", "scope": {"kind": "agent"},
             "evidence_excerpt": "From the test instructions.", "sources": []},
        ],
    }, indent=2)


def _rows(table: str) -> int:
    """How many rows `table` of memory.db holds now."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return int(store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _receipts() -> int:
    return _rows("maintenance_receipts")


def _revisions() -> int:
    return _rows("revisions")


def test_operator_walks_memory_and_applies_a_reviewed_plan(
    browser: Any, seeded: dict[str, Any], wardian_home: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    shots = tmp_path / "screenshots"
    shots.mkdir()
    keep = seeded["keep"]
    with garden_server(wardian_home) as garden:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(garden.url)
        assert "token=" not in page.url, "the token leaves the address bar"

        # Agents: both listed, with record counts and memory state.
        row = page.locator(f'tr[data-agent="{seeded["agent"]}"]')
        expect(row).to_contain_text("ada")
        expect(row.locator(".count")).to_have_text("3")
        expect(row).to_contain_text("off")
        expect(page.locator("#agents")).to_contain_text("bo")
        page.screenshot(path=str(shots / "01-agents.png"), full_page=True)

        # One agent's memory, then a record's history (two revisions, evidence, sources).
        row.get_by_role("link", name="ada").click()
        expect(page.locator("#total")).to_have_text("3")
        page.get_by_label("Text").fill("rust")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("#total")).to_have_text("2")
        page.locator(f'li[data-record="{keep.id}"] a.id').click()
        expect(page.locator("#current-revision")).to_have_attribute(
            "data-id", keep.current_revision_id)
        expect(page.locator("#history li.revision")).to_have_count(2)
        expect(page.locator("#history")).to_contain_text("reason: bumped")
        expect(page.locator("#history")).to_contain_text("toolchain file said 1.79")
        page.screenshot(path=str(shots / "02-history.png"), full_page=True)

        # Maintain memory…: upload a plan whose revise expects the old revision.
        page.goto(f"{garden.base}/agents/{seeded['agent']}/maintain")
        stale = tmp_path / "maintenance-plan.json"
        stale.write_text(_plan(seeded, seeded["stale_revision"]), encoding="utf-8")
        page.set_input_files("input[name=plan_file]", str(stale))
        page.locator("#preview-button").click()
        expect(page.locator(".conflict")).to_contain_text("revision_changed")
        expect(page.locator("#conflict-count")).to_have_text("1")
        expect(page.locator("#apply-button")).to_be_disabled()
        expect(page.locator("#apply-disabled-reason")).to_contain_text("apply is disabled")
        page.screenshot(path=str(shots / "03-conflict.png"), full_page=True)

        # Fix it: the current revision, preview again.
        page.locator("details summary").click()
        page.locator("#plan-text").fill(_plan(seeded, keep.current_revision_id))
        page.locator("#preview-button").click()
        expect(page.locator("#conflict-count")).to_have_text("none")
        expect(page.locator("#counts")).to_contain_text("4 (revise 1, create 1, retire 1, "
                                                        "retire_into 1)")
        body = page.locator("main")
        expect(body).to_contain_text("Production build requires Rust 1.80+ and Node 22.")
        expect(body).to_contain_text("Build needs Rust 1.80 and Node 20")  # Before, in full
        expect(body).to_contain_text("+ source artifact = rust-toolchain.toml")
        expect(page.locator("#absorbed")).to_contain_text(seeded["dup"].id)
        digest = page.locator("#digest-prefix").inner_text()
        assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 12
        apply_button = page.locator("#apply-button")
        expect(apply_button).to_be_enabled()
        page.screenshot(path=str(shots / "04-preview.png"), full_page=True)

        # The dialog shows owner, operation count and digest prefix; decline once.
        before = (_revisions(), _receipts(), get(keep.id).current_revision_id)
        apply_button.click()
        dialog = page.locator("#confirm-dialog")
        expect(dialog).to_be_visible()
        expect(dialog.locator("#confirm-owner")).to_contain_text(seeded["agent"])
        expect(dialog.locator("#confirm-count")).to_have_text("4")
        expect(dialog.locator("#confirm-digest")).to_have_text(digest)
        page.screenshot(path=str(shots / "05-dialog.png"), full_page=True)
        dialog.locator("#decline").click()
        expect(page.locator("#notice")).to_contain_text("nothing was changed")
        assert (_revisions(), _receipts(), get(keep.id).current_revision_id) == before
        assert get(seeded["old"].id).status == "active"

        # Preview again (the plan is kept in the box), apply with the confirmation.
        page.locator("#preview-button").click()
        page.locator("#apply-button").click()
        expect(page.locator("#confirm-dialog")).to_be_visible()
        page.locator("#confirm-dialog #confirm-apply").click()
        expect(page.locator("#outcome")).to_have_text("Applied.")
        receipt = page.locator("#receipt")
        expect(receipt).to_contain_text("plan-tidy-rust")
        expect(receipt).to_contain_text("tidy-rust-001")
        expect(receipt).to_contain_text("client_key e2e-rule")
        page.screenshot(path=str(shots / "06-receipt.png"), full_page=True)
        assert get(keep.id).text == "Production build requires Rust 1.80+ and Node 22."
        assert get(seeded["old"].id).status == "removed"
        assert _receipts() == 1
        applied_revisions = _revisions()

        # After a reload the receipt is read back from storage.
        page.reload()
        expect(page.locator("#receipt")).to_contain_text("tidy-rust-001")

        # "Check apply receipt" on a fresh Maintain memory… page, with the plan pasted.
        page.goto(f"{garden.base}/agents/{seeded['agent']}/maintain")
        page.locator("#plan-text").fill(_plan(seeded, keep.current_revision_id))
        page.locator("#check-receipt").click()
        expect(page.locator("#receipt-check")).to_contain_text("Committed")
        expect(page.locator("#receipt-check")).to_contain_text("plan-tidy-rust")

        # Replay: the preview says so, and applying shows the existing receipt, no dialog.
        page.locator("#preview-button").click()
        expect(page.locator("main")).to_contain_text("Already applied")
        page.locator("#apply-button").click()
        expect(page.locator("#outcome")).to_contain_text("stored receipt")
        assert (_revisions(), _receipts()) == (applied_revisions, 1)
        page.close()


def test_without_script_the_confirmation_is_a_page(
    browser: Any, seeded: dict[str, Any], wardian_home: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    with garden_server(wardian_home) as garden:
        context = browser.new_context(java_script_enabled=False)
        page = context.new_page()
        page.goto(garden.url)
        page.goto(f"{garden.base}/agents/{seeded['agent']}/maintain")
        page.locator("#plan-text").fill(_plan(seeded, seeded["keep"].current_revision_id))
        page.locator("#preview-button").click()
        page.locator("#apply-button").click()
        expect(page.locator("#confirm-count")).to_have_text("4")
        page.screenshot(path=str(tmp_path / "confirm-page.png"), full_page=True)
        page.locator("#decline").click()
        expect(page.locator("#notice")).to_contain_text("nothing was changed")
        assert _receipts() == 0
        context.close()


def test_chromium_is_where_ci_installs_it() -> None:
    if os.environ.get("CI") == "true":
        assert shutil.which("chromium") == CHROMIUM, ".ci/run must install chromium"
    else:
        chromium_path()


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Another local server (another user's, say): records the Cookie header it gets."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Cookie") or "")
        body = b"<!doctype html><title>elsewhere</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_another_local_port_never_receives_gardens_cookie(
    browser: Any, wardian_home: Path
) -> None:
    seed_agent("ada")
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    serving = threading.Thread(target=other.serve_forever, daemon=True)
    serving.start()
    _Recorder.seen = []
    try:
        with garden_server(wardian_home) as garden:
            page = browser.new_page()
            page.goto(garden.url)
            assert page.locator("body").inner_text().count("ada")
            cookies = page.context.cookies()
            assert [c["path"] for c in cookies] == [garden.base_path + "/"]
            port = other.server_address[1]
            for path in ("/", "/g/", f"/g/{'0' * 22}/", "/agents"):
                page.goto(f"http://127.0.0.1:{port}{path}")
            page.close()
    finally:
        other.shutdown()
        other.server_close()
    assert len(_Recorder.seen) >= 4  # the pages (and the favicons the browser asks for)
    assert all("garden" not in header for header in _Recorder.seen), _Recorder.seen
