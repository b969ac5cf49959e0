"""The human step of apply and restore: the confirmation is asked on the controlling
terminal, never taken from stdin or a flag alone; a caller without a terminal is refused
(exit 3) with the ways to apply; a wrong ``--confirm`` does not reveal the right digest.

Every run is a real child process (`tests.terminal`): one in a new session without a
controlling terminal, or one whose controlling terminal is a fresh pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.terminal import on_terminal, without_terminal

from wardian.config import open_state_db
from wardian.memory.maintenance.previews import PreviewCache

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals")


def child_env(kit: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDIAN_") or k == "WARDIAN_DATABASE_URL"}
    env["WARDIAN_HOME"] = str(kit.home)
    return env


def retire_plan(kit: Any) -> tuple[Path, Any]:
    old = kit.record("old")
    path = kit.write(kit.plan([{"op": "retire", "memory_id": old.id,
                                "expected_revision_id": old.current_revision_id,
                                "reason": "superseded"}]))
    return path, old


def preview(cli: Any, path: Path) -> dict[str, Any]:
    result = invoke(cli, "garden", "maintain", "preview", str(path), "--agent", "alice",
                    "--json")
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def apply_args(path: Path, *extra: str) -> tuple[str, ...]:
    return ("garden", "maintain", "apply", str(path), "--agent", "alice", *extra)


def test_no_terminal_is_refused_even_with_the_right_confirm_and_yes_on_stdin(
        kit: Any, cli: Any) -> None:
    path, old = retire_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    run = without_terminal(*apply_args(path, "--confirm", doc["digest_prefix"]),
                           stdin="yes\n", env=child_env(kit))
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert "controlling terminal" in run.stderr and "nothing was changed" in run.stderr
    # The way to apply is named: a terminal, or Garden's dialog.
    assert "in a terminal" in run.stderr and "Garden" in run.stderr
    assert kit.fingerprint() == before
    assert kit.store.get(old.id).status == "active"


def test_the_question_is_asked_on_the_terminal_even_with_the_right_confirm(
        kit: Any, cli: Any) -> None:
    path, old = retire_plan(kit)
    doc = preview(cli, path)
    run = on_terminal(*apply_args(path, "--confirm", doc["digest_prefix"]), answer="yes",
                      env=child_env(kit))
    assert run.returncode == 0, (run.screen, run.stderr)
    assert "Type yes" in run.screen and doc["digest_prefix"] in run.screen
    assert kit.owner.id in run.screen and "1 operation(s)" in run.screen
    assert "Applied: plan plan-test" in run.stdout
    assert kit.store.get(old.id).status == "removed"


def test_stdin_never_answers_for_the_terminal(kit: Any, cli: Any) -> None:
    path, _ = retire_plan(kit)
    preview(cli, path)
    before = kit.fingerprint()
    run = on_terminal(*apply_args(path), answer="no", stdin="yes\n", env=child_env(kit))
    assert run.returncode == 1 and "the operator declined" in run.stderr
    assert kit.fingerprint() == before


def test_json_output_still_asks_and_prints_only_the_receipt(kit: Any, cli: Any) -> None:
    path, _ = retire_plan(kit)
    preview(cli, path)
    run = on_terminal(*apply_args(path, "--json"), answer="y", env=child_env(kit))
    assert run.returncode == 0, run.stderr
    assert "Type yes" in run.screen
    assert json.loads(run.stdout)["replayed"] is False


@pytest.mark.parametrize("given", ["sha256:0123456789ab", "0123456789AB", "sha256:" + "ab" * 32,
                                   "yes", "sha256:", "123"])
def test_a_wrong_confirm_does_not_print_the_right_digest(
        kit: Any, cli: Any, given: str) -> None:
    path, _ = retire_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    run = on_terminal(*apply_args(path, "--confirm", given), answer="yes",
                      env=child_env(kit))
    assert run.returncode == 2, (run.screen, run.stderr)
    assert "--confirm" in run.stderr
    hexes = doc["preview_digest"].removeprefix("sha256:")
    for shown in (run.stdout, run.stderr, run.screen):
        assert hexes[:12] not in shown.lower()
    assert "Type yes" not in run.screen  # refused before anything is asked
    assert kit.fingerprint() == before


def test_a_dismissed_question_and_a_decline_change_nothing(kit: Any, cli: Any) -> None:
    path, _ = retire_plan(kit)
    doc = preview(cli, path)
    before = kit.fingerprint()
    run = on_terminal(*apply_args(path), answer="", env=child_env(kit))
    assert run.returncode == 1 and "declined" in run.stderr
    assert kit.fingerprint() == before
    cache = PreviewCache(open_state_db())  # a declined apply is a failed apply: review again
    assert cache.get(kit.owner.id, doc["preview_digest"]) is None


def test_replay_of_an_applied_plan_asks_nothing_and_needs_no_terminal(
        kit: Any, cli: Any) -> None:
    path, _ = retire_plan(kit)
    preview(cli, path)
    first = on_terminal(*apply_args(path, "--json"), answer="yes", env=child_env(kit))
    assert first.returncode == 0, first.stderr
    before = kit.fingerprint()
    again = without_terminal(*apply_args(path, "--json"), env=child_env(kit))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["replayed"] is True
    assert kit.fingerprint() == before


def test_one_record_retire_asks_on_the_terminal_too(kit: Any, cli: Any) -> None:
    record = kit.record("to retire")
    args = ("garden", "memory", "retire", record.id, "--agent", "alice", "--reason", "done")
    refused = without_terminal(*args, stdin="yes\n", env=child_env(kit))
    assert refused.returncode == 3, refused.stderr
    assert kit.store.get(record.id).status == "active"
    run = on_terminal(*args, answer="yes", env=child_env(kit))
    assert run.returncode == 0, (run.screen, run.stderr)
    assert kit.store.get(record.id).status == "removed"


def test_restore_asks_on_the_terminal_and_refuses_without_one(
        cli: Any, tmp_path: Path, wardian_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.portable import document_digest
    from wardian.memory.store import MemoryStore
    from wardian.runtime.agents import AgentRegistry

    def add(name: str) -> str:
        registry = AgentRegistry(open_state_db())
        return registry.add(name, provider="codex").id

    store = MemoryStore(open_memory_db())
    store.save(add("ada"), "exported one", evidence="e", kind="stable",
               scope=Scope.agent(), actor="test")
    export = tmp_path / "ada.json"
    result = invoke(cli, "garden", "memory", "export", "--agent", "ada", "--format", "json",
                    "--output", str(export))
    assert result.exit_code == 0, result.stderr
    digest = document_digest(export.read_bytes())
    fresh = tmp_path / "fresh-home"
    fresh.mkdir(mode=0o700)
    monkeypatch.setenv("WARDIAN_HOME", str(fresh))
    add("ada2")
    env = dict(os.environ)
    args = ("garden", "memory", "import", str(export), "--agent", "ada2", "--format", "json")

    def restored() -> int:
        found = MemoryStore(open_memory_db())
        return int(found.conn.execute("SELECT count(*) FROM records").fetchone()[0])

    refused = without_terminal(*args, "--confirm", digest, stdin="yes\n", env=env)
    assert refused.returncode == 3, refused.stderr
    assert "controlling terminal" in refused.stderr and "in a terminal" in refused.stderr
    wrong = on_terminal(*args, "--confirm", "sha256:0123456789ab", answer="yes", env=env)
    assert wrong.returncode == 2, wrong.stderr
    assert digest not in wrong.stderr and digest not in wrong.stdout
    assert "Type yes" not in wrong.screen
    declined = on_terminal(*args, answer="no", env=env)
    assert declined.returncode == 1 and "declined" in declined.stderr
    assert digest not in declined.stderr
    assert restored() == 0
    done = on_terminal(*args, "--confirm", digest, answer="yes", env=env)
    assert done.returncode == 0, (done.screen, done.stderr)
    assert "Type yes to restore" in done.screen and digest in done.screen
    assert "Restored 1 record(s)" in done.stdout
    assert restored() == 1
