"""Upgrade check: records of an older store that hold secrets are set aside once."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import invoke
from wardian._db import connect, migrate_user_version
from wardian.memory.db import open_memory_db
from wardian.memory.recall import load_startup_context
from wardian.memory.schema import FLAG_MIGRATION, MIGRATIONS
from wardian.memory.store import MemoryStore

_RNG = random.Random(4)
WS = "/work/project"


def _old_store(path: Path, agent_id: str, texts: list[tuple[str, str]]) -> None:
    """A memory.db as the release before the check wrote it (user_version 3)."""
    conn = connect(path)
    migrate_user_version(conn, MIGRATIONS[: FLAG_MIGRATION - 1])
    for index, (text, evidence) in enumerate(texts):
        rid = f"{index:08d}-0000-4000-8000-000000000000"
        conn.execute(
            "INSERT INTO records (id, agent_id, kind, scope_kind, scope_path, text, evidence,"
            " status, created_at, updated_at, current_revision_id)"
            " VALUES (?, ?, 'stable', 'workspace', ?, ?, ?, 'active', ?, ?, ?)",
            (rid, agent_id, WS, text, evidence, "2026-11-01T00:00:00.000000Z",
             f"2026-11-0{index + 1}T00:00:00.000000Z", f"rev-{index}"),
        )
    conn.execute(
        "INSERT INTO loaded_events (id, agent_id, created_at, context, record_ids_json, source)"
        " VALUES ('ev1', ?, '2026-11-02T00:00:00.000000Z', ?, '[]', 'launch')",
        (agent_id, "\n".join(f"- {text}" for text, _ in texts)),
    )
    conn.close()


def test_upgrade_flags_secret_records_once_and_hides_them(
    cli: CliRunner, wardian_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = json.loads(invoke(cli, "agent", "add", "ada", "--provider", "claude",
                              "--json").stdout)["id"]
    key = "AKIA" + "".join(_RNG.choice(string.ascii_uppercase) for _ in range(16))
    password = "Tr0ub" + "4dor&3"
    _old_store(wardian_home / "memory.db", agent, [
        ("Deploy staging with the release script", "the user said so"),
        (f"The deploy key is {key}", "pasted in chat"),
        ("Staging DB access works from the VPN", f"the password is {password}"),
    ])
    capsys.readouterr()
    store = MemoryStore(open_memory_db())
    notice = capsys.readouterr().err
    assert "set aside 2 memory record(s)" in notice
    assert f"wardian garden memory list --agent {agent[:8]} --flagged" in notice
    assert key not in notice
    rows = {r.text: r for r in store.list(agent)}
    assert len(rows) == 3 and all(r.status == "active" for r in rows.values())
    flagged = {t for t, r in rows.items() if r.flagged}
    assert flagged == {f"The deploy key is {key}", "Staging DB access works from the VPN"}
    context = load_startup_context(store, agent_id=agent, agent_name="ada", workspace=WS)
    assert [r.text for r in context.loaded] == ["Deploy staging with the release script"]
    assert key not in context.text
    recalled = store.index.recall(agent, "how do we deploy staging")
    assert [r.text for r in recalled] == ["Deploy staging with the release script"]
    logged = store.conn.execute("SELECT context FROM loaded_events").fetchone()[0]
    assert key not in logged and "[REDACTED:aws-access-key]" in logged
    # Checked once: opening again says nothing.
    MemoryStore(open_memory_db())
    assert capsys.readouterr().err == ""
    # The operator's review list shows them with the secret replaced.
    shown = invoke(cli, "garden", "memory", "list", "--agent", "ada", "--flagged")
    assert shown.exit_code == 0, shown.output
    assert "2 flagged record(s)" in shown.stdout and key not in shown.stdout
    assert "[REDACTED:aws-access-key]" in shown.stdout
    assert "SET ASIDE: secret_detected: AWS Access Key in text" in shown.stdout
    everything = invoke(cli, "garden", "memory", "list", "--agent", "ada")
    assert "2 record(s) set aside as holding a secret" in everything.stdout


def test_doctor_warns_about_records_set_aside(cli: CliRunner, wardian_home: Path) -> None:
    from wardian.app.doctor import run_doctor

    agent = json.loads(invoke(cli, "agent", "add", "ada", "--provider", "claude",
                              "--json").stdout)["id"]
    clean = run_doctor(["memory-hygiene"]).findings
    assert [f.status for f in clean] == ["ok"]
    token = "ghp" + "_" + "".join(_RNG.choice(string.ascii_letters + string.digits)
                                  for _ in range(36))
    _old_store(wardian_home / "memory.db", agent, [(f"deploy with {token}", "e")])
    MemoryStore(open_memory_db())
    [finding] = run_doctor(["memory-hygiene"]).findings
    assert finding.status == "warning" and "1 record(s)" in finding.message
    assert f"--agent {agent[:8]} --flagged" in (finding.fix or "")
    assert token not in finding.message
