"""`wardian garden memory import|export` and `wardian memory import` through the real CLI
on real stores (issue 16): instruction files become a previewed, confirmed plan; exports
round-trip into a fresh store with the same ids, revisions and sources."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.mcp.conftest import add_agent, capability_env
from tests.terminal import on_terminal, without_terminal
from typer.testing import CliRunner, Result

CLAUDE_MD = """# Team rules

- Feature flags live in config/flags.yaml, never in code
- Database migrations are append-only
- [ ] tidy the README
- See:
  - Staging deploys need a green nightly run
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "svc"
    (root / ".git").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(CLAUDE_MD)
    monkeypatch.chdir(root)
    return root.resolve()


def _json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _records(home: Path) -> list[sqlite3.Row]:
    if not (home / "memory.db").exists():
        return []
    conn = sqlite3.connect(home / "memory.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM records ORDER BY text").fetchall()
    finally:
        conn.close()


def test_import_previews_then_applies_only_with_the_digest(
    cli: CliRunner, project: Path, wardian_home: Path
) -> None:
    add_agent("ada")
    preview = _json(invoke(cli, "garden", "memory", "import", "CLAUDE.md", "--agent", "ada",
                           "--preview-only", "--json"))
    assert preview["applied"] is None
    plan = json.loads(Path(str(preview["plan_path"])).read_text())
    ops = plan["operations"]
    assert [op["text"] for op in ops] == [
        "Feature flags live in config/flags.yaml, never in code",
        "Database migrations are append-only",
        "Staging deploys need a green nightly run",
    ]
    assert ops[0]["evidence_excerpt"] == "- Feature flags live in config/flags.yaml, never in code"
    assert ops[0]["sources"] == [{"source_type": "file", "primary": True,
                                  "locator": f"{project / 'CLAUDE.md'}#L3"}]
    assert ops[2]["sources"][0]["locator"].endswith("CLAUDE.md#L7")
    assert ops[0]["scope"] == {"kind": "workspace", "path": str(project)}
    assert _records(wardian_home) == []

    # No terminal: refused, nothing written.
    refused = without_terminal("garden", "memory", "import", "CLAUDE.md", "--agent", "ada",
                               stdin="yes\n")
    assert refused.exit_code == 3, refused.stderr
    assert _records(wardian_home) == []
    wrong = invoke(cli, "garden", "memory", "import", "CLAUDE.md", "--agent", "ada",
                   "--confirm", "sha256:000000000000")
    assert wrong.exit_code == 2 and _records(wardian_home) == []

    digest = str(preview["preview"]["digest_prefix"])
    answered = on_terminal("garden", "memory", "import", "CLAUDE.md", "--agent", "ada",
                           "--confirm", digest, "--json", answer="yes")
    assert answered.exit_code == 0, answered.stderr
    applied = json.loads(answered.stdout)
    assert len(applied["applied"]["receipt"]["created"]) == 3
    assert len(_records(wardian_home)) == 3
    again = invoke(cli, "garden", "memory", "import", "CLAUDE.md", "--agent", "ada")
    assert again.exit_code == 0 and "Nothing to import" in again.stdout
    assert "3 already remembered" in again.stdout


def test_agent_import_only_drafts_a_plan(cli: CliRunner, project: Path,
                                         wardian_home: Path) -> None:
    agent_id = add_agent("ada")
    refused = invoke(cli, "memory", "import", "CLAUDE.md")
    assert refused.exit_code == 3
    env = capability_env(agent_id)
    result = invoke(cli, "memory", "import", "CLAUDE.md", "--output", "plan.json", env=env)
    assert result.exit_code == 0, result.output
    plan = json.loads((project / "plan.json").read_text())
    assert plan["agent_id"] == agent_id and len(plan["operations"]) == 3
    assert _records(wardian_home) == []
    assert "garden maintain preview" in result.stdout
    # The operator previews the agent's draft with the usual command.
    preview = invoke(cli, "garden", "maintain", "preview", "plan.json", "--agent", "ada")
    assert preview.exit_code == 0, preview.output


def test_export_markdown_groups_by_scope_and_kind(cli: CliRunner, project: Path) -> None:
    agent_id = add_agent("ada")
    env = capability_env(agent_id)
    for text, extra in (("Prefers short answers", ["--scope", "agent"]),
                        ("Release branch is cut on Thursdays", []),
                        ("Working on the flaky upload test", ["--kind", "current"])):
        assert invoke(cli, "memory", "save", text, "--evidence", "said", *extra,
                      env=env).exit_code == 0
    out = invoke(cli, "garden", "memory", "export", "--agent", "ada", "--include-history")
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert text.index("## Agent scope") < text.index(f"## Workspace {project}")
    assert text.index("### Stable\n\n- Release branch") < text.index("### Current")
    assert "- Prefers short answers — `" in text and "updated 20" in text  # a UTC time
    assert "  - #1 `" in text


def test_export_output_into_a_new_folder_is_written_whole(
        cli: CliRunner, project: Path, tmp_path: Path) -> None:
    # Operator trial: `--output` under a folder that did not exist yet was "internal error:
    # FileNotFoundError". It is created as plan files' folders are (0700), and the file is
    # written atomically, so an interrupted export leaves no half file.
    agent_id = add_agent("ada")
    assert invoke(cli, "memory", "save", "Release branch is cut on Thursdays", "--evidence",
                  "said", env=capability_env(agent_id)).exit_code == 0
    target = tmp_path / "exports" / "2026" / "ada.json"
    out = invoke(cli, "garden", "memory", "export", "--agent", "ada", "--format", "json",
                 "--output", str(target))
    assert out.exit_code == 0, out.output
    assert json.loads(target.read_text())["records"][0]["text"].startswith("Release branch")
    assert (target.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["ada.json"]  # no temp file left
    for folder in (str(tmp_path), ""):
        refused = invoke(cli, "garden", "memory", "export", "--agent", "ada",
                         "--output", folder)
        assert refused.exit_code == 2, refused.output
        assert "--output" in refused.stderr and "directory" in refused.stderr


def test_json_export_round_trips_into_a_fresh_store(
    cli: CliRunner, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    wardian_home: Path
) -> None:
    agent_id = add_agent("ada")
    env = capability_env(agent_id)
    saved = json.loads(invoke(cli, "memory", "save", "Use the EU region for storage",
                              "--evidence", "ops said so", "--source", "ticket=OPS-12",
                              "--source", "file=docs/regions.md", "--json", env=env).stdout)
    assert invoke(cli, "memory", "update", saved["id"], "--text", "Use eu-west-1 for storage",
                  "--reason", "precise", env=env).exit_code == 0
    gone = json.loads(invoke(cli, "memory", "save", "Old note", "--evidence", "e", "--json",
                             env=env).stdout)
    assert invoke(cli, "memory", "remove", gone["id"], "--reason", "stale",
                  env=env).exit_code == 0
    exported = invoke(cli, "garden", "memory", "export", "--agent", "ada", "--format", "json",
                      "--output", str(tmp_path / "ada.json"))
    assert exported.exit_code == 0, exported.output
    before = json.loads((tmp_path / "ada.json").read_text())

    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    monkeypatch.setenv("WARDIAN_HOME", str(fresh))
    add_agent("ada2")
    blind = without_terminal("garden", "memory", "import", str(tmp_path / "ada.json"),
                             "--agent", "ada2", "--format", "json")  # no terminal: refused
    assert blind.exit_code == 3 and "controlling terminal" in blind.stderr
    assert _records(fresh) == []
    from wardian.memory.portable import document_digest

    digest = document_digest((tmp_path / "ada.json").read_bytes())
    answered = on_terminal("garden", "memory", "import", str(tmp_path / "ada.json"),
                           "--agent", "ada2", "--format", "json", "--confirm", digest, "--json",
                           answer="yes")
    assert answered.exit_code == 0, answered.stderr
    restored = json.loads(answered.stdout)
    assert restored["records"] == 2 and restored["revisions"] == 4
    after = json.loads(invoke(cli, "garden", "memory", "export", "--agent", "ada2",
                              "--format", "json").stdout)
    strip = ("agent_id",)
    assert [{k: v for k, v in r.items() if k not in strip} for r in after["records"]] == \
        [{k: v for k, v in r.items() if k not in strip} for r in before["records"]]
    # Restoring twice is a conflict, and writes nothing.
    twice = on_terminal("garden", "memory", "import", str(tmp_path / "ada.json"), "--agent",
                        "ada2", "--format", "json", "--confirm", digest, answer="yes")
    assert twice.exit_code == 4, twice.stderr
    assert len(_records(fresh)) == 2
    # (before the recall below: its capability makes this process a managed launch)
    # Recall works on restored records (the FTS index followed the insert).
    new_id = after["agent"]["id"]
    found = json.loads(invoke(cli, "memory", "recall", "eu-west-1", "--json",
                              env=capability_env(new_id)).stdout)
    assert [r["id"] for r in found["records"]] == [saved["id"]]
