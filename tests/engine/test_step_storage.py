"""Step outputs are stored once (issue 13): where a later step's input holds an earlier
step's output unchanged, the stored input refers to it (step id, attempt, path) instead of
holding a rendered copy, and every reader (`run show`, the web page, a resume) still sees the
full values. Rows written before references existed (copies) read as they were stored.
An action whose output repeats data kept elsewhere (`archive.load`: the agent's archive)
stores a short form that readers see expanded (`OutputStorage`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import invoke
from tests.e2e._support import write_claude_session
from tests.engine.helpers import actions, create_run, write_blueprint
from typer.testing import CliRunner

from wardian._db import StateDB
from wardian.config import open_state_db
from wardian.engine.executor import execute_run, resume_run
from wardian.engine.runs import MIGRATIONS, RunStore

BUILTIN = {"curator": {"target_type": "temporary_provider", "provider": "builtin",
                       "model": "curator-rules"}}

TURNS = [
    ("user", "Please always use pnpm instead of npm in this repository, never yarn or bun."),
    ("assistant", "Understood: pnpm from now on, for installs and for every package script."),
    ("user", "We decided to pin Node 22 for this project because of the native addons."),
    ("assistant", "Pinned Node 22 in .nvmrc and in the engines field of package.json."),
    ("user", "The flaky checkout test was caused by a shared temp folder; give each test "
             "its own folder from now on."),
    ("assistant", "Each test now gets its own temporary folder; the flake is gone for good."),
    ("user", "Format with ruff format, not black, and keep lines at 99 characters."),
    ("assistant", "Switched the formatter to ruff format with a line length of 99."),
    ("user", "When a migration is unfinished, note which tables are done before you stop."),
    ("assistant", "Noted: the orders and invoices tables are migrated, payments is not yet."),
    ("user", "Thanks. Keep release notes short, one line per change, newest first please."),
    ("assistant", "Release notes now use one line per change, newest first, kept short."),
    ("user", "Our staging deploys go through the deploy-staging workflow, never by hand."),
    ("assistant", "I will use the deploy-staging workflow for every staging deploy."),
    ("user", "Run the integration suite with make it, the unit suite alone misses the API."),
    ("assistant", "Ran make it: all 212 integration tests pass against the local API."),
    ("user", "Prefer small commits that each say why, not what; squash fixups first."),
    ("assistant", "Split the work into three commits that each explain the reason."),
    ("user", "The CDN caches for ten minutes, so purge it after each asset release."),
    ("assistant", "Added a CDN purge step right after the asset release job finishes."),
    ("user", "Docs live in docs/ as Markdown; the wiki is read-only and out of date."),
    ("assistant", "Moved the new page into docs/ and left the old wiki untouched."),
    ("user", "Use the shared logger from lib/log, never print, in server code."),
    ("assistant", "Replaced the print calls in the server with the shared logger."),
    ("user", "Database fixtures belong in tests/fixtures, one file per table, as JSON."),
    ("assistant", "Moved the fixtures into tests/fixtures with one JSON file per table."),
]
"""A made-up conversation of about 2 KB of text (never corpus text)."""


def _setup_consolidation(cli: CliRunner, workspace: Path) -> tuple[str, str]:
    """An agent with memory and conversation logging on, and an enabled session-close
    invoker of the shipped memory-consolidation blueprint with the builtin curator."""
    for args in (("settings", "set", "agent_memory.enabled", "true"),
                 ("settings", "set", "conversation_logging.enabled", "true"),
                 ("agent", "add", "ada", "--provider", "claude", "--workspace", str(workspace)),
                 ("agent", "models", "--provider", "builtin", "--refresh")):
        result = invoke(cli, *args)
        assert result.exit_code == 0, result.output
    added = invoke(cli, "automation", "session-close", "add", "--blueprint",
                   "memory-consolidation", "--name", "c", "--agent", "ada", "--boundary",
                   "clear", "--require-archive", "--assignments", json.dumps(BUILTIN))
    assert added.exit_code == 0, added.output
    invoker_id = added.stdout.split()[0]
    assert invoke(cli, "automation", "session-close", "enable", invoker_id).exit_code == 0
    agent_id = json.loads(invoke(cli, "agent", "show", "ada", "--json").stdout)["id"]
    return agent_id, invoker_id


def _stored_bytes(store: RunStore, run_id: str) -> dict[str, int]:
    """Step id -> characters stored for its inputs (with references) and outputs."""
    rows = store.conn.execute(
        "SELECT step_id, input, input_refs, output FROM step_attempts WHERE run_id = ?",
        (run_id,)).fetchall()
    return {r["step_id"]: sum(len(r[c] or "") for c in ("input", "input_refs", "output"))
            for r in rows}


def test_a_consolidation_run_stores_the_conversation_once(
        cli: CliRunner, tmp_path: Path, backend: str) -> None:
    from wardian.invokers.drain import drain_once
    from wardian.runtime.session_events import record_session_close

    agent_id, invoker_id = _setup_consolidation(cli, tmp_path)
    transcript = write_claude_session(tmp_path / "session.jsonl", "s-store", TURNS)
    assert 1800 <= sum(len(text) for _, text in TURNS) <= 2200
    record_session_close(agent_id, "clear", session_id="s-1", transcript_path=str(transcript),
                         provider="claude", start_drain=False)
    report = drain_once()
    assert report.executed == 1 and not report.errors, report
    store = RunStore(open_state_db(), recover=False)
    (run,) = store.list(invoker_id=invoker_id)
    assert run.status == "succeeded", run.error
    steps = {a.step_id: a for a in store.attempts(run.id)}

    # The conversation as the archive holds it (what archive.load returns).
    from wardian.runtime.archives import ArchiveStore

    messages = [m.to_json() for m in ArchiveStore(open_state_db()).slice(agent_id)]
    assert steps["archive"].output["messages"] == messages
    assert steps["archive"].output["text"] == "\n".join(m["text"] for m in messages)
    conversation = len(json.dumps(messages, ensure_ascii=False, sort_keys=True))
    stored = _stored_bytes(store, run.id)
    print(f"\nconversation {conversation} chars as archived; stored per step {stored}; "
          f"total {sum(stored.values())} = {sum(stored.values()) / conversation:.2f}x")
    # 1.28x: the curator's prompt (3.7 KB of instructions, then the conversation once, as
    # the model read it) and the commit's receipt; was 3.64x, then 2.51x with references.
    # Plus the curator role's description, stored once as the system text it was sent.
    # And the batch the curator answered, which the commit's receipt names again: its size
    # follows what the curator decided to save, not how the run stores the conversation.
    system = len(json.dumps(steps["curate"].input["system"], ensure_ascii=False))
    batch = len(json.dumps(steps["curate"].output, ensure_ascii=False))
    print(f"curator batch {batch} chars")
    assert sum(stored.values()) <= 1.3 * conversation + system + 2 * batch, stored
    assert sum(stored.values()) - 2 * batch <= 1.3 * conversation + system, stored
    # archive.load's row names the slice (seq range, digest), not its messages or text
    raw_archive = json.loads(store.conn.execute(
        "SELECT output FROM step_attempts WHERE run_id = ? AND step_id = 'archive'",
        (run.id,)).fetchone()[0])
    assert "messages" not in raw_archive and "text" not in raw_archive
    assert raw_archive["messages_digest"].startswith("sha256:")
    assert (raw_archive["after_seq"], raw_archive["last_seq"]) == (None, len(TURNS))

    # The curator's payload is a reference, resolved on read; the commit's batch is a
    # step reference declared in the blueprint: its input holds the step id, no copy.
    curate, commit = steps["curate"], steps["commit"]
    assert curate.input["payload"]["messages"] == messages
    assert commit.input["with"] == {"batch_step": "curate", "archive_step": "archive"}
    assert {r.source() for r in curate.input_refs} >= {"steps.archive.output.messages"}
    assert commit.input_refs == []
    raw = store.conn.execute(
        "SELECT input FROM step_attempts WHERE run_id = ? AND step_id = 'curate'",
        (run.id,)).fetchone()[0]
    assert json.loads(raw)["payload"]["messages"] is None

    # `run show --json` (what the web page reads too) shows every input and output.
    shown = invoke(cli, "automation", "run", "show", run.id, "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    by_step = {a["step_id"]: a for a in doc["attempts"]}
    assert by_step["curate"]["input"]["payload"]["messages"] == messages
    assert by_step["commit"]["input"]["with"] == {"batch_step": "curate", "archive_step": "archive"}
    for step_id in ("archive", "snapshot", "curate", "commit"):
        assert by_step[step_id]["input"] == steps[step_id].input
        assert by_step[step_id]["output"] == steps[step_id].output
    assert by_step["commit"]["input_refs"] == []

    # An archive that no longer reads as loaded (a hand-edited database) reads as a note.
    archives = ArchiveStore(open_state_db())
    with archives.db.atomic():
        archives.conn.execute("UPDATE archive_messages SET text = 'edited' WHERE agent_id = ?"
                              " AND seq = 1", (agent_id,))
    after = {a.step_id: a for a in RunStore(open_state_db(), recover=False).attempts(run.id)}
    note = after["archive"].output["messages"]
    assert note.startswith("<missing: messages 1..26 of agent ") and after[
        "archive"].output["text"] == note
    assert after["curate"].input["payload"]["messages"] == note


BLUEPRINT = """\
blueprint: {id: by-ref, name: By reference, version: 1}
triggers: [manual]
steps:
  - id: make
    action: t.make
  - id: use
    action: t.use
    retry: {attempts: 1}
    with:
      rows: "{{ steps.make.output.rows }}"
      first: "{{ steps.make.output.rows[0] }}"
      note: "{{ steps.make.output.note }}"
      label: "{{ steps.make.output.label }}"
      count: "{{ steps.make.output.rows | length }}"
"""


def _make(ctx: Any) -> dict[str, Any]:
    return {"rows": [{"n": i, "text": f"row number {i} " * 8} for i in range(20)],
            "note": "a long note that is worth storing once " * 5, "label": "short"}


def test_a_resumed_run_refers_to_the_output_of_the_first_process(tmp_path: Path,
                                                                  backend: str) -> None:
    calls: list[dict[str, Any]] = []

    def use(ctx: Any, **args: Any) -> dict[str, int]:
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("the first try fails")
        return {"rows": len(args["rows"])}

    store = RunStore(open_state_db())
    with actions(**{"t.make": _make, "t.use": use}):
        run = create_run(store, write_blueprint(tmp_path / "bp", BLUEPRINT))
        assert execute_run(run.id, store=store).status == "failed"
        # a new store, as after a restart: the context comes back from the stored rows
        final = resume_run(run.id, store=RunStore(open_state_db()))
    assert final.status == "succeeded", final.error
    made = _make(None)
    expected = {"rows": made["rows"], "first": made["rows"][0], "note": made["note"],
                "label": "short", "count": 20}
    assert calls == [expected, expected]
    uses = [a for a in final.attempts if a.step_id == "use"]
    assert [a.attempt for a in uses] == [1, 2]
    for attempt in uses:
        assert attempt.input == {"action": "t.use", "with": expected}
        # the short label and the computed count are stored as they are; the rows and the
        # note refer to attempt 1 of `make`, in both the first and the resumed process
        assert sorted(r.source() for r in attempt.input_refs) == [
            "steps.make.output.note", "steps.make.output.rows"]
        assert {r.attempt for r in attempt.input_refs} == {1}
    rows = store.conn.execute(
        "SELECT input FROM step_attempts WHERE run_id = ? AND step_id = 'use'",
        (run.id,)).fetchall()
    for row in rows:
        assert json.loads(row[0])["with"] == {"rows": None, "first": made["rows"][0],
                                               "note": None, "label": "short", "count": 20}


def test_rows_stored_before_references_read_as_stored(tmp_path: Path) -> None:
    """A state.db from before the migration (inputs stored as full copies) is migrated and
    reads exactly as before."""
    path = tmp_path / "state.db"
    with StateDB.open(path) as db:
        db.require("runs", MIGRATIONS.sqlite[:2])
    conn = sqlite3.connect(path)
    rows = [{"n": 1, "text": "x" * 300}]
    copy: dict[str, Any] = {"action": "t.use", "with": {"rows": rows}}
    conn.execute(
        "INSERT INTO runs (id, blueprint_id, invocation, assignments, inputs, status,"
        " created_at) VALUES ('r1', 'old', '{}', '{}', '{}', 'succeeded', 't')")
    conn.execute(
        "INSERT INTO step_attempts (run_id, step_id, step_index, attempt, status, input,"
        " output, started_at) VALUES ('r1', 'make', 0, 1, 'succeeded', '{}', ?, 't'),"
        " ('r1', 'use', 1, 1, 'succeeded', ?, '{}', 't')",
        (json.dumps({"rows": rows}), json.dumps(copy)))
    conn.commit()
    conn.close()
    store = RunStore(StateDB.open(path), recover=False)
    attempts = {a.step_id: a for a in store.attempts("r1")}
    assert attempts["use"].input == copy and attempts["use"].input_refs == []
    assert attempts["use"].to_json()["input_refs"] == []


@pytest.mark.parametrize("target", ["missing-step", "missing-path"])
def test_a_dangling_reference_reads_as_a_note_not_an_error(tmp_path: Path,
                                                           target: str) -> None:
    from wardian.engine.runs import OutputRef

    store = RunStore(StateDB.open(tmp_path / "state.db"), recover=False)
    run, _ = store.create_run(blueprint_id="x", agent_id=None, assignments={}, inputs={},
                              invocation={"trigger": "manual", "payload": {}},
                              blueprint_hash="sha256:0", blueprint_path="/x.yaml",
                              secret_inputs=[])
    store.start_attempt(run.id, "a", 0, 1, {"with": {}})
    store.finish_attempt(run.id, "a", 1, "succeeded", output={"rows": [1, 2]})
    ref = OutputRef(("with", "rows"), "gone" if target == "missing-step" else "a", 1,
                    ("rows",) if target == "missing-step" else ("other",))
    store.start_attempt(run.id, "b", 1, 1, {"with": {"rows": None}}, [ref])
    (_, b) = store.attempts(run.id)
    assert b.input["with"]["rows"] == f"<missing: {ref.source()} (attempt 1)>"


KEPT_BLUEPRINT = """\
blueprint: {id: kept-elsewhere, name: Kept elsewhere, version: 1}
triggers: [manual]
steps:
  - id: load
    action: t.load
  - id: use
    action: t.use
    retry: {attempts: 1}
    with:
      rows: "{{ steps.load.output.rows }}"
"""


@contextmanager
def _kept_actions(kept: dict[str, list[str]], calls: list[Any]) -> Iterator[None]:
    """`t.load` returns rows of the made-up store `kept`, its short form names them by key;
    `t.use` fails its first call."""
    from wardian.engine.actions import OutputStorage, register_action, unregister_action

    def load(ctx: Any) -> dict[str, Any]:
        return {"key": "k", "rows": list(kept["k"])}

    def use(ctx: Any, **args: Any) -> dict[str, int]:
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("the first try fails")
        return {"rows": len(args["rows"])}

    def expand(stored: Any) -> Any:
        return stored if "rows" in stored else {**stored, "rows": list(kept[stored["key"]])}

    register_action("t.load", replace=True, storage=OutputStorage(
        shorten=lambda out: {"key": out["key"]}, expand=expand))(load)
    register_action("t.use", replace=True)(use)
    try:
        yield
    finally:
        unregister_action("t.load")
        unregister_action("t.use")


def test_an_output_kept_elsewhere_is_stored_short_and_read_whole(tmp_path: Path,
                                                                  backend: str) -> None:
    kept = {"k": [f"row {i} " * 12 for i in range(10)]}
    calls: list[Any] = []
    store = RunStore(open_state_db())
    with _kept_actions(kept, calls):
        run = create_run(store, write_blueprint(tmp_path / "bp", KEPT_BLUEPRINT))
        assert execute_run(run.id, store=store).status == "failed"
        final = resume_run(run.id, store=RunStore(open_state_db()))  # as after a restart
    assert final.status == "succeeded", final.error
    assert calls == [{"rows": kept["k"]}, {"rows": kept["k"]}]
    rows = dict(store.conn.execute(
        "SELECT step_id, output FROM step_attempts WHERE run_id = ? AND status = 'succeeded'",
        (run.id,)).fetchall())
    assert json.loads(rows["load"]) == {"key": "k"}
    load = next(a for a in final.attempts if a.step_id == "load")
    assert load.output == {"key": "k", "rows": kept["k"]}
    # the later step's input refers to the expanded output, in both processes
    for use in (a for a in final.attempts if a.step_id == "use"):
        assert use.input["with"]["rows"] == kept["k"]
        assert [r.source() for r in use.input_refs] == ["steps.load.output.rows"]


def test_an_output_whose_short_form_reads_back_otherwise_is_stored_whole(
        tmp_path: Path) -> None:
    """A short form that would not read back what the action returned (the store moved on
    between the two) is not kept: the whole output is, and an event says why."""
    kept = {"k": ["a row that is long enough to be worth a reference " * 3]}
    calls: list[Any] = []
    store = RunStore(open_state_db())
    with _kept_actions(kept, calls):
        run = create_run(store, write_blueprint(tmp_path / "bp", KEPT_BLUEPRINT))
        from wardian.engine import actions as registry

        storage = registry.output_storage("t.load")
        assert storage is not None
        registry.register_action("t.load", replace=True, storage=registry.OutputStorage(
            shorten=storage.shorten, expand=lambda s: {**s, "rows": ["something else"]}))(
            registry.get_action("t.load"))
        execute_run(run.id, store=store)
    (raw,) = store.conn.execute(
        "SELECT output FROM step_attempts WHERE run_id = ? AND step_id = 'load'",
        (run.id,)).fetchone()
    assert json.loads(raw) == {"key": "k", "rows": kept["k"]}
    kinds = [e["kind"] for e in store.events(run.id)]
    assert "step.output_stored_whole" in kinds
