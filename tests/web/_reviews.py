"""Seed an agent whose memory a real ``memory-review`` run finds ≥3 things to do in, and
draft the review through the real CLI (the builtin rules reviewer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.web._support import save, save_aged, seed_agent

REVIEWER = {"reviewer": {"target_type": "temporary_provider", "provider": "builtin",
                         "model": "curator-rules"}}


def seed_reviewable(name: str = "ada") -> tuple[str, dict[str, str]]:
    """Agent `name` with a duplicate pair, a contradiction and a stale ``current``
    checkpoint, plus a record nothing touches; returns (agent id, name -> record id).
    Saved in order, so each pair's second record is the later one."""
    agent = seed_agent(name)
    texts = {
        "lint": ("Lint the changelog before tagging", "stable"),
        "lint_again": ("Always lint the changelog before tagging", "stable"),
        "yarn": ("Use yarn for the storybook", "stable"),
        "never_yarn": ("Never use yarn for the storybook", "stable"),
        "plain": ("The storybook lives in packages/ui", "stable"),
    }
    ids = {key: save(agent, text, kind=kind, evidence=text).id
           for key, (text, kind) in texts.items()}
    ids["stale"] = save_aged(agent, "The invoice export rewrite is half done", days=40)
    return agent, ids


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``wardian`` CLI for data directory `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, env=env, check=False)


def draft_review(home: Path, name: str = "ada") -> dict[str, Any]:
    """Run the shipped ``memory-review`` blueprint for `name`; returns the pending review
    as ``garden memory reviews --format json`` lists it."""
    done = cli(home, "automation", "run", "start", "memory-review", "--agent", name,
               "--assignments", json.dumps(REVIEWER), "--wait", "--json")
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr)
    listed = cli(home, "garden", "memory", "reviews", "--agent", name, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    review: dict[str, Any] = json.loads(listed.stdout)["reviews"][0]
    assert review["state"] == "pending", review
    return review


def plan_operations(run_id: str) -> list[dict[str, Any]]:
    """The review's drafted operations, as stored."""
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.reviews import load_review

    review = load_review(open_state_db(), open_memory_db(), run_id)
    assert review.plan is not None
    return list(review.plan["operations"])


def memory_rows() -> list[tuple[Any, ...]]:
    """Every record, the revision count and the receipt count: what "nothing changed"
    compares."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    records = store.conn.execute(
        "SELECT id, text, status, current_revision_id, updated_at FROM records "
        "ORDER BY id").fetchall()
    revisions = store.conn.execute("SELECT COUNT(*) FROM revisions").fetchone()[0]
    receipts = store.conn.execute(
        "SELECT COUNT(*) FROM maintenance_receipts").fetchone()[0]
    return [tuple(r) for r in records] + [("revisions", revisions), ("receipts", receipts)]
