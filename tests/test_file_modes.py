"""Every file and directory Wardian creates is private, whatever the umask (issue 15 point 3):
directories 0700, files 0600 (databases with their -wal/-shm, run files, logs, plans, the
user library); an existing wider data directory is tightened with a one-line notice."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")


def wardian(home: Path, *args: str, umask: int = 0o022) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "wardian", *args], capture_output=True, text=True, env=env,
        timeout=120, preexec_fn=lambda: os.umask(umask),
    )


def modes(root: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_everything_created_under_a_permissive_umask_is_private(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "home"  # missing parents are created too
    assert wardian(home, "agent", "add", "ada", "--provider", "claude").returncode == 0
    assert wardian(home, "settings", "set", "agent_memory.enabled", "true").returncode == 0
    saved = wardian(home, "agent", "exec", "ada", "--", sys.executable, "-m", "wardian",
                    "memory", "save", "Prefer small commits", "--evidence", "user said so")
    assert saved.returncode == 0, saved.stderr
    assert wardian(home, "library", "init").returncode == 0
    found = modes(home)
    assert {"memory.db", "state.db", "library", "run"} <= set(found), sorted(found)
    assert any(name.endswith("-wal") for name in found), sorted(found)
    wrong = {name: f"{mode:04o}" for name, mode in found.items()
             if mode != (0o700 if (home / name).is_dir() else 0o600)}
    assert wrong == {}
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o700


def test_an_existing_wider_data_directory_and_database_are_tightened(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    conn = sqlite3.connect(home / "state.db")  # left by an older Wardian, say
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    os.chmod(home / "state.db", 0o644)
    first = wardian(home, "settings", "list")
    assert first.returncode == 0, first.stderr
    notice = [line for line in first.stderr.splitlines() if line.strip()]
    assert len(notice) == 1 and "0755 -> 0700" in notice[0] and str(home) in notice[0]
    assert modes(home)["."] == 0o700 and modes(home)["state.db"] == 0o600
    again = wardian(home, "settings", "list")
    assert again.returncode == 0 and again.stderr == ""


def test_data_dir_that_is_a_regular_file_is_our_error(tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    for args in (("settings", "list"), ("agent", "list"), ("memory", "list")):
        result = wardian(home, *args)
        assert result.returncode in (2, 3), (args, result.stderr)
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    result = wardian(home, "settings", "list")
    assert result.returncode == 2
    assert result.stderr.startswith(f"Error: the data directory {home} is not a directory")
    assert "WARDIAN_HOME" in result.stderr
    assert home.read_text() == "not a folder"
    nested = wardian(home / "below", "settings", "list")
    assert nested.returncode == 2 and "is a file" in nested.stderr, nested.stderr


def test_every_plan_file_a_command_writes_is_private(tmp_path: Path) -> None:
    # Plans quote the agent's memory, like the database: `garden memory stale --draft-plan`,
    # `garden memory retire|revise --output` and the agent's `memory draft-plan --output`
    # all write 0600 files, creating a missing directory as 0700 (issue 15 point 3).
    home, out = tmp_path / "home", tmp_path / "plans"
    assert wardian(home, "agent", "add", "ada", "--provider", "claude",
                   "--workspace", str(tmp_path)).returncode == 0
    assert wardian(home, "settings", "set", "agent_memory.enabled", "true").returncode == 0
    saved = wardian(home, "agent", "exec", "ada", "--", sys.executable, "-m", "wardian",
                    "memory", "save", "Migrating the billing tables", "--kind", "current",
                    "--scope", "agent", "--evidence", "user said so")
    assert saved.returncode == 0, saved.stderr
    conn = sqlite3.connect(home / "memory.db")
    (record_id,) = conn.execute("SELECT id FROM records").fetchone()
    with conn:
        conn.execute("UPDATE records SET updated_at = '2020-01-01T00:00:00Z'")
    conn.close()
    commands = {
        "stale.json": ("garden", "memory", "stale", "--agent", "ada", "--draft-plan"),
        "retire.json": ("garden", "memory", "retire", record_id, "--agent", "ada",
                        "--reason", "done", "--output"),
        "revise.json": ("garden", "memory", "revise", record_id, "--agent", "ada",
                        "--text", "Billing tables migrated", "--output"),
    }
    for name, args in commands.items():
        result = wardian(home, *args, str(out / name))
        assert result.returncode == 0, (name, result.stderr)
    drafted = wardian(home, "agent", "exec", "ada", "--", sys.executable, "-m", "wardian",
                      "memory", "draft-plan", record_id, "--output", str(out / "draft.json"))
    assert drafted.returncode == 0, drafted.stderr
    assert modes(out) == {".": 0o700, "stale.json": 0o600, "retire.json": 0o600,
                          "revise.json": 0o600, "draft.json": 0o600}
