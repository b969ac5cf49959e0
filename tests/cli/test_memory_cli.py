"""`wardian memory …` through the real CLI on a real memory.db (issue 2 points 4, 5, 8).

These run in-process with Typer's runner. The capability is minted with the real
`CapabilityStore`, bound to this (live) test process — exactly what `agent exec` does for
its own supervisor process; `tests/runtime/test_launch.py` covers the real launches.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from tests.conftest import invoke
from typer.testing import CliRunner

from wardian.memory.models import MAX_EVIDENCE_CHARS, MAX_LOCATOR_CHARS, MAX_SOURCES, MAX_TEXT_CHARS


def _agent(cli: CliRunner, name: str) -> str:
    result = invoke(cli, "agent", "add", name, "--provider", "claude", "--json")
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["id"])


def _capability(agent_id: str) -> dict[str, str]:
    from wardian._process import current
    from wardian.memory.capabilities import CapabilityStore
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    me = current()
    store = MemoryStore(open_memory_db())
    token = CapabilityStore(store.conn).mint(
        agent_id, pid=me.pid, started_at=me.started_at, workspace=None
    )
    return {"WARDIAN_AGENT_ID": agent_id, "WARDIAN_CAPABILITY": token}


def _records(home: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(home / "memory.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM records ORDER BY created_at").fetchall()
    finally:
        conn.close()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree to run in: the default workspace scope is its root."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    monkeypatch.chdir(root / "sub")
    return root.resolve()


@pytest.fixture
def agent(cli: CliRunner, workdir: Path) -> tuple[str, dict[str, str]]:
    agent_id = _agent(cli, "ada")
    return agent_id, _capability(agent_id)


def _save(cli: CliRunner, env: dict[str, str], text: str, *extra: str) -> dict[str, object]:
    result = invoke(cli, "memory", "save", text, "--evidence", "the user said so", *extra,
                    "--json", env=env)
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_save_defaults_to_stable_workspace_git_root_and_prints_spec_row(
    cli: CliRunner, agent: tuple[str, dict[str, str]], workdir: Path, wardian_home: Path
) -> None:
    agent_id, env = agent
    result = invoke(cli, "memory", "save", "Prefer concise technical handoffs",
                    "--evidence", "The user explicitly requested concise handoffs.", env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n").splitlines()[-1] == "Memory saved · This agent"
    [row] = _records(wardian_home)
    assert row["agent_id"] == agent_id
    assert row["kind"] == "stable"
    assert (row["scope_kind"], row["scope_path"]) == ("workspace", str(workdir))
    assert row["evidence"] == "The user explicitly requested concise handoffs."


def test_save_kind_scope_and_sources(cli: CliRunner, agent: tuple[str, dict[str, str]]) -> None:
    _, env = agent
    doc = _save(cli, env, "Release validation awaits a real-macOS run", "--kind", "current",
                "--scope", "agent", "--source", "file=docs/release.md",
                "--source", "url=https://example.test/a=b")
    assert doc["kind"] == "current"
    assert doc["scope"] == {"kind": "agent"}
    assert doc["sources"] == [
        {"source_type": "file", "locator": "docs/release.md", "primary": True},
        {"source_type": "url", "locator": "https://example.test/a=b", "primary": False},
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "forever"], "unknown kind"),
        (["--scope", "galaxy"], "unknown scope"),
        (["--source", "nolocator"], "TYPE=LOCATOR"),
    ],
)
def test_save_bad_values_exit_2_and_write_nothing(
    cli: CliRunner, agent: tuple[str, dict[str, str]], wardian_home: Path,
    args: list[str], message: str,
) -> None:
    _, env = agent
    result = invoke(cli, "memory", "save", "x", "--evidence", "y", *args, env=env)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert _records(wardian_home) == []


def test_empty_evidence_is_refused(
    cli: CliRunner, agent: tuple[str, dict[str, str]], wardian_home: Path
) -> None:
    _, env = agent
    result = invoke(cli, "memory", "save", "x", "--evidence", "  ", env=env)
    assert result.exit_code == 2
    assert "evidence" in result.stderr
    missing = invoke(cli, "memory", "save", "x", env=env)
    assert missing.exit_code == 2
    assert _records(wardian_home) == []


@pytest.mark.parametrize("field", ["text", "evidence"])
def test_caps_at_exactly_the_limit_and_one_over(
    cli: CliRunner, agent: tuple[str, dict[str, str]], wardian_home: Path, field: str
) -> None:
    _, env = agent
    limit = MAX_TEXT_CHARS if field == "text" else MAX_EVIDENCE_CHARS
    at, over = "a" * limit, "b" * (limit + 1)
    ok_args = [at, "--evidence", "e"] if field == "text" else ["t", "--evidence", at]
    bad_args = [over, "--evidence", "e"] if field == "text" else ["t", "--evidence", over]
    ok = invoke(cli, "memory", "save", *ok_args, "--json", env=env)
    assert ok.exit_code == 0, ok.output
    assert len(json.loads(ok.stdout)[field]) == limit  # stored whole, never cut
    bad = invoke(cli, "memory", "save", *bad_args, env=env)
    assert bad.exit_code == 2
    assert f"{limit + 1} characters; the limit is {limit}" in bad.stderr
    assert len(_records(wardian_home)) == 1


def test_source_caps_at_the_limit_and_one_over(
    cli: CliRunner, agent: tuple[str, dict[str, str]], wardian_home: Path
) -> None:
    _, env = agent
    at = [f"--source=file=f{i}" for i in range(MAX_SOURCES)]
    ok = invoke(cli, "memory", "save", "t", "--evidence", "e", *at, "--json", env=env)
    assert ok.exit_code == 0, ok.output
    assert len(json.loads(ok.stdout)["sources"]) == MAX_SOURCES
    over = [*at, "--source=file=one-more"]
    bad = invoke(cli, "memory", "save", "t", "--evidence", "e", *over, env=env)
    assert bad.exit_code == 2
    assert f"{MAX_SOURCES + 1} sources given" in bad.stderr
    long_ok = "x" * MAX_LOCATOR_CHARS
    ok2 = invoke(cli, "memory", "save", "t2", "--evidence", "e", "--source", f"url={long_ok}",
                 "--json", env=env)
    assert ok2.exit_code == 0, ok2.output
    bad2 = invoke(cli, "memory", "save", "t3", "--evidence", "e", "--source",
                  f"url={long_ok}y", env=env)
    assert bad2.exit_code == 2
    assert "locator" in bad2.stderr
    assert len(_records(wardian_home)) == 2


def test_prefix_resolution_ambiguity_and_other_agents_ids(
    cli: CliRunner, agent: tuple[str, dict[str, str]]
) -> None:
    _agent_id, env = agent
    ids = [str(_save(cli, env, f"memory number {i}")["id"]) for i in range(17)]
    # 17 ids over 16 hex digits: at least two share their first character.
    firsts = [i[0] for i in ids]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    ambiguous = invoke(cli, "memory", "show", shared, env=env)
    assert ambiguous.exit_code == 2
    assert "ambiguous" in ambiguous.stderr
    for full in ids:
        if full[0] == shared:
            assert full[:8] in ambiguous.stderr
    for form in (ids[0], ids[0][:8], ids[0].upper()):
        shown = invoke(cli, "memory", "show", form, "--json", env=env)
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["id"] == ids[0]
    # Another agent cannot see, update or remove these: "not found", never revealed.
    other_env = _capability(_agent(cli, "bo"))
    for command in (["show", ids[0]], ["history", ids[0][:8]],
                    ["update", ids[0], "--text", "hijack"], ["remove", ids[0]]):
        result = invoke(cli, "memory", *command, env=other_env)
        assert result.exit_code == 1, (command, result.output)
        assert "not found" in result.stderr
        assert "number" not in result.stderr
    assert invoke(cli, "memory", "list", "--json", env=other_env).stdout.strip() == "[]"
    nothing = invoke(cli, "memory", "show", "zzzz", env=env)
    assert nothing.exit_code == 1


def test_update_and_remove_keep_history(cli: CliRunner, agent: tuple[str, dict[str, str]]) -> None:
    agent_id, env = agent
    rid = str(_save(cli, env, "Build with make", "--kind", "current")["id"])
    updated = invoke(cli, "memory", "update", rid[:8], "--text", "Build with make test",
                     "--kind", "stable", "--scope", "agent", "--source", "file=Makefile",
                     "--reason", "more precise", env=env)
    assert updated.exit_code == 0, updated.output
    assert updated.stdout.rstrip("\n").splitlines()[-1] == "Memory updated · This agent"
    removed = invoke(cli, "memory", "remove", rid[:8], "--reason", "obsolete", env=env)
    assert removed.exit_code == 0, removed.output
    assert removed.stdout.rstrip("\n").splitlines()[-1] == "Memory removed · This agent"
    history = invoke(cli, "memory", "history", rid[:8], "--json", env=env)
    assert history.exit_code == 0
    revisions = json.loads(history.stdout)
    assert [r["seq"] for r in revisions] == [1, 2, 3]
    assert [r["snapshot"]["text"] for r in revisions] == [
        "Build with make", "Build with make test", "Build with make test"]
    assert [r["snapshot"]["status"] for r in revisions] == ["active", "active", "removed"]
    assert revisions[1]["snapshot"]["kind"] == "stable"
    assert revisions[1]["snapshot"]["scope"] == {"kind": "agent"}
    assert revisions[1]["reason"] == "more precise"
    assert revisions[2]["reason"] == "obsolete"
    assert {r["actor"] for r in revisions} == {f"agent:{agent_id}"}
    assert len({r["revision_id"] for r in revisions}) == 3
    shown = json.loads(invoke(cli, "memory", "show", rid, "--json", env=env).stdout)
    assert shown["status"] == "removed"
    assert shown["current_revision_id"] == revisions[-1]["revision_id"]
    assert shown["sources"] == [{"source_type": "file", "locator": "Makefile", "primary": False}]
    human = invoke(cli, "memory", "history", rid, env=env)
    assert "#3" in human.stdout and "obsolete" in human.stdout
    again = invoke(cli, "memory", "update", rid, "--text", "x", env=env)
    assert again.exit_code == 2
    assert "removed" in again.stderr
    assert invoke(cli, "memory", "remove", rid, env=env).exit_code == 2
    assert invoke(cli, "memory", "update", rid, env=env).exit_code == 2  # nothing to change
    listed = json.loads(invoke(cli, "memory", "list", "--json", env=env).stdout)
    assert listed == []
    with_removed = json.loads(invoke(cli, "memory", "list", "--all", "--json", env=env).stdout)
    assert [r["id"] for r in with_removed] == [rid]


def test_list_filters_and_human_lines(cli: CliRunner, agent: tuple[str, dict[str, str]]) -> None:
    _, env = agent
    a = _save(cli, env, "Agent-wide preference", "--scope", "agent")
    c = _save(cli, env, "Active checkpoint", "--kind", "current")
    kinds = json.loads(invoke(cli, "memory", "list", "--kind", "current", "--json", env=env).stdout)
    assert [r["id"] for r in kinds] == [c["id"]]
    scoped = json.loads(invoke(cli, "memory", "list", "--scope", "agent", "--json",
                               env=env).stdout)
    assert [r["id"] for r in scoped] == [a["id"]]
    human = invoke(cli, "memory", "list", env=env).stdout
    assert f"- [{str(a['id'])[:8]}] stable · agent: Agent-wide preference" in human
    assert f"- [{str(c['id'])[:8]}] current · workspace: Active checkpoint" in human
    assert invoke(cli, "memory", "list", "--kind", "bogus", env=env).exit_code == 2


def test_recall_without_query_is_the_startup_set_and_with_query_ranks(
    cli: CliRunner, agent: tuple[str, dict[str, str]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, env = agent
    cur = _save(cli, env, "Current: migrating the parser to tokens", "--kind", "current")
    ws = _save(cli, env, "Workspace convention: tests live in tests/", "--scope", "workspace")
    ag = _save(cli, env, "Prefer concise handoffs", "--scope", "agent")
    startup = json.loads(invoke(cli, "memory", "recall", "--json", env=env).stdout)
    assert [r["id"] for r in startup["records"]] == [cur["id"], ag["id"], ws["id"]]
    assert startup["omitted"] == 0
    human = invoke(cli, "memory", "recall", env=env).stdout
    assert human.startswith("## Recalled memory · workspace ")
    assert human.index(str(cur["id"])[:8]) < human.index(str(ag["id"])[:8])
    found = json.loads(invoke(cli, "memory", "recall", "parser tokens", "--json",
                              env=env).stdout)
    assert next(r["id"] for r in found["records"]) == cur["id"]
    limited = json.loads(invoke(cli, "memory", "recall", "concise OR tests OR parser",
                                "--limit", "1", "--json", env=env).stdout)
    assert len(limited["records"]) == 1
    # In another workspace only the agent-scoped record is recalled.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    other = json.loads(invoke(cli, "memory", "recall", "--json", env=env).stdout)
    assert [r["id"] for r in other["records"]] == [ag["id"]]


def test_recall_respects_budget_and_says_what_was_left_out(
    cli: CliRunner, agent: tuple[str, dict[str, str]]
) -> None:
    _, env = agent
    for i in range(5):
        _save(cli, env, f"record {i} " + "z" * 400)
    assert invoke(cli, "settings", "set", "memory.startup_budget_chars", "3000").exit_code == 0
    out = json.loads(invoke(cli, "memory", "recall", "--json", env=env).stdout)
    assert out["budget_chars"] == 3000
    assert len(out["records"]) + out["omitted"] == 5
    assert out["omitted"] > 0
    human = invoke(cli, "memory", "recall", env=env).stdout
    assert f"({out['omitted']} more record" in human and "not loaded" in human


def test_show_human_output(cli: CliRunner, agent: tuple[str, dict[str, str]]) -> None:
    _, env = agent
    rec = _save(cli, env, "Shown text", "--source", "file=a.md")
    out = invoke(cli, "memory", "show", str(rec["id"])[:8], env=env)
    assert out.exit_code == 0
    assert f"id:          {rec['id']}" in out.stdout
    assert f"revision:    {rec['current_revision_id']}" in out.stdout
    assert "source:      file=a.md (primary)" in out.stdout


def test_a_reader_that_goes_away_is_not_an_internal_error(
    cli: CliRunner, agent: tuple[str, dict[str, str]]
) -> None:
    import os
    import subprocess
    import sys

    _, env = agent
    _save(cli, env, "something to print")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written, like `| head -0`
    try:
        done = subprocess.run(
            [sys.executable, "-m", "wardian", "memory", "list", "--json"],
            env={**os.environ, **env}, stdout=write_end, stderr=subprocess.PIPE, text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


@pytest.mark.skipif(sys.platform == "win32", reason="Windows cannot delete a process's cwd")
def test_a_deleted_current_directory_is_a_usage_error(
    cli: CliRunner, agent: tuple[str, dict[str, str]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, wardian_home: Path,
) -> None:
    _, env = agent
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    for argv in (["save", "x", "--evidence", "y"], ["recall"]):
        result = invoke(cli, "memory", *argv, env=env)
        assert result.exit_code == 2, result.output
        assert "current directory no longer exists" in result.stderr
    assert _records(wardian_home) == []
    agent_scoped = invoke(cli, "memory", "save", "x", "--evidence", "y", "--scope", "agent",
                          env=env)
    assert agent_scoped.exit_code == 0, agent_scoped.output
