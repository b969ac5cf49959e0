"""Direct save and update: secrets refused, duplicates returned, private keys refusable.

Through the real CLI on a real memory.db; the secrets are built at run time.
"""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.test_memory_cli import _capability, _records
from tests.conftest import invoke

_RNG = random.Random(1414)


def _r(n: int, alphabet: str = string.ascii_uppercase + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


@pytest.fixture
def env(cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    result = invoke(cli, "agent", "add", "ada", "--provider", "claude", "--json")
    assert result.exit_code == 0, result.output
    return _capability(json.loads(result.stdout)["id"])


def _revisions(home: Path) -> int:
    conn = sqlite3.connect(home / "memory.db")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM revisions").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("field", ["text", "evidence", "source"])
def test_save_refuses_a_secret_naming_detector_and_field(
    cli: CliRunner, env: dict[str, str], wardian_home: Path, field: str
) -> None:
    key = "AKIA" + _r(16)
    text, evidence, extra = "Deploy with the CI role", "the user said so", []
    if field == "text":
        text = f"Deploy key is {key}"
    elif field == "evidence":
        evidence = f"use {key} to deploy"
    else:
        extra = ["--source", f"url=https://example.com/?k={key}"]
    result = invoke(cli, "memory", "save", text, "--evidence", evidence, *extra, env=env)
    assert result.exit_code == 2, result.output
    assert key not in result.stderr and key not in result.stdout
    where = {"text": "text", "evidence": "evidence", "source": "sources[0].locator"}[field]
    assert f"AWS Access Key in {where}" in result.stderr
    assert "1Password" in result.stderr
    assert _records(wardian_home) == []


def test_save_refuses_a_plain_password_in_prose(
    cli: CliRunner, env: dict[str, str], wardian_home: Path
) -> None:
    secret = "Tr0ub" + "4dor&3"
    result = invoke(cli, "memory", "save",
                    f"The DB password should always be {secret} in staging.",
                    "--evidence", "said in chat", env=env)
    assert result.exit_code == 2
    assert "Password Assignment in text" in result.stderr
    assert secret not in result.stderr
    assert _records(wardian_home) == []


def test_a_private_key_block_after_double_dash_is_refused_not_misparsed(
    cli: CliRunner, env: dict[str, str], wardian_home: Path
) -> None:
    body = "\n".join(_r(64, string.ascii_letters + string.digits + "+/") for _ in range(4))
    block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    result = invoke(cli, "memory", "save", "--evidence", "pasted", "--", block, env=env)
    assert result.exit_code == 2, result.output
    assert "Private Key in text" in result.stderr
    assert body.splitlines()[0] not in result.stderr
    assert _records(wardian_home) == []
    # Without `--` the block is still the text (not an unknown option), and refused.
    bare = invoke(cli, "memory", "save", block, "--evidence", "pasted", env=env)
    assert bare.exit_code == 2 and "Private Key in text" in bare.stderr, bare.output
    typo = invoke(cli, "memory", "save", "text", "--evidnce", "x", env=env)
    assert typo.exit_code == 2
    # Text that merely starts with a dash is saved the same way.
    ok = invoke(cli, "memory", "save", "--evidence", "e", "--", "-v makes the tests chatty",
                env=env)
    assert ok.exit_code == 0, ok.output


def test_update_refuses_a_secret_and_keeps_the_record(
    cli: CliRunner, env: dict[str, str], wardian_home: Path
) -> None:
    saved = json.loads(invoke(cli, "memory", "save", "Deploy from CI", "--evidence", "e",
                              "--json", env=env).stdout)
    token = "ghp" + "_" + _r(36, string.ascii_letters + string.digits)
    result = invoke(cli, "memory", "update", saved["id"][:8], "--text",
                    f"Deploy with {token}", env=env)
    assert result.exit_code == 2
    assert "GitHub Token in text" in result.stderr and token not in result.stderr
    rows = _records(wardian_home)
    assert [r["text"] for r in rows] == ["Deploy from CI"]
    assert _revisions(wardian_home) == 1


def test_saving_the_same_text_twice_returns_the_first_record(
    cli: CliRunner, env: dict[str, str], wardian_home: Path
) -> None:
    args = ["memory", "save", "Use pnpm, not npm", "--evidence", "the user said so"]
    first = json.loads(invoke(cli, *args, "--json", env=env).stdout)
    assert first["unchanged"] is False
    again = invoke(cli, *args, env=env)
    assert again.exit_code == 0
    assert again.stdout.strip().splitlines()[-1] == "Memory unchanged · already saved"
    doc = json.loads(invoke(cli, *args, "--json", env=env).stdout)
    assert doc["unchanged"] is True and doc["id"] == first["id"]
    assert len(_records(wardian_home)) == 1 and _revisions(wardian_home) == 1
    # New evidence and a new source are added to it as one revision; repeating adds none.
    more = [*args[:3], "--evidence", "said again on Monday", "--source", "file=README.md"]
    added = json.loads(invoke(cli, *more, "--json", env=env).stdout)
    assert added["id"] == first["id"] and added["unchanged"] is False
    assert added["already_saved"] is True
    assert added["evidence"] == "said again on Monday"
    assert [s["locator"] for s in added["sources"]] == ["README.md"]
    assert json.loads(invoke(cli, *more, "--json", env=env).stdout)["unchanged"] is True
    assert len(_records(wardian_home)) == 1 and _revisions(wardian_home) == 2
    # Another kind or scope is another record.
    invoke(cli, *args, "--kind", "current", env=env)
    invoke(cli, *args, "--scope", "agent", env=env)
    assert len(_records(wardian_home)) == 3
