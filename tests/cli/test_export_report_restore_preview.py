"""`garden memory import --preview-only` for every format, and the Markdown export as a
one-way report: the export and import commands run as real child processes on real SQLite
files under a temp WARDIAN_HOME."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.mcp.conftest import add_agent
from tests.terminal import on_terminal, without_terminal
from typer.testing import CliRunner


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "svc"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root.resolve()


def _seed() -> dict[str, str]:
    """An agent `ada` with an agent-scoped, a workspace-scoped and a removed record, written
    through the memory store (an agent's capability would make this test process a
    managed launch, where the operator commands under test are refused)."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    agent_id = add_agent("ada")
    store = MemoryStore(open_memory_db())
    ids = {}
    here = Scope.workspace(Path.cwd())
    for key, text, scope in (
            ("agent", "Prefers answers in British English", Scope.agent()),
            ("ws", "The nightly job runs at 02:00 in Lisbon", here),
            ("gone", "The staging cluster is called bramble", here)):
        ids[key] = store.save(agent_id, text, evidence="said so", scope=scope,
                              actor="test").id
    store.remove(agent_id, ids["gone"], actor="test", reason="renamed")
    return ids


def _record_count(home: Path) -> int:
    conn = sqlite3.connect(home / "memory.db")
    try:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    finally:
        conn.close()


def test_markdown_export_is_byte_identical_with_absolute_utc_times(
        cli: CliRunner, project: Path, tmp_path: Path) -> None:
    ids = _seed()
    first = without_terminal("garden", "memory", "export", "--agent", "ada",
                             "--include-history", cwd=project)
    assert first.returncode == 0, first.stderr
    second = without_terminal("garden", "memory", "export", "--agent", "ada",
                              "--include-history", "--output", str(tmp_path / "ada.md"),
                              cwd=project)
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "ada.md").read_bytes() == first.stdout.encode()
    text = first.stdout
    assert " ago" not in text and "just now" not in text
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    line = next(x for x in text.splitlines() if ids["ws"][:8] in x and x.startswith("- "))
    assert re.search(rf"updated {stamp}", line), line
    # Scopes stay visible; the removed record is listed apart, with its reason.
    assert "## Agent scope" in text and f"## Workspace {project}" in text
    assert text.index("## Removed") < text.index("bramble") and "renamed" in text


def test_markdown_export_says_it_is_a_one_way_report_and_import_refuses_it(
        cli: CliRunner, project: Path, tmp_path: Path, wardian_home: Path) -> None:
    _seed()
    report = tmp_path / "ada.md"
    out = without_terminal("garden", "memory", "export", "--agent", "ada", "--output",
                           str(report), cwd=project)
    assert out.returncode == 0, out.stderr
    head = "\n".join(report.read_text().splitlines()[:6])
    assert "one-way report" in head and "--format json" in head
    before = _record_count(wardian_home)
    for fmt in ("md", "json"):
        for extra in ([], ["--preview-only"]):
            refused = without_terminal("garden", "memory", "import", str(report), "--agent",
                                       "ada", "--format", fmt, *extra, cwd=project)
            assert refused.returncode == 2, (fmt, extra, refused.stdout, refused.stderr)
            assert "one-way report" in refused.stderr, refused.stderr
            assert "--format json" in refused.stderr
            assert "Traceback" not in refused.stderr
    assert _record_count(wardian_home) == before
    plans = wardian_home / "plans"
    assert not plans.exists() or not list(plans.iterdir())


def test_restore_preview_only_shows_the_preview_and_never_asks(
        cli: CliRunner, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed()
    backup = tmp_path / "ada.json"
    assert without_terminal("garden", "memory", "export", "--agent", "ada", "--format",
                            "json", "--output", str(backup), cwd=project).returncode == 0
    from wardian.memory.portable import document_digest

    digest = document_digest(backup.read_bytes())
    fresh = tmp_path / "fresh-home"
    fresh.mkdir(mode=0o700)
    monkeypatch.setenv("WARDIAN_HOME", str(fresh))
    add_agent("bea")

    # No terminal at all: the preview is shown, nothing is asked, exit 0, nothing written.
    blind = without_terminal("garden", "memory", "import", str(backup), "--agent", "bea",
                             "--format", "json", "--preview-only", cwd=project)
    assert blind.returncode == 0, blind.stderr
    assert "Type yes" not in blind.stdout + blind.stderr
    assert digest in blind.stdout and "3 record(s)" in blind.stdout
    assert "nothing was restored" in blind.stdout.lower()
    assert _record_count(fresh) == 0
    # On a terminal it does not ask either (nothing is typed; the run still ends).
    shown = on_terminal("garden", "memory", "import", str(backup), "--agent", "bea",
                        "--format", "json", "--preview-only", answer=None, cwd=project)
    assert shown.returncode == 0, shown.stderr
    assert "Type yes" not in shown.screen + shown.stdout
    # --json: the same preview as data.
    data = without_terminal("garden", "memory", "import", str(backup), "--agent", "bea",
                            "--format", "json", "--preview-only", "--json", cwd=project)
    assert data.returncode == 0, data.stderr
    preview: dict[str, Any] = json.loads(data.stdout)["preview"]
    assert preview["digest"] == digest
    assert preview["records"] == 3 and preview["active"] == 2 and preview["removed"] == 1
    assert preview["conflicts"] == []
    assert json.loads(data.stdout)["applied"] is None

    # After a real restore, the preview names the ids that would conflict (exit 0 still).
    done = on_terminal("garden", "memory", "import", str(backup), "--agent", "bea",
                       "--format", "json", answer="yes", cwd=project)
    assert done.returncode == 0, done.stderr
    again = without_terminal("garden", "memory", "import", str(backup), "--agent", "bea",
                             "--format", "json", "--preview-only", "--json", cwd=project)
    assert again.returncode == 0, again.stderr
    assert len(json.loads(again.stdout)["preview"]["conflicts"]) == 3
    assert _record_count(fresh) == 3
