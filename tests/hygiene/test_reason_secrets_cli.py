"""Every CLI command that takes a free-text ``--reason`` (``memory update``, ``memory
remove``, ``garden memory retire``) refuses a reason holding a secret: exit 2, the detector
named, the value never printed, nothing stored — no revision, no changed record, no plan
file, no byte of the value anywhere in the data directory. ``garden memory revise``, the
other one-record command built from typed text, refuses a secret in its text or evidence
the same way.

Real parts: the real CLI in child processes (`tests.e2e._support.W`) on the test's SQLite
data directory; the agent's commands run inside a real ``wardian agent exec`` launch with
the capability it mints. The secrets are made up for this test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import building_home, copy_home
from tests.e2e._support import W

SECRETS = {
    "url-password": ("retired: postgres://app:Kx9!vLq2@db/app", "Kx9!vLq2",
                     "Basic Auth Credentials"),
    "password-is": ("the password is Blau#Wal77", "Blau#Wal77", "Password Assignment"),
}
WARDIAN = (sys.executable, "-m", "wardian")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Agent bob with memory on and one record saved inside its launch, built once for
    the module by the real CLI (each test refuses its secret in its own copy)."""
    root = tmp_path_factory.mktemp("bob")
    with building_home(root) as home:
        w = W(home)
        w.run("settings", "set", "agent_memory.enabled", "true")
        w.run("agent", "add", "bob", "--provider", "claude", "--workspace", str(root))
        w.run("agent", "exec", "bob", "--", *WARDIAN, "memory", "save", "Deploy from CI",
              "--evidence", "the user said so", "--scope", "agent")
    return home


@pytest.fixture
def w(prepared: Path, wardian_home: Path) -> W:
    copy_home(prepared, wardian_home)
    return W(wardian_home)


def _record(w: W) -> dict[str, object]:
    [record] = w.records("bob", include_removed=True)
    return record


def _everything(home: Path) -> bytes:
    """Every byte under the data directory (databases, their WAL, logs, caches)."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def _assert_refused(w: W, done: object, value: str, detector: str, field: str,
                    before: dict[str, object], history: int, action: str) -> None:
    import subprocess

    assert isinstance(done, subprocess.CompletedProcess)
    shown = done.stdout + done.stderr
    assert done.returncode == 2, shown
    assert f"{detector} in {field} looks like a secret" in done.stderr, done.stderr
    assert f"{action} stored nothing (the value is not shown)" in done.stderr, done.stderr
    assert value not in shown, shown
    assert _record(w) == before
    rid = str(before["id"])
    assert len(w.json("garden", "memory", "history", rid)["revisions"]) == history
    assert value.encode() not in _everything(w.home)


@pytest.mark.parametrize("secret", list(SECRETS))
@pytest.mark.parametrize("command", ["memory-update", "memory-remove",
                                     "garden-memory-retire"])
def test_a_reason_with_a_secret_is_refused_by_the_cli(
    w: W, tmp_path: Path, command: str, secret: str
) -> None:
    text, value, detector = SECRETS[secret]
    before = _record(w)
    rid = str(before["id"])
    plan = tmp_path / "plan.json"
    action = command.replace("-", " ")
    if command == "memory-update":
        argv: tuple[str, ...] = ("agent", "exec", "bob", "--", *WARDIAN, "memory", "update",
                                 rid, "--text", "Deploy from CI only", "--reason", text)
    elif command == "memory-remove":
        argv = ("agent", "exec", "bob", "--", *WARDIAN, "memory", "remove", rid,
                "--reason", text)
    else:
        argv = ("garden", "memory", "retire", rid, "--agent", "bob", "--reason", text)
    _assert_refused(w, w.run(*argv, check=False), value, detector, "reason", before, 1, action)
    if command == "garden-memory-retire":
        # Nor may the plan it would write for `garden maintain` hold the secret.
        done = w.run(*argv, "--output", str(plan), check=False)
        _assert_refused(w, done, value, detector, "reason", before, 1, action)
        assert not plan.exists()
        # The preview and --json paths are refused the same way.
        done = w.run(*argv, "--json", check=False)
        _assert_refused(w, done, value, detector, "reason", before, 1, action)


@pytest.mark.parametrize("field", ["text", "evidence"])
def test_a_one_record_revise_with_a_secret_is_refused_by_the_cli(
    w: W, tmp_path: Path, field: str
) -> None:
    text, value, detector = SECRETS["password-is"]
    before = _record(w)
    rid = str(before["id"])
    plan = tmp_path / "plan.json"
    action = "garden memory revise"
    argv = ("garden", "memory", "revise", rid, "--agent", "bob", f"--{field}",
            f"Deploy from CI; {text}")
    _assert_refused(w, w.run(*argv, check=False), value, detector, field, before, 1, action)
    done = w.run(*argv, "--output", str(plan), check=False)
    _assert_refused(w, done, value, detector, field, before, 1, action)
    assert not plan.exists()


def test_a_clean_reason_is_still_kept(w: W) -> None:
    """The refusals above are the scanner's, not a refusal of every reason."""
    rid = str(_record(w)["id"])
    w.run("agent", "exec", "bob", "--", *WARDIAN, "memory", "remove", rid, "--reason",
          "the password lives in 1Password item 'Deploy DB'")
    after = _record(w)
    assert after["status"] == "removed", after
    history = w.json("garden", "memory", "history", rid)["revisions"]
    assert [h["reason"] for h in history][-1] == (
        "the password lives in 1Password item 'Deploy DB'"), json.dumps(history)
