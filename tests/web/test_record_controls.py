"""The record page's controls in a real browser: Retire, Revise and Merge into… each build
a one-record plan, show the same preview (with its digest) and confirmation dialog as a
pasted plan, change nothing until the operator confirms, and end on the stored receipt;
the memory store then shows the change with the revision history kept. Screenshots of each
page (1400×1000) are written under the test's tmp dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.web._support import Garden, garden_server, get, save, seed_agent

pytestmark = pytest.mark.slow  # a browser per test; `make test-all` (CI) runs them

VIEWPORT = {"width": 1400, "height": 1000}


def _history(record_id: str) -> list[Any]:
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return store.history(record_id, agent_id=None)


def _receipts() -> int:
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    return int(store.conn.execute(
        "SELECT COUNT(*) FROM maintenance_receipts").fetchone()[0])


def _cli_show(home: Path, record_id: str) -> dict[str, Any]:
    """``wardian garden memory show ID --json`` through the real CLI."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-m", "wardian", "garden", "memory", "show", record_id, "--json"],
        capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _open_record(page: Any, garden: Garden, record_id: str) -> None:
    page.goto(garden.url)
    page.goto(f"{garden.base}/records/{record_id}")


def _confirm(page: Any, shots: Path, name: str) -> str:
    """On the preview: read the digest, open the dialog, check it shows the same digest,
    confirm; returns the digest prefix."""
    from playwright.sync_api import expect

    expect(page.locator("#conflict-count")).to_have_text("none")
    digest: str = page.locator("#digest-prefix").inner_text()
    assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 12
    page.screenshot(path=str(shots / f"{name}-preview.png"), full_page=True)
    page.locator("#apply-button").click()
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#confirm-count")).to_have_text("1")
    expect(dialog.locator("#confirm-digest")).to_have_text(digest)
    page.screenshot(path=str(shots / f"{name}-dialog.png"), full_page=True)
    dialog.locator("#confirm-apply").click()
    expect(page.locator("#outcome")).to_have_text("Applied.")
    page.screenshot(path=str(shots / f"{name}-receipt.png"), full_page=True)
    return digest


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder


def test_retire_from_the_record_page(
    browser: Any, wardian_home: Path, shots: Path
) -> None:
    from playwright.sync_api import expect

    agent = seed_agent("ada")
    note = save(agent, "Run the e2e suite by hand before each release")
    with garden_server(wardian_home) as garden:
        page = browser.new_page(viewport=VIEWPORT)
        _open_record(page, garden, note.id)
        page.screenshot(path=str(shots / "record.png"), full_page=True)
        page.locator("#retire summary").click()
        page.locator("#retire-reason").fill("Superseded by nightly validation.")
        page.locator("#retire-button").click()

        # The preview: the plain retirement, Before/After, and nothing changed yet.
        expect(page.locator("#counts")).to_contain_text("1 (retire 1)")
        expect(page.locator("main")).to_contain_text("Superseded by nightly validation.")
        assert get(note.id).status == "active" and _receipts() == 0

        # Decline once: back on the record, nothing changed.
        page.locator("#apply-button").click()
        page.locator("#confirm-dialog #decline").click()
        expect(page.locator("#notice")).to_contain_text("nothing was changed")
        assert get(note.id).status == "active" and _receipts() == 0

        page.locator("#retire summary").click()
        page.locator("#retire-reason").fill("Superseded by nightly validation.")
        page.locator("#retire-button").click()
        _confirm(page, shots, "retire")
        expect(page.locator(f'#receipt a[data-id="{note.id}"]')).to_have_count(1)
        assert _receipts() == 1
        shown = _cli_show(wardian_home, note.id)
        assert shown["status"] == "removed"
        history = _history(note.id)
        assert len(history) == 2 and history[0].snapshot["status"] == "active"
        assert history[-1].reason == "Superseded by nightly validation."
        page.locator("#back-to-record").click()
        expect(page.locator("#history li.revision")).to_have_count(2)
        expect(page.locator("#controls")).to_have_count(0)  # a removed record has none
        page.close()


def test_revise_from_the_record_page(
    browser: Any, wardian_home: Path, shots: Path
) -> None:
    from playwright.sync_api import expect

    agent = seed_agent("ada")
    note = save(agent, "Build needs Rust 1.79", kind="stable")
    first = note.current_revision_id
    with garden_server(wardian_home) as garden:
        page = browser.new_page(viewport=VIEWPORT)
        _open_record(page, garden, note.id)
        page.locator("#revise summary").click()
        expect(page.locator("#revise-text")).to_have_value("Build needs Rust 1.79")
        page.locator("#revise-text").fill("Build needs Rust 1.80 and Node 22")
        page.locator("#revise-kind").select_option("current")
        page.locator("#revise-scope").select_option("agent")
        page.screenshot(path=str(shots / "revise-form.png"), full_page=True)
        page.locator("#revise-button").click()

        expect(page.locator("#counts")).to_contain_text("1 (revise 1)")
        entry = page.locator("li.entry.revise")
        expect(entry).to_contain_text("Build needs Rust 1.79")  # Before
        expect(entry).to_contain_text("Build needs Rust 1.80 and Node 22")  # After
        assert get(note.id).text == "Build needs Rust 1.79" and _receipts() == 0
        _confirm(page, shots, "revise")
        assert _receipts() == 1
        shown = _cli_show(wardian_home, note.id)
        assert shown["text"] == "Build needs Rust 1.80 and Node 22"
        assert shown["kind"] == "current" and shown["scope"] == {"kind": "agent"}
        history = _history(note.id)
        assert history[0].revision_id == first and len(history) == 2
        assert history[0].snapshot["text"] == "Build needs Rust 1.79"
        page.locator("#back-to-record").click()
        expect(page.locator("#history li.revision")).to_have_count(2)
        expect(page.locator("h1 .badge.kind")).to_have_text("current")
        page.close()


def test_merge_into_another_record(
    browser: Any, wardian_home: Path, shots: Path
) -> None:
    from playwright.sync_api import expect

    from wardian.memory.models import Source

    agent = seed_agent("ada")
    keep = save(agent, "Build needs Rust 1.80")
    dup = save(agent, "Rust 1.80 is required",
               sources=[Source("artifact", "Cargo.toml", True)])
    other = seed_agent("bo")
    save(other, "Bo's own note")
    with garden_server(wardian_home) as garden:
        page = browser.new_page(viewport=VIEWPORT)
        _open_record(page, garden, dup.id)
        page.locator("#merge summary").click()
        options = page.locator("#merge-into option")
        expect(options).to_have_count(1)  # only ada's other active record; not itself
        expect(options.first).to_have_attribute("value", keep.id)
        page.locator("#merge-into").select_option(keep.id)
        page.locator("#merge-reason").fill("Same rule, kept once.")
        page.screenshot(path=str(shots / "merge-form.png"), full_page=True)
        page.locator("#merge-button").click()

        expect(page.locator("#counts")).to_contain_text("1 (retire_into 1)")
        expect(page.locator("#absorbed")).to_contain_text(dup.id)
        expect(page.locator("#absorbed")).to_contain_text(keep.id)
        assert get(dup.id).status == "active" and _receipts() == 0
        _confirm(page, shots, "merge")
        assert get(dup.id).status == "removed"
        kept = _cli_show(wardian_home, keep.id)
        assert "Cargo.toml" in [s["locator"] for s in kept["sources"]]
        assert len(_history(dup.id)) == 2 and len(_history(keep.id)) == 2
        page.close()


def test_copy_an_id_on_click(browser: Any, wardian_home: Path) -> None:
    from playwright.sync_api import expect

    agent = seed_agent("ada")
    note = save(agent, "Prefer short commit subjects")
    with garden_server(wardian_home) as garden:
        context = browser.new_context(viewport=VIEWPORT)
        context.grant_permissions(["clipboard-read", "clipboard-write"],
                                  origin=garden.root)
        page = context.new_page()
        page.goto(garden.url)
        page.goto(f"{garden.base}/agents/{agent}")
        item = page.locator(f'li[data-record="{note.id}"]')
        expect(item.locator("a.id")).to_have_text(note.id[:8])
        item.locator("button.copy").click()
        expect(item.locator("button.copy")).to_have_attribute("data-copied", "copied")
        assert page.evaluate("navigator.clipboard.readText()") == note.id
        context.close()


def test_queue_counts_and_every_page(
    browser: Any, wardian_home: Path, shots: Path
) -> None:
    """The queue lists stale checkpoints and flagged records per agent, the agents page
    counts them; and a screenshot of every page at 1400×1000."""
    from playwright.sync_api import expect

    from tests.web._support import flag, save_aged

    ada = seed_agent("ada")
    bo = seed_agent("bo")
    old = save_aged(ada, "Working on the parser rewrite", days=30)
    save_aged(ada, "Old but stable rule", days=30, kind="stable")  # stable: never stale
    save_aged(ada, "Fresh checkpoint", days=1)
    secret = save(ada, "The staging host answers on port 8443")
    flag(secret.id, "secret_detected: Private Key in text")
    save(bo, "Bo's tidy note")
    from wardian.memory.models import Scope

    at_home = save(ada, "The app builds with make", scope=Scope.workspace(
        Path.home() / "src" / "app"))
    with garden_server(wardian_home) as garden:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(garden.url)
        ada_row = page.locator(f'tr[data-agent="{ada}"]')
        expect(ada_row.locator('[data-queue="total"]')).to_have_text("2")
        expect(ada_row.locator('[data-queue="stale"]')).to_have_text("1")
        expect(ada_row.locator('[data-queue="flagged"]')).to_have_text("1")
        expect(ada_row.locator('[data-queue="reviews"]')).to_have_text("0")
        expect(page.locator(f'tr[data-agent="{bo}"] [data-queue="total"]')).to_have_text("0")
        page.screenshot(path=str(shots / "agents.png"), full_page=True)

        ada_row.locator("a.queue-link").click()
        section = page.locator(f"#queue-{ada}")
        expect(section.locator('[data-queue="total"]')).to_have_text("2")
        expect(section.locator(".stale li")).to_have_count(1)
        expect(section.locator(f'.stale li[data-record="{old}"]')).to_contain_text(
            "30 days ago")
        expect(section.locator(".flagged li")).to_contain_text("flagged: secret_detected")
        expect(page.locator(f'#queue-{bo} [data-queue="total"]')).to_have_text("0")
        stamp = section.locator(".stale time")
        assert "UTC" in (stamp.get_attribute("title") or "")
        assert (stamp.get_attribute("datetime") or "").endswith("Z")
        page.screenshot(path=str(shots / "queue.png"), full_page=True)

        # From the queue to the record, which offers the controls.
        section.locator(f'.stale li[data-record="{old}"] a.id').click()
        expect(page.locator("#controls")).to_be_visible()

        page.goto(f"{garden.base}/agents/{ada}")
        home_badge = page.locator(f'li[data-record="{at_home.id}"] .badge.scope')
        expect(home_badge).to_have_text("workspace ~/src/app")  # the server's home is ours
        for name, path in (("memory", f"/agents/{ada}"), ("record", f"/records/{old}"),
                           ("loaded", f"/agents/{ada}/loaded"), ("runs", "/runs"),
                           ("invokers", "/invokers"), ("maintain", f"/agents/{ada}/maintain")):
            page.goto(garden.base + path)
            expect(page.locator("main h1")).to_be_visible()
            page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        page.close()
    assert len(list(shots.glob("*.png"))) == 8


def test_retire_without_script(browser: Any, wardian_home: Path, shots: Path) -> None:
    """Without script the controls still work: the confirmation is a page of its own."""
    from playwright.sync_api import expect

    agent = seed_agent("ada")
    note = save(agent, "Run the e2e suite by hand before each release")
    with garden_server(wardian_home) as garden:
        context = browser.new_context(java_script_enabled=False, viewport=VIEWPORT)
        page = context.new_page()
        _open_record(page, garden, note.id)
        expect(page.locator("button.copy").first).to_be_hidden()  # copying needs script
        page.locator("#retire summary").click()
        page.locator("#retire-reason").fill("Nightly validation covers it.")
        page.locator("#retire-button").click()
        page.locator("#apply-button").click()
        expect(page.locator("#confirm-count")).to_have_text("1")
        page.screenshot(path=str(shots / "confirm-page.png"), full_page=True)
        assert get(note.id).status == "active"
        page.locator("#confirm-apply").click()
        expect(page.locator("#outcome")).to_have_text("Applied.")
        assert get(note.id).status == "removed" and _receipts() == 1
        context.close()
