"""The user's environment breaking is our error, never ``internal error`` (issue 15 point 5):
a full disk, a read-only data directory, arguments that are not UTF-8. Real processes on
real file systems: a small tmpfs that is filled up or remounted read-only (needs root and
mount permission, else skipped with the reason). The data dir being a file and 100,000-deep
YAML are in tests/test_file_modes.py and tests/blueprints/test_input_bounds.py."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wardian.errors import StoreError, UsageError
from wardian.oserrors import translate


def wardian(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDIAN_")}
    env["WARDIAN_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "wardian", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def ours(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stderr.startswith("Error: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted for this test (unmounted afterwards)."""
    yield from _tmpfs(tmp_path, "1m")


@pytest.fixture
def roomier_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs: room for the databases and more than doctor's free-space floor."""
    yield from _tmpfs(tmp_path, "8m")


def _tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> None:
    """Write until the file system is full."""
    with open(folder / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_a_full_disk_is_our_error_and_loses_nothing(small_disk: Path) -> None:
    home = small_disk / "home"
    assert wardian(home, "agent", "add", "ada", "--provider", "claude").returncode == 0
    fill(small_disk)
    message = ours(wardian(home, "agent", "add", "bob", "--provider", "claude"), 1)
    assert "full" in message and str(home) in message
    (small_disk / "filler").unlink()
    listed = wardian(home, "agent", "list", "--json")
    assert listed.returncode == 0 and '"ada"' in listed.stdout


def test_a_read_only_data_directory_is_our_error(small_disk: Path) -> None:
    home = small_disk / "home"
    assert wardian(home, "agent", "add", "ada", "--provider", "claude").returncode == 0
    assert wardian(home, "settings", "list").returncode == 0
    remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)],
                             capture_output=True, text=True)
    if remount.returncode != 0:
        pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
    for args in (("agent", "add", "bob", "--provider", "claude"),
                 ("settings", "set", "agent_memory.enabled", "true")):
        message = ours(wardian(home, *args), 1)
        assert "read-only" in message and "WARDIAN_HOME" in message, message


def test_a_read_only_database_file_is_worded_with_the_fix(tmp_path: Path) -> None:
    # As root the file mode does not stop writes, so take SQLite's own read-only error.
    db = tmp_path / "state.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.close()
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as info:
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()
    error = translate(info.value)
    assert isinstance(error, StoreError) and "read-only" in error.render()
    assert "chmod u+w" in error.render()


def test_os_conditions_map_to_our_errors() -> None:
    full = translate(OSError(errno.ENOSPC, "No space left on device", "/d/x.log"))
    assert isinstance(full, StoreError) and "/d/x.log" in full.render()
    assert isinstance(translate(OSError(errno.EROFS, "Read-only file system", "/d")),
                      StoreError)
    assert isinstance(translate(OSError(errno.ENOTDIR, "Not a directory", "/f/x")), UsageError)
    long = translate(OSError(errno.ENAMETOOLONG, "File name too long", "/" + "w" * 5000))
    assert isinstance(long, UsageError) and len(long.render()) < 300
    assert translate(ValueError("a bug")) is None  # real bugs stay bugs


@pytest.mark.skipif(os.name == "nt", reason="POSIX argv bytes")
def test_arguments_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for args in ((b"memory", b"save", b"\xff\xfe", b"--evidence", b"x"),
                 (b"agent", b"add", b"\xff", b"--provider", b"claude")):
        message = ours(wardian(home, *args), 2)
        assert "not valid UTF-8" in message and "argument 3" in message
    assert not (home / "state.db").exists()


def test_doctor_on_a_read_only_data_directory_names_the_cause(small_disk: Path) -> None:
    # Operator trial: every check that opens a database said "the check itself failed:
    # OperationalError: unable to open database file … report this", and the data-dir
    # check's fix was `chmod`, which cannot help on a read-only mount.
    import json

    home = small_disk / "home"
    assert wardian(home, "agent", "add", "ada", "--provider", "builtin").returncode == 0
    assert wardian(home, "settings", "set", "agent_memory.enabled", "true").returncode == 0
    remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)],
                             capture_output=True, text=True)
    if remount.returncode != 0:
        pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
    done = wardian(home, "doctor", "--json")
    assert done.returncode == 1, done.stderr
    findings = [f for check in json.loads(done.stdout)["checks"] for f in check["findings"]]
    problems = [f for f in findings if f["status"] == "problem"]
    assert problems
    for finding in problems:
        assert "the check itself failed" not in finding["message"], finding
        assert "report this" not in (finding["fix"] or ""), finding
    (data_dir,) = [f for f in problems if f["check"] == "data-dir"]
    assert "read-only" in data_dir["message"] and "chmod" not in data_dir["fix"], data_dir
    assert "WARDIAN_HOME" in data_dir["fix"]


def test_doctor_on_a_full_disk_says_full_not_damaged(roomier_disk: Path) -> None:
    """A healthy state.db on a full disk: doctor names the full disk (with the fix: free
    space), never "damaged" or "restore it from a backup", and no check fails itself;
    once space is freed the same files pass."""
    import json

    home = roomier_disk / "home"
    assert wardian(home, "agent", "add", "ada", "--provider", "builtin").returncode == 0
    assert wardian(home, "settings", "set", "agent_memory.enabled", "true").returncode == 0
    for leftover in home.glob("*.db-*"):  # as after a crash: SQLite must make them anew
        leftover.unlink()
    fill(roomier_disk)
    done = wardian(home, "doctor", "--json")
    assert done.returncode == 1, done.stderr
    findings = [f for check in json.loads(done.stdout)["checks"] for f in check["findings"]]
    problems = [f for f in findings if f["status"] == "problem"]
    for finding in findings:
        assert "damaged" not in finding["message"], finding
        assert "backup" not in (finding["fix"] or ""), finding
        assert "the check itself failed" not in finding["message"], finding
    full = [f for f in problems if f["check"] == "data-dir"]
    assert full and all("full" in f["message"] for f in full), problems
    assert any("free" in (f["fix"] or "") for f in full), full
    (roomier_disk / "filler").unlink()
    again = wardian(home, "doctor", "--json")
    findings = [f for check in json.loads(again.stdout)["checks"] for f in check["findings"]]
    assert not [f for f in findings if f["check"] == "data-dir" and f["status"] == "problem"]
